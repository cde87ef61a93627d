//! Running a test in a network namespace of its own, where only its
//! loopback exists: for tests that drive programs which would otherwise
//! reach for the network (telemetry, update checks), with the servers they
//! talk to started inside too.

use std::process::Command;

/// Set in the copy of the test run inside the namespace.
const INSIDE: &str = "KAIZEN_TEST_IN_NETNS";

/// Runs the calling test, `test` (its full path, e.g.
/// `claude_code_runs_a_task`), again in a new network namespace with only
/// loopback, up. Returns true in that copy, which does the test's work,
/// and false in the outer run, once the copy has passed (it panics with
/// the copy's output when it failed).
///
/// Without the namespace (no `unshare`, or not allowed), the test fails
/// unless `log_dir`'s suite opts out of `netns` (see
/// [`crate::missing_feature`]); then it returns false and the test
/// returns without its subject.
#[track_caller]
pub fn isolated(log_dir: &str, test: &str) -> bool {
    if inside() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let ran = Command::new("unshare")
        .args(["--net", "--"])
        .arg(&exe)
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(INSIDE, "1")
        .output();
    let out = match ran {
        Ok(out) => out,
        Err(err) => {
            crate::missing_feature(log_dir, "netns", &format!("cannot run unshare: {err}"));
            return false;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.starts_with("unshare:") {
        crate::missing_feature(
            log_dir,
            "netns",
            &format!("unshare --net failed: {}", stderr.trim()),
        );
        return false;
    }
    assert!(
        out.status.success(),
        "the test failed in its network namespace:\n{stdout}\n{stderr}"
    );
    // The copy must have run this very test, not filtered it away.
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the copy in the namespace did not run {test}:\n{stdout}\n{stderr}"
    );
    false
}

/// Whether this is the copy inside the namespace; there, brings loopback
/// up first.
#[track_caller]
fn inside() -> bool {
    if std::env::var_os(INSIDE).is_none() {
        return false;
    }
    let up = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .output();
    match up {
        Ok(out) if out.status.success() => true,
        Ok(out) => panic!(
            "cannot bring loopback up in the namespace: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(err) => panic!("cannot run `ip` (iproute2) in the namespace: {err}"),
    }
}

/// Where a program that is its own harness (a bench, a test file with
/// `harness = false`) stands after [`program_isolated`].
#[derive(Debug)]
pub enum Isolation {
    /// This is the copy in the namespace, loopback up: do the work.
    Inside,
    /// The copy ran, and ended so.
    Ran(std::process::ExitStatus),
    /// No namespace could be made, and the suite opts out of `netns`.
    OptedOut,
}

/// For a program that is its own harness: in the copy of it inside a new
/// network namespace (only loopback, up), [`Isolation::Inside`];
/// elsewhere, runs that copy with the same arguments and says how it
/// ended. Without the namespace it fails unless `log_dir`'s suite opts
/// out of `netns` (see [`crate::missing_feature`]).
#[track_caller]
pub fn program_isolated(log_dir: &str) -> Isolation {
    if inside() {
        return Isolation::Inside;
    }
    let can = Command::new("unshare").args(["--net", "true"]).output();
    let why = match &can {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        Err(err) => Some(err.to_string()),
    };
    if let Some(why) = why {
        crate::missing_feature(log_dir, "netns", &format!("unshare --net failed: {why}"));
        return Isolation::OptedOut;
    }
    let status = Command::new("unshare")
        .args(["--net", "--"])
        .arg(std::env::current_exe().expect("the program's path"))
        .args(std::env::args_os().skip(1))
        .env(INSIDE, "1")
        .status()
        .unwrap_or_else(|err| panic!("cannot run unshare: {err}"));
    Isolation::Ran(status)
}
