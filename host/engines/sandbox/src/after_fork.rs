//! System-call helpers for code that runs between `fork` and `exec` (the
//! child's steps, the session's network namespace being made): no
//! allocation, and `errno` kept for the error a failed step reports.

use std::ffi::CStr;
use std::io;

use libc::c_int;

/// The calling thread's `errno`.
pub(crate) fn errno() -> c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes `data` to the file at `path` in one `write`, keeping errno.
pub(crate) unsafe fn write_file(path: &CStr, data: &[u8]) -> bool {
    // SAFETY: plain syscalls on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let saved = errno();
        libc::close(fd);
        if n != data.len() as isize {
            *libc::__errno_location() = if n < 0 { saved } else { libc::EIO };
            return false;
        }
        true
    }
}
