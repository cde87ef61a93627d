//! The processes a child started, found through `/proc`: the agent CLIs
//! run each command in a session of its own, out of reach of a signal to
//! their process group, so stopping a runtime stops those one by one.

/// A process, known by its id and start time (ids are reused; a start
/// time tells the process apart from a later one with the same id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Process {
    pub pid: i32,
    start: u64,
}

/// The parent and start time in `/proc/PID/stat`: the fields after the
/// command name, whose parentheses may hold anything.
fn parent_and_start(stat: &str) -> Option<(i32, u64)> {
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // After the name: state (3rd field of the line), ppid (4th), ...,
    // starttime (22nd).
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

fn stat_of(pid: i32) -> Option<(i32, u64)> {
    parent_and_start(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every live descendant of `root`, children before their own children.
pub(crate) fn descendants(root: i32) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let all: Vec<(i32, i32, u64)> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| stat_of(pid).map(|(ppid, start)| (pid, ppid, start)))
        .collect();
    let mut found = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for &(pid, ppid, start) in &all {
            if ppid == parent {
                found.push(Process { pid, start });
                parents.push(pid);
            }
        }
    }
    found
}

/// Kills each of `processes` that is still the process it was, and what
/// it has started since it was found. Each is stopped before its children
/// are looked for, so that none starts another while the tree is walked.
pub(crate) fn kill_all(processes: &[Process]) {
    let mut known = processes.to_vec();
    let mut next = 0;
    while next < known.len() {
        let process = known[next];
        next += 1;
        if signal(process, libc::SIGSTOP) {
            for child in descendants(process.pid) {
                if !known.contains(&child) {
                    known.push(child);
                }
            }
        }
    }
    for process in &known {
        signal(*process, libc::SIGKILL);
    }
}

/// Sends `signal` to `process` if it is still the process it was; whether
/// it was.
fn signal(process: Process, signal: i32) -> bool {
    let same = stat_of(process.pid).is_some_and(|(_, start)| start == process.start);
    if same {
        // SAFETY: kill(2) on a process just checked to be the one found.
        unsafe { libc::kill(process.pid, signal) };
    }
    same
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "a test starts its own helper processes"
)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line =
            "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parent_and_start(line), Some((17, 987654)));
        assert_eq!(parent_and_start("garbage"), None);
    }

    /// The descendants of `child` once it has any.
    fn first_found(child: &std::process::Child) -> Vec<Process> {
        for _ in 0..200 {
            let found = descendants(child.id() as i32);
            if !found.is_empty() {
                return found;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("{} started nothing", child.id());
    }

    #[test]
    fn a_grandchild_in_its_own_session_is_found_and_killed() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 300 & wait"])
            .spawn()
            .unwrap();
        let tree = first_found(&child);
        assert_eq!(tree.len(), 1, "{tree:?}");
        kill_all(&tree);
        // `wait` in the shell returns once its child is killed.
        assert!(child.wait().is_ok());
        assert!(stat_of(tree[0].pid).is_none_or(|(_, start)| start != tree[0].start));
    }

    #[test]
    fn what_a_found_process_started_after_it_was_found_goes_too() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sh -c 'sleep 0.3; setsid sleep 301 & wait'; true"])
            .spawn()
            .unwrap();
        // Found while the inner shell has only its first child.
        let found = first_found(&child);
        std::thread::sleep(std::time::Duration::from_millis(600));
        let later = descendants(child.id() as i32);
        assert!(
            later.iter().any(|process| !found.contains(process)),
            "{found:?} {later:?}"
        );
        kill_all(&found);
        let _ = child.kill();
        assert!(child.wait().is_ok());
        std::thread::sleep(std::time::Duration::from_millis(100));
        for process in later {
            assert!(
                stat_of(process.pid).is_none_or(|(_, start)| start != process.start)
                    || std::fs::read_to_string(format!("/proc/{}/stat", process.pid))
                        .is_ok_and(|stat| stat.contains(") Z ")),
                "{process:?} is still running"
            );
        }
    }
}
