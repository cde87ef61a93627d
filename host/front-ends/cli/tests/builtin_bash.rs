//! The built-in `Bash`, `BashOutput` and `KillShell` tools, called by a
//! scripted model through `kaizen run`: the real plugin, the real `process`
//! import, real processes in the real OS sandbox.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::workspace::Workspace;
use serde_json::{Value, json};
use std::path::PathBuf;

fn bash(command: &str) -> (&'static str, Value) {
    ("Bash", json!({ "command": command, "description": "test" }))
}

#[tokio::test(flavor = "multi_thread")]
async fn cd_and_export_persist_between_commands() {
    let ws = Workspace::new();
    std::fs::create_dir(ws.path("sub")).unwrap();
    let run = ws
        .scripted()
        .run(&[
            bash("cd sub && export GREETING=hello"),
            bash("pwd; echo \"$GREETING\""),
        ])
        .await;
    assert_eq!(run.results[0], "(no output)");
    assert_eq!(
        run.results[1],
        format!("{}\nhello", ws.path("sub").display())
    );
    assert_eq!(run.result["status"], "complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_codes_and_stderr_are_reported() {
    let ws = Workspace::new();
    let run = ws
        .scripted()
        .run(&[
            bash("echo out; echo err >&2; exit 3"),
            bash("true"),
            bash("definitely-not-a-command-xyz"),
            bash("if then fi"),
        ])
        .await;
    assert_eq!(run.results[0], "out\nerr\nExit code 3");
    assert_eq!(run.results[1], "(no output)");
    let missing = &run.results[2];
    assert!(missing.contains("command not found"), "{missing}");
    assert!(missing.ends_with("Exit code 127"), "{missing}");
    let broken = &run.results[3];
    assert!(broken.contains("syntax error"), "{broken}");
    assert!(broken.ends_with("Exit code 2"), "{broken}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_kills_the_whole_process_group_and_says_so() {
    let ws = Workspace::new();
    let marker = ws.path("late");
    let command = format!(
        "echo started; (sleep 2; touch {}) & sleep 30",
        marker.display()
    );
    let run = ws
        .scripted()
        .run(&[
            ("Bash", json!({ "command": command, "timeout": 300 })),
            // Long enough for the killed child to have touched the file.
            bash("sleep 3; echo next"),
        ])
        .await;
    assert!(
        run.results[0].starts_with("started\n"),
        "{}",
        run.results[0]
    );
    assert!(
        run.results[0].contains("Command timed out after 300 ms"),
        "{}",
        run.results[0]
    );
    assert_eq!(run.results[1], "next");
    assert!(
        !marker.exists(),
        "a child of the timed-out command lived on"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn timeouts_above_ten_minutes_are_refused_by_the_schema() {
    let ws = Workspace::new();
    let run = ws
        .scripted()
        .run(&[("Bash", json!({ "command": "true", "timeout": 600_001 }))])
        .await;
    assert!(run.results[0].contains("timeout"), "{}", run.results[0]);
    assert!(run.results[0].contains("600000"), "{}", run.results[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn output_is_cut_at_30000_characters_with_a_note() {
    let ws = Workspace::new();
    let run = ws
        .scripted()
        .run(&[bash("for i in $(seq 1 20000); do echo \"line $i\"; done")])
        .await;
    let text = &run.results[0];
    assert!(text.chars().count() <= 30_000);
    let (kept, note) = text.split_once("\n\n... [").expect("a cut note");
    assert_eq!(kept.chars().count(), 29_800);
    assert!(kept.starts_with("line 1\nline 2\n"));
    assert!(note.contains("more lines cut"), "{note}");
}

#[tokio::test(flavor = "multi_thread")]
async fn background_jobs_stream_output_and_can_be_killed() {
    let ws = Workspace::new();
    let (go, ready, ready2) = (ws.path("go"), ws.path("ready"), ws.path("ready2"));
    let script = format!(
        "echo first; touch {ready}; while [ ! -e {go} ]; do sleep 0.05; done; echo second; touch {ready2}; sleep 600",
        go = go.display(),
        ready = ready.display(),
        ready2 = ready2.display(),
    );
    let wait_for = |file: &PathBuf| {
        bash(&format!(
            "while [ ! -e {} ]; do sleep 0.05; done",
            file.display()
        ))
    };
    let run = ws
        .scripted()
        .run(&[
            (
                "Bash",
                json!({ "command": script, "run_in_background": true }),
            ),
            wait_for(&ready),
            ("BashOutput", json!({ "bash_id": "bash_1" })),
            bash(&format!("touch {}", go.display())),
            wait_for(&ready2),
            (
                "BashOutput",
                json!({ "bash_id": "bash_1", "filter": "sec" }),
            ),
            ("KillShell", json!({ "shell_id": "bash_1" })),
            ("BashOutput", json!({ "bash_id": "bash_1" })),
            ("KillShell", json!({ "shell_id": "bash_9" })),
            (
                "Bash",
                json!({ "command": "exit 4", "run_in_background": true }),
            ),
            bash("sleep 2"),
            ("BashOutput", json!({ "bash_id": "bash_2" })),
        ])
        .await;
    let r = &run.results;
    assert!(r[0].contains("ID: bash_1"), "{}", r[0]);
    assert_eq!(r[2], "Shell bash_1: running\nfirst");
    assert_eq!(r[5], "Shell bash_1: running\nsecond");
    assert_eq!(r[6], "Killed background shell bash_1.");
    assert_eq!(r[7], "Shell bash_1: killed\n(no new output)");
    assert!(r[8].contains("bash_9"), "{}", r[8]);
    assert!(r[8].contains("bash_1"), "the known ids are named: {}", r[8]);
    assert_eq!(
        r[11],
        "Shell bash_2: completed (exit code 4)\n(no new output)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_write_the_workspace_and_their_temp_dir_only() {
    let ws = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x");
    let run = ws
        .scripted()
        .run(&[
            bash("echo made > made.txt && cat made.txt"),
            bash("echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\""),
            bash(&format!("echo no > {}", target.display())),
        ])
        .await;
    assert_eq!(run.results[0], "made");
    assert_eq!(run.results[1], "tmp");
    assert!(run.results[2].contains("Exit code 1"), "{}", run.results[2]);
    assert!(!target.exists());
    assert_eq!(ws.read("made.txt"), "made\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_users_sandbox_config_adds_readable_directories() {
    let ws = Workspace::new();
    let toolchain = tempfile::tempdir().unwrap();
    let tool = toolchain.path().canonicalize().unwrap().join("tool.txt");
    std::fs::write(&tool, "toolchain file").unwrap();
    std::fs::write(
        ws.home.path().join("config.toml"),
        format!(
            "[sandbox]\nread = [\"{}\"]\n",
            toolchain.path().canonicalize().unwrap().display()
        ),
    )
    .unwrap();
    let run = ws
        .scripted()
        .run(&[
            bash(&format!("cat {}", tool.display())),
            bash(&format!("echo changed > {}", tool.display())),
        ])
        .await;
    assert_eq!(run.results[0], "toolchain file");
    // Bound read-only in the process's root (and Landlock says no too).
    assert!(
        run.results[1].contains("Read-only file system")
            || run.results[1].contains("Permission denied"),
        "{}",
        run.results[1]
    );
    assert_eq!(std::fs::read_to_string(&tool).unwrap(), "toolchain file");
}
