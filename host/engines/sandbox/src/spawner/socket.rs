//! The host–spawner channel: a `SOCK_SEQPACKET` unix socket pair, one
//! message per datagram, descriptors passed with `SCM_RIGHTS`.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// The most descriptors one message carries (a process's three standard
/// streams, or the session's two namespaces).
pub(crate) const MAX_FDS: usize = 4;

/// The largest message either side reads. The host sends larger requests
/// by the cold path instead (see [`send`]'s `EMSGSIZE`).
pub(crate) const MAX_MESSAGE: usize = 256 * 1024;

/// A connected pair, both ends close-on-exec.
pub(crate) fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1; 2];
    // SAFETY: socketpair fills the two-element array on success.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Whether `fd` is a `SOCK_SEQPACKET` socket.
pub(crate) fn is_seqpacket(fd: RawFd) -> bool {
    let mut kind: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `kind`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    rc == 0 && kind == libc::SOCK_SEQPACKET
}

/// Control-message space for [`MAX_FDS`] descriptors, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct Control([u8; 64]);

/// Sends `msg` with `fds` attached. Never raises SIGPIPE: a closed peer is
/// `EPIPE`.
pub(crate) fn send(sock: BorrowedFd<'_>, msg: &[u8], fds: &[RawFd]) -> io::Result<()> {
    assert!(fds.len() <= MAX_FDS, "at most {MAX_FDS} descriptors");
    let mut iov = libc::iovec {
        iov_base: msg.as_ptr() as *mut libc::c_void,
        iov_len: msg.len(),
    };
    let mut control = Control([0; 64]);
    // SAFETY: a zeroed msghdr is valid; the pointers set below outlive the
    // sendmsg call, and the CMSG macros stay within `control`.
    unsafe {
        let mut hdr: libc::msghdr = mem::zeroed();
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        if !fds.is_empty() {
            let bytes = mem::size_of_val(fds) as u32;
            hdr.msg_control = control.0.as_mut_ptr().cast();
            hdr.msg_controllen = libc::CMSG_SPACE(bytes) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&hdr);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(bytes) as usize;
            std::ptr::copy_nonoverlapping(
                fds.as_ptr().cast::<u8>(),
                libc::CMSG_DATA(cmsg),
                bytes as usize,
            );
        }
        loop {
            let n = libc::sendmsg(sock.as_raw_fd(), &hdr, libc::MSG_NOSIGNAL);
            if n >= 0 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }
}

/// A buffer for [`recv`], reused from message to message.
#[derive(Debug)]
pub(crate) struct Inbox {
    buf: Vec<u8>,
    len: usize,
}

impl Inbox {
    pub(crate) fn new() -> Inbox {
        Inbox {
            buf: vec![0; MAX_MESSAGE],
            len: 0,
        }
    }

    /// The last message received.
    pub(crate) fn message(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Receives one message into `inbox` with its descriptors (close-on-exec).
/// `None` at end of stream: the peer is gone.
pub(crate) fn recv(sock: BorrowedFd<'_>, inbox: &mut Inbox) -> io::Result<Option<Vec<OwnedFd>>> {
    inbox.len = 0;
    let buf = &mut inbox.buf;
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = Control([0; 64]);
    // SAFETY: as in `send`; every descriptor the kernel wrote into
    // `control` is taken into an OwnedFd exactly once.
    unsafe {
        let mut hdr: libc::msghdr = mem::zeroed();
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        hdr.msg_control = control.0.as_mut_ptr().cast();
        hdr.msg_controllen = control.0.len();
        let n = loop {
            let n = libc::recvmsg(sock.as_raw_fd(), &mut hdr, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 {
                break n as usize;
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        };
        let mut fds = Vec::new();
        let mut cmsg = libc::CMSG_FIRSTHDR(&hdr);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let count =
                    ((*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize) / mem::size_of::<RawFd>();
                for i in 0..count {
                    let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                    fds.push(OwnedFd::from_raw_fd(fd));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&hdr, cmsg);
        }
        inbox.len = n;
        if hdr.msg_flags & (libc::MSG_TRUNC | libc::MSG_CTRUNC) != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a spawner message was cut short",
            ));
        }
        if n == 0 && fds.is_empty() {
            return Ok(None);
        }
        Ok(Some(fds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn messages_keep_their_bounds_and_carry_descriptors() {
        let (a, b) = pair().unwrap();
        let (r, w) = {
            let mut p = [-1; 2];
            assert_eq!(unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
            unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) }
        };
        send(a.as_fd(), b"first", &[w.as_raw_fd()]).unwrap();
        send(a.as_fd(), b"second", &[]).unwrap();
        drop(w);
        let mut inbox = Inbox::new();
        let fds = recv(b.as_fd(), &mut inbox).unwrap().unwrap();
        assert_eq!(inbox.message(), b"first");
        assert_eq!(fds.len(), 1);
        // The passed write end works, and arrived close-on-exec.
        let flags = unsafe { libc::fcntl(fds[0].as_raw_fd(), libc::F_GETFD) };
        assert_ne!(flags & libc::FD_CLOEXEC, 0);
        assert_eq!(
            unsafe { libc::write(fds[0].as_raw_fd(), b"x".as_ptr().cast(), 1) },
            1
        );
        let mut byte = 0u8;
        assert_eq!(
            unsafe { libc::read(r.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) },
            1
        );
        assert_eq!(byte, b'x');

        let fds = recv(b.as_fd(), &mut inbox).unwrap().unwrap();
        assert_eq!((inbox.message(), fds.len()), (&b"second"[..], 0));
        assert!(is_seqpacket(a.as_raw_fd()));
        assert!(!is_seqpacket(r.as_raw_fd()));
        drop(a);
        assert!(
            recv(b.as_fd(), &mut inbox).unwrap().is_none(),
            "EOF once the peer is gone"
        );
    }
}
