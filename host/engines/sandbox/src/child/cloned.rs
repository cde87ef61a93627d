//! A command of the warm sandbox, cloned by its resident process (see
//! `spawner/zygote.rs`) straight into new user, PID, mount and IPC
//! namespaces: PID 1 of them from birth, with no intermediate process.
//!
//! Why no intermediate: it was there to relay the exit status and to tie
//! PID 1 to a parent that lives exactly as long as the command; the
//! resident is such a parent (single-threaded, its death kills every
//! namespace below it), and it reaps the command itself. One process fewer
//! to fork, run and reap per command.
//!
//! `clone(2)` is made raw, without `CLONE_VM`: the child has a copy of the
//! resident, as after `fork`, and makes system calls only (no allocation,
//! no locks), the same rules as [`super::enter`]; a failed step travels
//! back through a close-on-exec pipe as the raw OS error [`super::decode`]
//! reads, or as the `exec` errno.

use std::ffi::{CString, c_char};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;

use libc::{c_int, c_ulong};

use super::grandchild::lock_down;
use super::step::{Step, fail};
use super::write_id_maps;
use crate::exec::Spec;
use crate::plan::Plan;

/// A command's program, arguments and environment, made ready for
/// `execve` before the clone.
pub(crate) struct Program {
    /// Where the program may be, in order: the path itself when it has a
    /// `/`, else each directory of the command's `PATH` (as `execvp`
    /// searches, after the sandbox is in place).
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
}

impl Program {
    /// Prepares `spec`; fails on a NUL byte in any of its strings.
    pub(crate) fn new(spec: &Spec) -> io::Result<Program> {
        let c = |bytes: &[u8]| {
            CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
        };
        let path = spec
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map_or("/usr/local/bin:/usr/bin:/bin", |(_, v)| v.as_str());
        let candidates = if spec.program.contains('/') {
            vec![c(spec.program.as_bytes())?]
        } else if spec.program.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        } else {
            path.split(':')
                .map(|dir| if dir.is_empty() { "." } else { dir })
                .map(|dir| c(Path::new(dir).join(&spec.program).as_os_str().as_bytes()))
                .collect::<io::Result<_>>()?
        };
        Ok(Program {
            candidates,
            argv: std::iter::once(spec.program.as_str())
                .chain(spec.args.iter().map(String::as_str))
                .map(|a| c(a.as_bytes()))
                .collect::<io::Result<_>>()?,
            envp: spec
                .env
                .iter()
                .map(|(k, v)| c(format!("{k}={v}").as_bytes()))
                .collect::<io::Result<_>>()?,
            cwd: c(spec.cwd.as_os_str().as_bytes())?,
        })
    }
}

/// Starts `program` under `plan` with `stdio` as its standard streams;
/// returns its PID and pidfd once it runs (its `exec` succeeded).
/// `ruleset` is its Landlock ruleset, or -1.
pub(crate) fn start_cloned(
    plan: &Plan,
    ruleset: RawFd,
    program: &Program,
    stdio: [RawFd; 3],
) -> io::Result<(libc::pid_t, OwnedFd)> {
    let argv = pointers(&program.argv);
    let envp = pointers(&program.envp);
    // For a file without `#!`: `/bin/sh FILE ARGS`, as `execvp` does; the
    // file's place is filled in by the child.
    let mut sh_argv: Vec<*const c_char> = [c"/bin/sh".as_ptr(), ptr::null()]
        .into_iter()
        .chain(argv[1..].iter().copied())
        .collect();
    let (err_r, err_w) = crate::lifeline::pipe()?;
    // The namespaces the plan names (`Plan::for_warm_commands`).
    let flags = plan.unshare_flags | libc::CLONE_PIDFD;
    let mut pidfd: c_int = -1;
    // SAFETY: a fork-like clone (no CLONE_VM, no new stack) of a
    // single-threaded process; the child runs `child` only and never
    // returns.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as c_ulong,
            ptr::null_mut::<libc::c_void>(),
            &mut pidfd as *mut c_int,
            ptr::null_mut::<libc::c_void>(),
            ptr::null_mut::<libc::c_void>(),
        )
    } as libc::pid_t;
    if pid == 0 {
        // SAFETY: the freshly cloned child, as `child` requires.
        unsafe {
            child(
                plan,
                ruleset,
                program,
                &argv,
                &envp,
                &mut sh_argv,
                stdio,
                err_w.as_raw_fd(),
            )
        }
    }
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    drop(err_w);
    // SAFETY: the kernel put a new pidfd of the child here.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let mut code = [0u8; 4];
    let mut got = 0;
    while got < code.len() {
        // SAFETY: read into the rest of a buffer of ours.
        let n = unsafe {
            libc::read(
                err_r.as_raw_fd(),
                code[got..].as_mut_ptr().cast(),
                code.len() - got,
            )
        };
        if n > 0 {
            got += n as usize;
        } else if n == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    if got == 0 {
        return Ok((pid, pidfd));
    }
    let mut status = 0;
    // SAFETY: reaps our own child, which failed before its program ran.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    Err(io::Error::from_raw_os_error(if got == code.len() {
        i32::from_ne_bytes(code)
    } else {
        libc::EIO
    }))
}

