//! `kaizen eval` on the task set in `evals/tasks`, offline: each task's
//! `script.json` drives the scripted model server as a deterministic model
//! (the turn by the conversation's position; planners' own completions get
//! the script's `aside` reply), and every planner must pass every task's
//! check, each with the model calls its strategy adds.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use kaizen_model_server::{ModelServer, Options, Script};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PLANNERS: &[&str] = &[
    "none",
    "react",
    "reflexion",
    "plan-execute-verify",
    "tree-of-thoughts",
    "self-consistency",
];

fn tasks() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../evals/tasks");
    let mut tasks: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|dir| dir.join("task.toml").is_file())
        .collect();
    tasks.sort();
    tasks
}

/// `kaizen eval TASK --planner ... --json` with each of `planners`
/// against the task's scripted model: its rows by planner, and how many
/// answers the model gave (a request for `n` candidates gives `n`).
async fn eval(task: &Path, home: &Path, planners: &[&str]) -> (BTreeMap<String, Value>, usize) {
    let script: Script =
        serde_json::from_str(&std::fs::read_to_string(task.join("script.json")).unwrap()).unwrap();
    let options = Options {
        by_position: true,
        pace: None,
        ..Options::default()
    };
    let server = ModelServer::start_with(script, options).await.unwrap();
    let mut args = vec![
        "eval".to_string(),
        task.display().to_string(),
        "--json".into(),
        "--model".into(),
        "gpt-4o-mini".into(),
    ];
    for planner in planners {
        args.extend(["--planner".to_string(), planner.to_string()]);
    }
    // As `common::command` sets it up, without its `--cwd`: each run
    // works in a scratch copy of the task's workspace.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.args(&args)
        .env("KAIZEN_HOME", home)
        .env("KAIZEN_CACHE_DIR", common::cache_dir())
        .env("KAIZEN_TOOLCHAINS_DIR", common::toolchains_dir())
        .env("CLAUDE_CONFIG_DIR", home.join("no-claude-settings"))
        .env("OPENAI_API_KEY", common::run::KEY)
        .env("OPENAI_BASE_URL", server.openai_base_url())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OLLAMA_HOST");
    let output = tokio::process::Command::from(cmd).output().await.unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|row| row.get("task").is_some())
        .map(|row| (row["planner"].as_str().unwrap().to_string(), row))
        .collect();
    let answers = server
        .requests()
        .iter()
        .map(|request| request.body["n"].as_u64().unwrap_or(1) as usize)
        .sum();
    (rows, answers)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_planner_passes_every_scripted_task() {
    let tasks = tasks();
    assert!(tasks.len() >= 10, "{} tasks", tasks.len());
    // One home for all: the Python planner is built on its first use.
    let home = tempfile::tempdir().unwrap();
    for task in &tasks {
        let (rows, requests) = eval(task, home.path(), PLANNERS).await;
        let name = task.file_name().unwrap().to_string_lossy();
        for planner in PLANNERS {
            let row = &rows[*planner];
            assert_eq!(row["passed"], true, "{name} with {planner}: {row}");
            assert_eq!(row["status"], "complete", "{name} with {planner}: {row}");
        }
        // What each strategy adds to the plain loop's calls.
        let calls = |planner: &str| rows[planner]["model_calls"].as_u64().unwrap();
        let plain = calls("none");
        assert_eq!(plain, rows["none"]["cycles"].as_u64().unwrap(), "{name}");
        assert_eq!(calls("react"), plain, "{name}");
        // A plan, and one check of the final answer.
        assert_eq!(calls("plan-execute-verify"), plain + 2, "{name}");
        // Three candidates and three scores per step for the first three.
        let branching = plain.min(3);
        assert_eq!(calls("tree-of-thoughts"), plain + 5 * branching, "{name}");
        // Three samples per step for the first three, and no other call.
        assert_eq!(calls("self-consistency"), plain + 2 * branching, "{name}");
        // A critique only after a failed step.
        let critiques = u64::from(name == "failing-test");
        assert_eq!(calls("reflexion"), plain + critiques, "{name}");
        // The harness's count is the model's (candidates by OpenAI's `n`).
        let total: u64 = PLANNERS.iter().map(|p| calls(p)).sum();
        assert_eq!(total, requests as u64, "{name}");
    }
}

/// A task's check judges files the model wrote, so it runs in the OS
/// sandbox: the user's files, Kaizen's state, the provider's key and
/// anything outside the run's workspace are out of its reach.
#[tokio::test(flavor = "multi_thread")]
async fn a_check_cannot_reach_the_users_files_kaizens_state_or_the_key() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), "# the user's own\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let secret = elsewhere.path().join("id_ed25519");
    std::fs::write(&secret, "PRIVATE KEY").unwrap();
    let marker = elsewhere.path().join("written-by-check");
    let task = tempfile::tempdir().unwrap();
    let dir = task.path().join("hostile");
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    std::fs::write(dir.join("task.toml"), "instruction = \"Say done.\"\n").unwrap();
    let script = serde_json::json!({"turns": [{"reply": {"text": "Done."}}]});
    std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
    // Each reach that works fails the check; the check passes only when
    // every one of them is refused.
    let check = format!(
        "set -u\n\
         cat {secret:?} && exit 11\n\
         [ -n \"${{OPENAI_API_KEY:-}}\" ] && exit 12\n\
         touch {marker:?} && exit 13\n\
         cat {config:?} && exit 14\n\
         exit 0\n",
        config = home.path().join("config.toml"),
    );
    std::fs::write(dir.join("check.sh"), check).unwrap();
    let (rows, _) = eval(&dir, home.path(), &["none"]).await;
    assert_eq!(rows["none"]["status"], "complete", "{}", rows["none"]);
    assert_eq!(rows["none"]["passed"], true, "{}", rows["none"]);
    assert!(!marker.exists(), "the check wrote outside its workspace");
}
