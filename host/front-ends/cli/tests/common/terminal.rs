//! `kaizen` on a pseudo-terminal, for the suites that answer its prompts.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Only a guard against hangs: nothing here should take more than seconds.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// `kaizen` running on a pseudo-terminal: the pty is its stdin, stdout and
/// stderr; the test types into the master side and reads what it shows.
pub struct Terminal {
    /// The `kaizen` process.
    pub child: Child,
    master: File,
    screen: Arc<(Mutex<Screen>, Condvar)>,
    /// How much of the output earlier `expect`s consumed.
    seen: usize,
}

#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    closed: bool,
}

impl Terminal {
    pub fn spawn(mut cmd: Command) -> Self {
        let (master, slave) = open_pty();
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let child = cmd.spawn().unwrap();
        // `cmd` still holds the slave's descriptors: drop them, or the
        // master never sees the end of output.
        drop(cmd);
        let screen = Arc::new((Mutex::new(Screen::default()), Condvar::new()));
        let mut reader = master.try_clone().unwrap();
        let shared = screen.clone();
        // Drained all along: a full pty buffer would block the child.
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                // EIO once every slave descriptor is closed.
                let n = reader.read(&mut buf).unwrap_or(0);
                let (lock, changed) = &*shared;
                let mut screen = lock.lock().unwrap();
                if n == 0 {
                    screen.closed = true;
                    changed.notify_all();
                    return;
                }
                screen.bytes.extend_from_slice(&buf[..n]);
                changed.notify_all();
            }
        });
        Self {
            child,
            master,
            screen,
            seen: 0,
        }
    }

    /// Waits until `needle` appears after what earlier calls consumed.
    pub fn expect(&mut self, needle: &str) {
        let deadline = Instant::now() + HANG_GUARD;
        let (lock, changed) = &*self.screen;
        let mut screen = lock.lock().unwrap();
        loop {
            let rest = &screen.bytes[self.seen..];
            if let Some(at) = rest
                .windows(needle.len())
                .position(|window| window == needle.as_bytes())
            {
                self.seen += at + needle.len();
                return;
            }
            let now = Instant::now();
            if screen.closed || now >= deadline {
                let shown = String::from_utf8_lossy(&screen.bytes).into_owned();
                drop(screen);
                let _ = self.child.kill();
                panic!("never saw {needle:?} on the terminal:\n{shown}");
            }
            screen = changed.wait_timeout(screen, deadline - now).unwrap().0;
        }
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.type_raw(format!("{line}\n").as_bytes());
    }

    pub fn type_raw(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits for the child to exit; its exit code.
    pub fn finish(&mut self) -> Option<i32> {
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("kaizen did not exit:\n{}", self.transcript());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything shown on the terminal so far.
    pub fn transcript(&self) -> String {
        String::from_utf8_lossy(&self.screen.0.lock().unwrap().bytes).into_owned()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A new pseudo-terminal: (master, slave).
fn open_pty() -> (File, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the out-pointers; the
    // name, termios and winsize arguments may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nobody else.
    unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}
