//! [`Containment`]: the one description of what a session's programs may
//! touch, from which every [`Policy`] is derived.
//!
//! Every program Kaizen starts for a session (a tool's command, a command
//! hook, an MCP server, a toolchain step, an evaluation's check) is
//! confined by a policy made here. The session's containment carries what
//! holds for all of them — Kaizen's own state hidden, configuration
//! read-only, the user's deny rules, the limits — and a caller says what it
//! reaches ([`Scope`]: its grant, or the session's directories) and what
//! it needs beyond that by name ([`Widening`]). A widening can add
//! directories and the network; nothing a caller passes can take away what
//! the containment hides or protects.

use crate::types::{Limits, Policy};
use std::path::PathBuf;

/// What every program of one session is confined by: the session's
/// directories and the rules that hold whatever runs.
#[derive(Debug, Clone, Default)]
pub struct Containment {
    /// The session's read-write directories: the workspace first, then
    /// read-write added directories.
    pub writable: Vec<PathBuf>,
    /// The session's read-only added directories.
    pub readable: Vec<PathBuf>,
    /// Directories every program may read besides the system directories
    /// (the operator's `[sandbox] read`: a toolchain under `$HOME`, say).
    pub also_readable: Vec<PathBuf>,
    /// Names that are configuration wherever they appear at the top of a
    /// writable directory (`kaizen.toml`, `.kaizen`, ...): programs may read
    /// them, never change them.
    pub protected_names: Vec<String>,
    /// Paths no program may see, even inside a granted directory: Kaizen's
    /// own state (`KAIZEN_HOME`, the compile cache and its key) and what the
    /// user's deny rules keep from being read.
    pub hidden: Vec<PathBuf>,
    /// Paths inside granted directories that programs may read but not
    /// change (what the user's deny rules keep from being edited).
    pub read_only: Vec<PathBuf>,
    /// Programs the user's deny rules refuse whatever their arguments
    /// (their real paths): they cannot run at all (see [`Policy::no_exec`]).
    pub no_exec: Vec<PathBuf>,
    /// Process count, file size, CPU, memory and output bounds.
    pub limits: Limits,
    /// Run with a kernel feature missing instead of refusing to run.
    pub allow_degraded: bool,
}

/// What one caller's programs reach before any widening: directories and
/// the network it was granted.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Directories its programs may read and write (the first is their
    /// default working directory).
    pub writable: Vec<PathBuf>,
    /// Directories its programs may only read.
    pub readable: Vec<PathBuf>,
    /// Whether its grant includes the network.
    pub network: bool,
    /// Variables its programs get over the safe set, already filtered by
    /// the caller (no provider key).
    pub env: Vec<(String, String)>,
}

/// A named reach beyond a caller's [`Scope`]: each is listed, with who
/// uses it, in the project's security model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Widening {
    /// Command hooks read the user's own hook scripts (`~/.claude/hooks`,
    /// not the rest of that directory, which holds credentials).
    HookScripts(PathBuf),
    /// Command hooks reach the network: the user's `[hooks]
    /// command-network`, never a workspace's.
    HookNetwork,
    /// A toolchain step (installing or running a plugin kit's compiler or
    /// packager): it reads the toolchain's programs, writes its own
    /// directories, and reaches the package registries when `network`.
    Toolchain {
        /// The toolchains' install prefixes and the kit's files.
        reads: Vec<PathBuf>,
        /// Where it installs or builds.
        writes: Vec<PathBuf>,
        /// Whether it downloads (an install), or only builds.
        network: bool,
    },
}

impl Widening {
    /// Its name, as the security model lists it.
    pub fn name(&self) -> &'static str {
        match self {
            Widening::HookScripts(_) => "hook-scripts",
            Widening::HookNetwork => "hook-network",
            Widening::Toolchain { network: true, .. } => "toolchain-install",
            Widening::Toolchain { network: false, .. } => "toolchain-build",
        }
    }
}

impl Containment {
    /// The session's own directories, without the network: what a program
    /// run on the session's behalf reaches when nothing grants it more
    /// (command hooks, an evaluation's checks).
    pub fn session_scope(&self) -> Scope {
        Scope {
            writable: self.writable.clone(),
            readable: self.readable.clone(),
            network: false,
            env: Vec::new(),
        }
    }

    /// The policy for programs of `scope` with `widenings`: Kaizen's state
    /// and the deny rules' paths hidden, configuration at the top of each
    /// writable directory (as it exists now) and the read-only paths
    /// protected, the session's limits.
    pub fn policy(&self, scope: Scope, widenings: &[Widening]) -> Policy {
        let Scope {
            mut writable,
            mut readable,
            mut network,
            env,
        } = scope;
        readable.extend(self.also_readable.iter().cloned());
        for widening in widenings {
            match widening {
                Widening::HookScripts(dir) => readable.push(dir.clone()),
                Widening::HookNetwork => network = true,
                Widening::Toolchain {
                    reads,
                    writes,
                    network: download,
                } => {
                    readable.extend(reads.iter().cloned());
                    writable.extend(writes.iter().cloned());
                    network |= download;
                }
            }
        }
        readable.retain(|dir| dir.is_dir());
        writable.retain(|dir| dir.is_dir());
        let mut policy = Policy {
            writable,
            readable,
            network,
            env,
            protect: Vec::new(),
            hide: self.hidden.clone(),
            no_exec: self.no_exec.clone(),
            limits: self.limits,
            allow_degraded: self.allow_degraded,
        };
        self.protect_now(&mut policy);
        policy
    }

    /// Protects the configuration names where they exist now at the top
    /// of each of `policy`'s writable directories, and the read-only paths.
    pub fn protect_now(&self, policy: &mut Policy) {
        policy.protect = policy
            .writable
            .iter()
            .flat_map(|dir| self.protected_names.iter().map(move |name| dir.join(name)))
            .chain(self.read_only.iter().cloned())
            .filter(|path| path.symlink_metadata().is_ok())
            .collect();
    }

    /// True when programs would run with a sandbox layer missing (the
    /// operator allowed it and this machine lacks one).
    pub fn degraded(&self) -> bool {
        self.allow_degraded && !crate::features::cached().complete()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widenings_add_reach_and_nothing_removes_what_is_hidden_or_protected() {
        let ws = tempfile::tempdir().unwrap();
        let hooks = tempfile::tempdir().unwrap();
        let tools = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("kaizen.toml"), "").unwrap();
        let containment = Containment {
            writable: vec![ws.path().to_path_buf()],
            protected_names: vec!["kaizen.toml".into(), ".kaizen".into()],
            hidden: vec![ws.path().join("secret")],
            read_only: vec![ws.path().join("kaizen.toml")],
            ..Containment::default()
        };
        let policy = containment.policy(
            containment.session_scope(),
            &[
                Widening::HookScripts(hooks.path().to_path_buf()),
                Widening::HookNetwork,
                Widening::Toolchain {
                    reads: vec![tools.path().to_path_buf()],
                    writes: vec![],
                    network: false,
                },
            ],
        );
        assert!(policy.network);
        assert_eq!(policy.writable, [ws.path()]);
        assert_eq!(policy.readable, [hooks.path(), tools.path()]);
        assert_eq!(policy.hide, [ws.path().join("secret")]);
        // The protected name exists, `.kaizen` does not yet.
        assert!(policy.protect.contains(&ws.path().join("kaizen.toml")));
        assert!(!policy.protect.contains(&ws.path().join(".kaizen")));
        let bare = containment.policy(Scope::default(), &[]);
        assert!(!bare.network && bare.writable.is_empty());
        assert_eq!(bare.hide, policy.hide);
    }
}
