//! Measuring a `kaizen` process from the outside, shared by the benches:
//! wall time, CPU time and peak RSS from `wait4`, medians and units.

#![allow(dead_code)]

use std::process::Command;
use std::time::Duration;

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64)
}

/// User + system CPU time of `usage`.
pub fn cpu_of(usage: &libc::rusage) -> Duration {
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

/// This process's user + system CPU time so far.
pub fn self_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    cpu_of(&usage)
}

/// This process's `VmRSS` in KiB.
pub fn self_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A child's `ru_maxrss` counts the peak RSS of its parent at the child's
/// `exec` (the child execs from the parent's address space, whose high-water
/// mark the kernel records), so this process's own peak would show up as
/// kaizen's. Before each spawn: give freed memory back, and reset this
/// process's high-water mark to its current RSS (`clear_refs` 5). Returns
/// that RSS in KiB: a floor under the child's `ru_maxrss`, exact only for
/// peaks above it.
pub fn reset_peak_rss() -> u64 {
    // SAFETY: malloc_trim only returns free heap memory to the system.
    unsafe { libc::malloc_trim(0) };
    if let Err(err) = std::fs::write("/proc/self/clear_refs", "5") {
        eprintln!("cannot reset this process's peak RSS ({err}): kaizen's may read high");
    }
    self_rss_kib()
}

/// Reaps `pid`: its exit status and resource usage.
pub fn wait4(pid: libc::pid_t) -> (libc::c_int, libc::rusage) {
    let mut status: libc::c_int = 0;
    // SAFETY: wait4 writes into the zeroed struct and the int we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            return (status, usage);
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::Interrupted,
            "wait4({pid}): {err}"
        );
    }
}

/// True when a wait status says the process exited with 0.
pub fn exited_ok(status: libc::c_int) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// Starts `cmd`; its pid, for [`wait4`] to reap.
#[expect(
    clippy::zombie_processes,
    reason = "reaped by wait4, which also reports its resource usage; dropping a Child is a no-op"
)]
pub fn spawn(cmd: &mut Command) -> libc::pid_t {
    let child = cmd.spawn().expect("spawn kaizen");
    child.id() as libc::pid_t
}

/// The median of `values` (the upper one of an even count).
pub fn median<T: Copy + Ord>(values: impl Iterator<Item = T>) -> T {
    let mut values: Vec<T> = values.collect();
    values.sort_unstable();
    values[values.len() / 2]
}

/// The 1-, 5- and 15-minute load averages.
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `d` in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `kib` in MiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
