//! The host's lifeline: a pipe whose write end only this process holds.
//!
//! Every intermediate process keeps the read end and polls it. When the host
//! dies, however it dies, the kernel closes the write end, the read end reports
//! hang-up, and each intermediate kills its namespace. One pipe serves every
//! [`crate::Sandbox`] of the process; it is never closed.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// `(read, write)`: both ends close-on-exec, so no program ever inherits them.
static LIFELINE: OnceLock<(OwnedFd, OwnedFd)> = OnceLock::new();

/// The read end, creating the pipe on first use.
pub(crate) fn read_end() -> io::Result<RawFd> {
    if let Some((read, _)) = LIFELINE.get() {
        return Ok(read.as_raw_fd());
    }
    let pair = pipe()?;
    // A racing thread may have won; its pipe is kept and ours dropped.
    let _ = LIFELINE.set(pair);
    Ok(LIFELINE.get().expect("lifeline was just set").0.as_raw_fd())
}

/// A pipe, `(read, write)`, both ends close-on-exec.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1; 2];
    // SAFETY: pipe2 fills the two-element array on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}
