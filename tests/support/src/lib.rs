//! What the test suites share: no test passes while silently skipping its
//! subject.
//!
//! A test that needs something of the machine (a kernel feature, a tool, root
//! for `ip netns`) calls [`missing_feature`] when it is not there. That fails
//! the test, naming the feature and why it is missing, unless the operator
//! opted out of the feature:
//!
//! - `KAIZEN_TEST_ALLOW_MISSING`: a comma-separated list of feature names
//!   (e.g. `netns,landlock`), or `all`. A test missing a listed feature
//!   passes without its subject, says so on stderr, and appends a line
//!   `<feature>: <why> (test <test name>)` to `opt-outs.log` in the test
//!   crate's `CARGO_TARGET_TMPDIR`, so that what went untested is on record
//!   after the run.
//!
//! The feature names the suites use: `netns` (a network namespace made with
//! `ip netns`, for a host to reach), and the sandbox's own `landlock`,
//! `user-namespace`, `pid-namespace`, `network-namespace`,
//! `mount-namespace`, `seccomp`, `rlimits` and `full-sandbox`.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

pub mod balancer;
mod cache;
pub mod netns;
pub mod npm;
pub mod python;
pub mod restate;

use std::io::Write;
use std::path::Path;

/// A process a test started, killed when the test lets go of it.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The variable listing the features a run may go without.
pub const ALLOW_MISSING: &str = "KAIZEN_TEST_ALLOW_MISSING";

/// The file, in the directory given to [`missing_feature`], recording every
/// opted-out test.
pub const OPT_OUTS_LOG: &str = "opt-outs.log";

/// Reports that `feature`, which the calling test needs, is missing, and
/// `why`: panics unless [`ALLOW_MISSING`] lists it, and otherwise records the
/// opt-out in `log_dir`/[`OPT_OUTS_LOG`] and returns, for the test to return
/// too.
///
/// `log_dir` is the test crate's `env!("CARGO_TARGET_TMPDIR")`, which only
/// exists when an integration test is compiled.
#[track_caller]
pub fn missing_feature(log_dir: &str, feature: &str, why: &str) {
    let log = Path::new(log_dir).join(OPT_OUTS_LOG);
    if !allowed(std::env::var(ALLOW_MISSING).ok().as_deref(), feature) {
        panic!(
            "{feature} is missing: {why}\nthis test needs it; to run without it, set \
             {ALLOW_MISSING}={feature} (a comma-separated list of features, or `all`), \
             and the opt-out is recorded in {}",
            log.display()
        );
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed thread>");
    let line = format!("{feature}: {why} (test {test})");
    // Straight to stderr, not through `eprintln!`, which the test harness
    // captures and shows only for failing tests.
    let _ = writeln!(
        std::io::stderr(),
        "{ALLOW_MISSING} opts out of {feature}, so this test passes without its subject: {line}"
    );
    // One write of a whole line: tests append concurrently, from several
    // processes, and O_APPEND keeps such lines whole.
    let appended = std::fs::create_dir_all(log_dir).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)?
            .write_all(format!("{}\n", line.replace('\n', " ")).as_bytes())
    });
    if let Err(err) = appended {
        // An opt-out that leaves no record would be a silent skip.
        panic!("could not record the opt-out in {}: {err}", log.display());
    }
}

/// Whether the value of [`ALLOW_MISSING`] lists `feature`.
fn allowed(list: Option<&str>, feature: &str) -> bool {
    list.unwrap_or_default()
        .split(',')
        .map(str::trim)
        .any(|name| name == "all" || name == feature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_features_or_all_are_allowed() {
        assert!(!allowed(None, "netns"));
        assert!(!allowed(Some(""), "netns"));
        assert!(!allowed(Some("netnsx,landlock"), "netns"));
        assert!(allowed(Some("landlock, netns"), "netns"));
        assert!(allowed(Some("all"), "seccomp"));
    }

    #[test]
    fn an_opt_out_is_logged_with_the_test_name() {
        let dir = std::env::temp_dir().join(format!("kaizen-test-support-{}", std::process::id()));
        // SAFETY: no other test of this crate reads or writes the environment.
        unsafe { std::env::set_var(ALLOW_MISSING, "other,netns") };
        missing_feature(dir.to_str().unwrap(), "netns", "ip failed:\npermission");
        let log = std::fs::read_to_string(dir.join(OPT_OUTS_LOG)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            log,
            "netns: ip failed: permission (test tests::an_opt_out_is_logged_with_the_test_name)\n"
        );
        let missing = std::panic::catch_unwind(|| missing_feature("/nonexistent", "seccomp", "no"));
        assert!(missing.is_err(), "an unlisted feature must fail the test");
    }
}
