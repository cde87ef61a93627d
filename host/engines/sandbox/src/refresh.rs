//! What a command of the warm sandbox remakes of the root it shares.
//!
//! The warm sandbox builds the session's root once ([`crate::root`]) in its
//! resident process (see `spawner/zygote.rs`); each command starts in a copy
//! of that mount namespace. What must not carry from one command to the
//! next is remade in the copy: a fresh, size-bounded `/tmp` and `/dev/shm`,
//! and a `/proc` of the command's own PID namespace. The mounts that lived
//! under the old `/tmp` (the session's private directory, a workspace
//! granted under `/tmp`) are cloned first, with everything mounted inside
//! them (protected and hidden paths stay covered), and moved back onto the
//! fresh `/tmp`.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::root::RootStep;

/// The most mounts a refresh keeps: the clones wait in a fixed array of
/// the child, which may not allocate. A root with more is not served warm.
pub(crate) const MAX_KEPT: usize = 32;

/// The directories each command gets afresh, as the root made them.
const PRIVATE: [&str; 2] = ["/dev/shm", "/tmp"];

/// How a command remakes its copy of the root built by `steps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refresh {
    /// Mounts under the remade directories, outermost only: each is cloned
    /// (recursively) before, and moved back after, in this order.
    pub kept: Vec<CString>,
    /// The steps that remake the directories: their tmpfs, `/proc`, and the
    /// directories and files that the kept mounts and the links need.
    pub steps: Vec<RootStep>,
}

/// The refresh of the root built by `steps`; `None` when it keeps more
/// than [`MAX_KEPT`] mounts.
pub(crate) fn refresh(steps: &[RootStep]) -> Option<Refresh> {
    // A private directory that a grant covers (a grant of `/tmp` or `/`)
    // is the host's: there is nothing private to remake.
    let remade: Vec<&Path> = PRIVATE
        .iter()
        .map(Path::new)
        .filter(|dir| {
            steps
                .iter()
                .any(|s| matches!(s, RootStep::Tmpfs { to, .. } if path(to) == *dir))
                && !steps
                    .iter()
                    .any(|s| matches!(s, RootStep::Bind { to, .. } if dir.starts_with(path(to))))
        })
        .collect();
    let in_remade = |p: &Path| remade.iter().any(|dir| p.starts_with(dir) && p != *dir);
    let mut kept: Vec<CString> = Vec::new();
    for step in steps {
        if let RootStep::Bind { to, .. } = step {
            let to_path = path(to);
            if in_remade(to_path) && !kept.iter().any(|k| to_path.starts_with(path(k))) {
                kept.push(to.clone());
            }
        }
    }
    if kept.len() > MAX_KEPT {
        return None;
    }
    // Inside a kept mount everything comes with the clone.
    let outside_kept = |p: &Path| !kept.iter().any(|k| p.starts_with(path(k)) && p != path(k));
    let redo = |p: &Path| in_remade(p) && outside_kept(p);
    let steps = steps
        .iter()
        .filter(|step| match step {
            RootStep::Tmpfs { to, .. } => remade.contains(&path(to)),
            RootStep::Proc(_) => true,
            RootStep::Dir(to) | RootStep::File(to) => redo(path(to)),
            RootStep::Symlink { link, .. } => redo(path(link)),
            RootStep::Bind { .. } => false,
        })
        .cloned()
        .collect();
    Some(Refresh { kept, steps })
}

fn path(c: &CString) -> &Path {
    Path::new(OsStr::from_bytes(c.to_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::{self, RootSpec};
    use std::path::PathBuf;

    fn c(path: &str) -> CString {
        CString::new(path).unwrap()
    }

    fn spec(writable: Vec<PathBuf>) -> RootSpec {
        RootSpec {
            readable: Vec::new(),
            writable,
            protected: Vec::new(),
            hidden: Vec::new(),
            no_exec: Vec::new(),
            network: false,
            tmp_mib: 8,
            fallback_cwd: PathBuf::from("/"),
            home: None,
        }
    }

    #[test]
    fn grants_under_tmp_are_kept_and_their_insides_come_with_them() {
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path().canonicalize().unwrap();
        assert!(ws.starts_with("/tmp"), "the test needs a workspace in /tmp");
        std::fs::create_dir(ws.join("sub")).unwrap();
        std::fs::write(ws.join("secret"), "").unwrap();
        let mut spec = spec(vec![ws.clone(), ws.join("sub"), PathBuf::from("/var/tmp")]);
        spec.hidden = vec![ws.join("secret")];
        let refresh = refresh(&root::plan(&spec)).unwrap();
        assert_eq!(refresh.kept, vec![c(ws.to_str().unwrap())]);
        let tmp = RootStep::Tmpfs {
            to: c("/tmp"),
            data: c("mode=1777,size=8m"),
            read_only: false,
        };
        assert!(refresh.steps.contains(&tmp));
        assert!(refresh.steps.contains(&RootStep::Proc(c("/proc"))));
        assert!(
            refresh
                .steps
                .contains(&RootStep::Dir(c(ws.to_str().unwrap())))
        );
        // Nothing of the system directories, the devices, or what lies in
        // the kept tree.
        for step in &refresh.steps {
            let to = match step {
                RootStep::Dir(to) | RootStep::File(to) => to,
                RootStep::Tmpfs { to, .. } | RootStep::Proc(to) => to,
                other => panic!("unexpected step {other:?}"),
            };
            let to = path(to);
            assert!(
                to == Path::new("/proc") || to.starts_with("/tmp") || to.starts_with("/dev/shm"),
                "{to:?}"
            );
            assert!(!to.starts_with(ws.join("sub")) && to != ws.join("secret"));
        }
    }

    #[test]
    fn a_granted_tmp_is_the_hosts_and_is_not_remade() {
        let refresh = refresh(&root::plan(&spec(vec![PathBuf::from("/tmp")]))).unwrap();
        assert!(refresh.kept.is_empty());
        assert!(
            !refresh
                .steps
                .iter()
                .any(|s| matches!(s, RootStep::Tmpfs { to, .. } if to.as_c_str() == c"/tmp"))
        );
        assert!(
            refresh
                .steps
                .iter()
                .any(|s| matches!(s, RootStep::Tmpfs { to, .. } if to.as_c_str() == c"/dev/shm"))
        );
    }

    #[test]
    fn a_root_with_too_many_mounts_under_tmp_is_not_served_warm() {
        let dirs: Vec<_> = (0..=MAX_KEPT)
            .map(|_| tempfile::tempdir().unwrap())
            .collect();
        let writable = dirs.iter().map(|d| d.path().to_path_buf()).collect();
        assert!(refresh(&root::plan(&spec(writable))).is_none());
    }
}
