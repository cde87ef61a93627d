//! Limits one session's processes share: a control group per sandbox that
//! every command, shell call and background job joins, bounding how many
//! processes they run together (the `pids` controller) and how much memory
//! they use together (`memory`), so that three background fork bombs meet
//! one limit, not three.
//!
//! The group is made where this process may make one: under its own group
//! in cgroup v2 when the `pids` and `memory` controllers are delegated to
//! it, else in the v1 `pids` and `memory` hierarchies (a root host). Where
//! neither is possible the per-process limits still hold (a private
//! `pid_max`, `RLIMIT_DATA`), and [`SessionGroup::create`] says why.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const ROOT: &str = "/sys/fs/cgroup";

/// The groups of one sandbox; removed when dropped (once its processes are
/// gone).
#[derive(Debug)]
pub(crate) struct SessionGroup {
    /// The group directories (one for v2, one per hierarchy for v1).
    dirs: Vec<PathBuf>,
    /// Their `cgroup.procs`, which a process joins by writing `0`.
    procs: Vec<CString>,
    /// Where the kernel counts processes the memory limit killed.
    oom_events: Option<PathBuf>,
}

impl SessionGroup {
    /// Makes the groups with these limits (`max_processes` processes,
    /// `max_memory` bytes, for all of the session's processes together).
    pub fn create(max_processes: u64, max_memory: u64) -> Result<Self, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        let name = unique_name();
        let unified = Path::new(ROOT).join("cgroup.controllers").is_file();
        if let Some(path) = own
            .lines()
            .find_map(|line| line.strip_prefix("0::"))
            .filter(|_| unified)
        {
            let base = Path::new(ROOT).join(path.trim_start_matches('/'));
            let v2 = Self::create_v2(&base, &name, max_processes, max_memory);
            if v2.is_ok() || !has_v1_hierarchies(&own) {
                return v2;
            }
        }
        Self::create_v1(&own, &name, max_processes, max_memory)
    }

    fn create_v2(
        base: &Path,
        name: &str,
        max_processes: u64,
        max_memory: u64,
    ) -> Result<Self, String> {
        sweep(base);
        let dir = base.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let group = Self {
            procs: vec![c_path(&dir.join("cgroup.procs"))],
            oom_events: Some(dir.join("memory.events")),
            dirs: vec![dir.clone()],
        };
        let controllers =
            std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
        for needed in ["pids", "memory"] {
            if !controllers.split_whitespace().any(|c| c == needed) {
                return Err(format!(
                    "the {needed} controller is not delegated to {} (cgroup v2)",
                    base.display()
                ));
            }
        }
        write(&dir.join("pids.max"), max_processes)?;
        write(&dir.join("memory.max"), max_memory)?;
        // Swap would let the group go past its memory limit.
        let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        Ok(group)
    }

    fn create_v1(
        own: &str,
        name: &str,
        max_processes: u64,
        max_memory: u64,
    ) -> Result<Self, String> {
        let mut group = Self {
            dirs: Vec::new(),
            procs: Vec::new(),
            oom_events: None,
        };
        for controller in ["pids", "memory"] {
            let path = own
                .lines()
                .filter_map(|line| {
                    let mut parts = line.splitn(3, ':');
                    let _id = parts.next()?;
                    Some((parts.next()?, parts.next()?))
                })
                .find(|(controllers, _)| controllers.split(',').any(|c| c == controller))
                .map(|(_, path)| path)
                .ok_or_else(|| format!("no cgroup v1 {controller} hierarchy"))?;
            let parent = Path::new(ROOT)
                .join(controller)
                .join(path.trim_start_matches('/'));
            sweep(&parent);
            let dir = parent.join(name);
            std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
            group.procs.push(c_path(&dir.join("cgroup.procs")));
            group.dirs.push(dir.clone());
            if controller == "pids" {
                write(&dir.join("pids.max"), max_processes)?;
            } else {
                write(&dir.join("memory.limit_in_bytes"), max_memory)?;
                let _ = std::fs::write(
                    dir.join("memory.memsw.limit_in_bytes"),
                    max_memory.to_string(),
                );
                group.oom_events = Some(dir.join("memory.oom_control"));
            }
        }
        Ok(group)
    }

    /// The `cgroup.procs` files a process joins the groups through.
    pub fn procs(&self) -> &[CString] {
        &self.procs
    }

    /// How many processes the memory limit has killed so far.
    pub fn oom_kills(&self) -> u64 {
        let Some(path) = &self.oom_events else {
            return 0;
        };
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .find_map(|line| line.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for SessionGroup {
    fn drop(&mut self) {
        for dir in self.dirs.iter().rev() {
            // Killed processes leave the group a moment after they die.
            for _ in 0..50 {
                match std::fs::remove_dir(dir) {
                    Err(err) if err.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    _ => break,
                }
            }
        }
    }
}

/// Removes the groups in `parent` left by Kaizen processes that are gone
/// (killed before they could remove their own): a group with no process
/// left is removed, one still holding some stays.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("kaizen-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

fn has_v1_hierarchies(own: &str) -> bool {
    own.lines().any(|line| !line.starts_with("0::"))
}

fn unique_name() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "kaizen-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn write(path: &Path, value: u64) -> Result<(), String> {
    std::fs::write(path, value.to_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_else(|_| c"/nonexistent".into())
}