/// The NULL-terminated array of pointers `execve` takes.
fn pointers(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(ptr::null()))
        .collect()
}

/// The cloned child: PID 1 of its namespaces. Maps its ids, takes its
/// streams, locks itself down as any PID 1 of the sandbox does, and execs.
/// Never returns.
#[allow(clippy::too_many_arguments)]
unsafe fn child(
    plan: &Plan,
    ruleset: RawFd,
    program: &Program,
    argv: &[*const c_char],
    envp: &[*const c_char],
    sh_argv: &mut [*const c_char],
    stdio: [RawFd; 3],
    err: RawFd,
) -> ! {
    // SAFETY: see the module docs: system calls on memory prepared before
    // the clone.
    unsafe {
        let report = |e: io::Error| -> ! {
            let code = e.raw_os_error().unwrap_or(libc::EIO).to_ne_bytes();
            libc::write(err, code.as_ptr().cast(), code.len());
            libc::_exit(127)
        };
        // The resident, single-threaded, is the parent that forked us: its
        // death ends us (and, PID 1 of its namespace, everything else).
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as c_ulong, 0, 0, 0) != 0 {
            report(fail(Step::DeathSignal));
        }
        if plan.user_ns
            && let Err(e) = write_id_maps(plan)
        {
            report(e);
        }
        for (target, fd) in stdio.into_iter().enumerate() {
            let target = target as c_int;
            let rc = if fd == target {
                libc::fcntl(fd, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, target)
            };
            if rc < 0 {
                report(io::Error::last_os_error());
            }
        }
        // Its own process group, as every sandboxed process (a timeout
        // kills the group).
        libc::setpgid(0, 0);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, ptr::null_mut());
        if let Err(e) = lock_down(plan, ruleset, &program.cwd) {
            report(e);
        }
        report(io::Error::from_raw_os_error(exec(
            program, argv, envp, sh_argv,
        )))
    }
}

/// Tries each candidate as `execvp` does; returns the errno to report.
unsafe fn exec(
    program: &Program,
    argv: &[*const c_char],
    envp: &[*const c_char],
    sh_argv: &mut [*const c_char],
) -> c_int {
    let mut denied = false;
    let mut last = libc::ENOENT;
    // SAFETY: execve with NULL-terminated arrays of live C strings.
    unsafe {
        for candidate in &program.candidates {
            libc::execve(candidate.as_ptr(), argv.as_ptr(), envp.as_ptr());
            last = crate::after_fork::errno();
            match last {
                libc::ENOEXEC => {
                    sh_argv[1] = candidate.as_ptr();
                    libc::execve(c"/bin/sh".as_ptr(), sh_argv.as_ptr(), envp.as_ptr());
                    return crate::after_fork::errno();
                }
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => return last,
            }
        }
    }
    if denied { libc::EACCES } else { last }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn candidates(program: &Program) -> Vec<&CStr> {
        program.candidates.iter().map(CString::as_c_str).collect()
    }

    fn spec(program: &str, path: Option<&str>) -> Spec {
        Spec {
            program: program.into(),
            args: vec!["-c".into(), "x".into()],
            cwd: "/w".into(),
            env: path
                .map(|p| vec![("PATH".to_string(), p.to_string())])
                .unwrap_or_default(),
            stdin: false,
        }
    }

    #[test]
    fn a_program_is_searched_on_the_commands_path() {
        let program = Program::new(&spec("bash", Some("/opt/b::/usr/bin"))).unwrap();
        assert_eq!(
            candidates(&program),
            [c"/opt/b/bash", c"./bash", c"/usr/bin/bash"]
        );
        let program = Program::new(&spec("./run.sh", Some("/usr/bin"))).unwrap();
        assert_eq!(candidates(&program), [c"./run.sh"]);
        assert!(Program::new(&spec("a\0b", None)).is_err());
        assert!(Program::new(&spec("", None)).is_err());
    }
}
