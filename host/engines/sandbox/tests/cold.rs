//! The hostile suites again, with the warm sandbox switched off
//! (`KAIZEN_SANDBOX_COLD`): every process builds its namespaces and root
//! afresh, the way a sandbox works when no resident process can be made.
//! Both ways must hold every rule, so both are tried.

// Each suite brings its own `mod common`, as it does as a test of its own.
#![allow(clippy::duplicate_mod)]

mod common;

#[path = "between_calls.rs"]
mod between_calls;
#[path = "escape_fs.rs"]
mod escape_fs;
#[path = "escape_kernel.rs"]
mod escape_kernel;
#[path = "escape_root.rs"]
mod escape_root;
#[path = "shell.rs"]
mod shell;

/// Runs before `main`, while the process has one thread: the switch is
/// read by every `Sandbox::new`.
#[used]
#[unsafe(link_section = ".init_array")]
static COLD: extern "C" fn() = cold;

extern "C" fn cold() {
    // SAFETY: no other thread exists yet to read the environment.
    unsafe { std::env::set_var("KAIZEN_SANDBOX_COLD", "1") };
}

/// The switch took: a session's calls run under no resident process.
#[tokio::test]
async fn calls_run_under_no_resident_process() {
    let (_ws, sb) = common::sandbox();
    let marker = common::marker_sleep();
    let job = sb.spawn("bash", &format!("sleep {marker}")).await.unwrap();
    let pid = common::wait_present(&marker).await[0];
    // The command, its intermediate, the spawner, this test.
    let parent = |pid: i32| -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit(") ")
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(parent(parent(parent(pid))), std::process::id() as i32);
    sb.kill_job(&job).await.unwrap();
}
