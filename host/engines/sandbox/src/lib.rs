//! Kaizen's process sandbox: runs one session's programs inside an OS sandbox
//! on Linux. It knows nothing of wasm or the agent loop; the plugin host
//! builds a [`Policy`] from the operator's grant and calls [`Sandbox`].
//!
//! # What every process gets
//!
//! Each command, each shell call and each background job is its own sandbox:
//!
//! - **Namespaces**: new user (the caller's uid mapped to itself), PID, mount,
//!   IPC and UTS namespaces, and, unless the policy grants network, the
//!   session's empty network namespace: one per [`Sandbox`], made once and
//!   joined by each process, whose own user namespace is nested in the one
//!   that owns it (so its loopback stays down; see `shared_net.rs` for why
//!   sharing it gives calls nothing to meet in). Host processes are
//!   invisible and unkillable; a fresh `/proc` shows only the sandbox's own;
//!   the mount namespace holds the process's own root (below).
//! - **Landlock** (the best ABI the kernel offers): system directories
//!   (`/usr`, `/bin`, `/lib*`, `/etc`, `/opt`, …) and the policy's readable
//!   directories read-only; the policy's writable directories and the
//!   session's private temp directory read-write; `/dev/null`-like devices;
//!   the private `/proc`. Everything else — `$HOME`, `KAIZEN_HOME`, other
//!   users' files — is invisible. Without network TCP is denied as well (ABI
//!   4); abstract unix sockets and signals are scoped (ABI 6).
//! - **seccomp**: calls a tool never needs fail with `EPERM` (ptrace, mount,
//!   kernel modules, namespaces, keyrings, io_uring, …).
//! - **rlimits**: process count, file size, CPU time; no core files. The
//!   kernel exempts root from RLIMIT_NPROC, so when the host runs as root the
//!   process count is bounded by the PID namespace's own `pid_max`
//!   (`max_processes` + 300, Linux 6.14+) instead.
//! - **Capabilities** dropped, `no_new_privs` set.
//! - **Environment** built from an allow-list: `PATH`, `HOME` and `TMPDIR`
//!   (the private temp directory), `LANG`/`LC_ALL`, `TERM=dumb`,
//!   `SHELL=/bin/bash`, `USER`/`LOGNAME`, then the policy's and the command's
//!   variables. Nothing else of the host's environment — no provider keys.
//!
//! # Lifetime
//!
//! A session's processes are started by its *spawner*: Kaizen's own
//! binary started again, small and single-threaded, in the session's
//! control groups from the start (see `spawner/mod.rs` for why: forking the
//! large host, and joining the control groups, were most of what a command
//! cost). It carries nothing of the host's environment and runs no program
//! itself. When it cannot be started, the host starts processes itself,
//! the same way.
//!
//! The spawner keeps the sandbox *warm*: a resident process, forked from
//! it, holds the session's namespaces and its root, built once, and clones
//! each command into new namespaces nested in its own, as PID 1 of them,
//! with a fresh `/tmp`, `/dev/shm` and `/proc` (see `spawner/zygote.rs`).
//! The resident reaps its commands and reports their end; its death (with
//! the host's, or the spawner's) kills every command (parent-death signal,
//! and the end of its PID namespace).
//!
//! When that cannot be (no user, PID or mount namespace;
//! `KAIZEN_SANDBOX_COLD` set), every process builds its sandbox afresh:
//! between fork and exec an *intermediate* process creates the namespaces
//! and forks PID 1 of the new PID namespace, which locks itself down and
//! execs the program. The intermediate relays the exit status, kills the
//! namespace when its spawner (or the host) dies (a lifeline pipe), and its
//! own death kills PID 1 (parent-death signal), whose death kills every
//! process of the namespace. The spawner dies when the host does (its
//! socket's end of stream). So timeouts, [`Sandbox::kill_job`],
//! [`Sandbox::shutdown`], dropping the [`Sandbox`] and the death of the
//! host all end everything the session started.

//! # Shells
//!
//! [`Sandbox::shell_run`] runs a fresh bash per call; the working directory
//! and exported variables persist per shell name. Processes left running
//! with `&` end when the call returns (each call is its own PID namespace):
//! [`Sandbox::spawn`] is the way to keep something running.
//!
//! # Its own root
//!
//! With a mount namespace, each process gets a root of its own built from
//! the policy: the system directories read-only,
//! the granted directories at their own paths, a private bounded `/tmp`
//! and `/dev/shm`, its own `/proc`, and nothing else, so the host's named
//! unix sockets do not exist for it even where Landlock (before ABI 9)
//! does not check `connect(2)` on them. [`Policy::protect`] paths are bound
//! read-only over themselves; [`Policy::hide`] paths are covered.
//!
//! # Known limits
//!
//! Paths the policy protects are protected as they exist when the session
//! starts: a file created later under a protected name is not. Without a
//! mount namespace (degraded mode), only Landlock stands between a process
//! and the host's named sockets. Linux only; x86_64 and aarch64 (glibc).

#![cfg(target_os = "linux")]
#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod after_fork;
mod attached;
mod capture;
mod cgroup;
mod child;
mod containment;
mod env;
mod exec;
mod exports;
mod features;
mod jobs;
mod landlock_rules;
pub mod launcher;
mod lifeline;
mod plan;
mod refresh;
mod root;
mod sandbox;
mod seccomp;
mod shared_net;
mod shell;
mod spawner;
mod stale;
mod state_dir;
mod types;

pub use attached::Attached;
pub use containment::{Containment, Scope, Widening};
pub use env::PATH as SANDBOX_PATH;
pub use features::{Feature, FeatureSupport, SupportReport, cached as support, check};
pub use sandbox::Sandbox;
pub use types::{Command, JobOutput, JobState, Limits, Output, Policy, ProcessError};
