//! Planners through the real `kaizen run` on the scripted model server:
//! the built-in `reflexion`, `plan-execute-verify` and `tree-of-thoughts`
//! shape the run with their extra model calls (each visible in what the
//! server got and counted in the result), revisions stay bounded, and a
//! planner that crashes is reported while the run goes on as plain ReAct.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{replies, stream_run};
use kaizen_model_server::{Recorded, Reply};
use serde_json::{Value, json};

/// What one run printed and what the server got.
struct Ran {
    lines: Vec<Value>,
    requests: Vec<Recorded>,
    stderr: String,
}

impl Ran {
    fn result(&self) -> &Value {
        let last = self.lines.last().expect("a result line");
        assert_eq!(last["type"], "result", "{last}");
        last
    }

    fn planner_events(&self) -> Vec<(String, String)> {
        self.lines
            .iter()
            .filter(|line| line["type"] == "planner")
            .map(|line| {
                (
                    line["stage"].as_str().unwrap().to_string(),
                    line["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

/// `kaizen run --planner PLANNER` with `config` as the user's config.
async fn run(planner: &str, config: &str, script: Vec<Reply>) -> Ran {
    let ran = stream_run(
        config,
        replies(script),
        &["--planner", planner, "Answer the question."],
    )
    .await;
    Ran {
        requests: ran.server.requests(),
        stderr: ran.stderr(),
        lines: ran.lines,
    }
}

/// The text of each message of a request (OpenAI wire), by role.
fn texts(request: &Recorded, role: &str) -> Vec<String> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn system(request: &Recorded) -> String {
    texts(request, "system").join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn reflexion_adds_a_critique_after_a_failed_step_only() {
    let replies = vec![
        Reply::tool(
            "Read",
            &json!({"file_path": "/nonexistent/notes.txt"}).to_string(),
        ),
        Reply::text("The file was missing: list the directory before reading."),
        Reply::text("There are no notes."),
    ];
    let ran = run("reflexion", "", replies).await;
    assert_eq!(ran.result()["status"], "complete", "{}", ran.stderr);
    assert_eq!(ran.requests.len(), 3, "{}", ran.stderr);
    // The critic's request: the failed call and its error.
    let critic = &ran.requests[1];
    assert!(system(critic).contains("failed"), "{}", system(critic));
    let asked = texts(critic, "user").join("\n");
    assert!(asked.contains("Read"), "{asked}");
    assert!(asked.contains("/nonexistent/notes.txt"), "{asked}");
    assert!(critic.body.get("tools").is_none());
    // The critique is in the next THINK's conversation.
    let next = texts(&ran.requests[2], "user").join("\n");
    assert!(
        next.contains("Reflection on the failed step")
            && next.contains("list the directory before reading"),
        "{next}"
    );
    assert_eq!(
        ran.planner_events(),
        [
            ("plan".into(), "shaped".into()),
            ("verify".into(), "accepted".into()),
        ]
    );
    // Two THINKs and the critique, all counted.
    assert_eq!(ran.result()["cycles_used"], 2);
    let completions: Vec<&Value> = ran
        .lines
        .iter()
        .filter(|line| line["type"] == "plugin_completion")
        .collect();
    assert_eq!(completions.len(), 1);
    assert_eq!(completions[0]["plugin"], "reflexion");
    assert_eq!(completions[0]["role"], "planner");
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_execute_verify_plans_into_the_todo_list_and_revises_within_its_bound() {
    let replies = vec![
        // The plan.
        Reply::text("1. Look at the question\n2. Answer it"),
        // THINK 1: an answer at once.
        Reply::text("42."),
        // The check: something is missing.
        Reply::text("REVISE\nThe question was not looked at."),
        // THINK 2, after the revision message.
        Reply::text("Having looked: 42."),
        // The check again: still not satisfied, but the bound is 1.
        Reply::text("REVISE\nStill not convinced."),
    ];
    let config = "[planner]\nmax-revisions = 1\n";
    let ran = run("plan-execute-verify", config, replies).await;
    assert_eq!(ran.result()["status"], "complete", "{}", ran.stderr);
    assert_eq!(ran.requests.len(), 5, "{}", ran.stderr);
    // The plan became the todo list, and THINK 1 was told the current step.
    let todos = ran
        .lines
        .iter()
        .find(|line| line["type"] == "todos")
        .expect("a todos event");
    assert_eq!(todos["todos"][0]["content"], "Look at the question");
    assert_eq!(todos["todos"][0]["status"], "in_progress");
    assert_eq!(todos["todos"][1]["content"], "Answer it");
    let think = system(&ran.requests[1]);
    assert!(
        think.contains("The current step: Look at the question"),
        "{think}"
    );
    // The checker saw the plan and the answer; its finding reached THINK 2.
    let check = texts(&ran.requests[2], "user").join("\n");
    assert!(
        check.contains("Answer it") && check.contains("42."),
        "{check}"
    );
    let revised = texts(&ran.requests[3], "user").join("\n");
    assert!(
        revised.contains("The question was not looked at."),
        "{revised}"
    );
    assert_eq!(
        ran.planner_events(),
        [
            ("plan".into(), "shaped".into()),
            ("verify".into(), "revise".into()),
            ("plan".into(), "shaped".into()),
            ("verify".into(), "bounded".into()),
        ]
    );
    assert_eq!(ran.result()["output"], "Having looked: 42.");
    assert_eq!(ran.result()["cycles_used"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn tree_of_thoughts_keeps_the_candidate_the_evaluator_scored_best() {
    let replies = vec![
        // Two candidates, asked for in one call (OpenAI's `n`).
        Reply::text("Candidate one.").with_usage(10, 3),
        Reply::text("Candidate two.").with_usage(10, 3),
        // The evaluator's scores, one call per candidate in order.
        Reply::text("3").with_usage(20, 1),
        Reply::text("9").with_usage(20, 1),
    ];
    let config = "[planners.tree-of-thoughts]\nbeam-width = 2\nmax-depth = 1\n";
    let ran = run("tree-of-thoughts", config, replies).await;
    assert_eq!(ran.result()["status"], "complete", "{}", ran.stderr);
    assert_eq!(ran.requests.len(), 3, "{}", ran.stderr);
    assert_eq!(ran.requests[0].body["n"], 2);
    // The second score (9) was for the candidate the third request showed.
    let scored = texts(&ran.requests[2], "user").join("\n");
    let best = ["Candidate one.", "Candidate two."]
        .into_iter()
        .find(|text| scored.contains(text))
        .unwrap_or_else(|| panic!("no candidate in {scored}"));
    assert_eq!(ran.result()["output"], best);
    assert_eq!(
        ran.planner_events(),
        [
            ("plan".into(), "shaped".into()),
            ("select".into(), "chosen".into()),
            ("verify".into(), "accepted".into()),
        ]
    );
    // One cycle; every call's tokens in the result.
    assert_eq!(ran.result()["cycles_used"], 1);
    assert_eq!(ran.result()["tokens_used"]["input"], 60);
    assert_eq!(ran.result()["tokens_used"]["output"], 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn self_consistency_in_python_keeps_the_action_most_candidates_agree_on() {
    // The built-in written in Python, built from the source the binary
    // carries on this first use.
    let replies = vec![
        // Three candidates in one call (OpenAI's `n`); two agree, their
        // arguments spelt differently.
        Reply::tool("Bash", &json!({"command": "echo one"}).to_string()).with_usage(10, 3),
        Reply::tool("Glob", r#"{"pattern": "*.md"}"#).with_usage(10, 3),
        Reply::tool("Glob", r#"{ "pattern":"*.md" }"#).with_usage(10, 3),
        // Past max-depth: one response.
        Reply::text("No notes here.").with_usage(20, 4),
    ];
    let config = "[planners.self-consistency]\nsamples = 3\nmax-depth = 1\n";
    let ran = run("self-consistency", config, replies).await;
    assert_eq!(ran.result()["status"], "complete", "{}", ran.stderr);
    assert_eq!(ran.requests.len(), 2, "{}", ran.stderr);
    assert_eq!(ran.requests[0].body["n"], 3);
    assert!(ran.requests[1].body.get("n").is_none());
    // The majority's call ran; the lone Bash call did not.
    let called: Vec<&str> = ran.requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .filter_map(|call| call["function"]["name"].as_str())
        .collect();
    assert_eq!(called, ["Glob"]);
    assert_eq!(ran.result()["output"], "No notes here.");
    let events = ran.planner_events();
    assert!(
        events.contains(&("select".into(), "chosen".into())),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|(_, outcome)| outcome == "failed"),
        "{events:?}"
    );
    // No evaluator calls: every token is a candidate's or the last step's.
    assert_eq!(ran.result()["tokens_used"]["input"], 50);
    assert_eq!(ran.result()["tokens_used"]["output"], 13);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashing_planner_is_reported_and_the_run_goes_on_without_it() {
    let planner = kaizen_test_artifacts::plugin_dir("crash-planner");
    let replies = vec![
        Reply::tool("Glob", &json!({"pattern": "*"}).to_string()),
        Reply::text("Nothing here."),
    ];
    let ran = run(planner.to_str().unwrap(), "", replies).await;
    assert_eq!(ran.result()["status"], "complete", "{}", ran.stderr);
    assert!(system(&ran.requests[0]).contains("CRASH-PLANNER-WAS-HERE"));
    assert!(!system(&ran.requests[1]).contains("CRASH-PLANNER-WAS-HERE"));
    assert_eq!(
        ran.planner_events(),
        [
            ("plan".into(), "shaped".into()),
            ("plan".into(), "failed".into()),
        ]
    );
    let failed = ran
        .lines
        .iter()
        .find(|line| line["type"] == "planner" && line["outcome"] == "failed")
        .unwrap();
    let detail = failed["detail"].as_str().unwrap();
    assert!(
        detail.contains("crash planner crashes on cycle 2"),
        "{detail}"
    );
    assert!(detail.contains("goes on without the planner"), "{detail}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_planner_is_a_usage_error_naming_the_planners() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let out = common::kaizen(
        home.path(),
        ws.path(),
        &["run", "--replay", "/dev/null", "--planner", "oracle", "x"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("there is no planner `oracle`"), "{err}");
    assert!(err.contains("plan-execute-verify"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planner_in_python_shapes_the_run() {
    let planner = kaizen_test_artifacts::plugin_dir("py-planner");
    let replies = vec![Reply::text(""), Reply::text("The answer, in words.")];
    let ran = run(planner.to_str().unwrap(), "", replies).await;
    assert_eq!(ran.result()["status"], "complete", "{}", ran.stderr);
    assert_eq!(ran.requests.len(), 2, "{}", ran.stderr);
    let first = system(&ran.requests[0]);
    assert!(
        first.contains(
            "PY-PLANNER: cycle 1, 1 message(s) so far. Stay on the task: Answer the question."
        ),
        "{first}"
    );
    assert!(system(&ran.requests[1]).contains("PY-PLANNER: cycle 2"));
    let sent_back = texts(&ran.requests[1], "user").join("\n");
    assert!(sent_back.contains("the answer was empty"), "{sent_back}");
    assert_eq!(ran.result()["output"], "The answer, in words.");
    assert_eq!(
        ran.planner_events(),
        [
            ("plan".into(), "shaped".into()),
            ("verify".into(), "revise".into()),
            ("plan".into(), "shaped".into()),
            ("verify".into(), "accepted".into()),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planners_calls_spend_the_runs_budget_and_its_share() {
    // The plan costs more than the run's budget: the first step runs, and
    // the run stops before the next.
    let replies = vec![
        Reply::text("1. Look around").with_usage(2_000_000, 100),
        Reply::tool("Glob", &json!({"pattern": "*"}).to_string()).with_usage(10, 5),
        Reply::text("Never asked."),
    ];
    let ran = stream_run(
        "",
        common::run::replies(replies),
        &[
            "--planner",
            "plan-execute-verify",
            "--budget-usd",
            "0.01",
            "Look.",
        ],
    )
    .await;
    let result = ran.lines.last().unwrap();
    assert_eq!(result["status"], "budget_exceeded", "{result}");
    assert_eq!(result["cycles_used"], 1);
    assert_eq!(ran.server.requests().len(), 2);
    assert!(result["cost_usd"].as_f64().unwrap() > 0.01, "{result}");

    // A spent share: the critique is refused, and the run goes on without
    // it.
    let replies = vec![
        Reply::tool("Read", &json!({"file_path": "/nonexistent"}).to_string()),
        Reply::text("Gone."),
    ];
    let config = "[plugin-llm.plugins.reflexion]\nbudget-share = 0.0\n";
    let ran = stream_run(
        config,
        common::run::replies(replies),
        &["--planner", "reflexion", "Read it."],
    )
    .await;
    assert_eq!(ran.lines.last().unwrap()["status"], "complete");
    assert_eq!(ran.server.requests().len(), 2);
    assert!(
        ran.lines
            .iter()
            .all(|line| line["type"] != "plugin_completion")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_session_goes_on_with_its_planner() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = replies(vec![Reply::text("Done."), Reply::text("More done.")]);
    let server = kaizen_model_server::ModelServer::start(script)
        .await
        .unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--model", "gpt-4o-mini", "--output-format", "events"];
        all.extend(args);
        let wire = kaizen_model_server::Wire::OpenAi;
        common::run::run_command(home.path(), ws.path(), Some((&server, wire)), &all)
            .output()
            .unwrap()
    };
    let planned = |out: &std::process::Output| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|line| line.contains(r#""type":"planner""#))
            .count()
    };
    let first = run(&["--planner", "react", "Do it."]);
    assert_eq!(
        planned(&first),
        1,
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // No --planner: the session's own.
    let resumed = run(&["--resume", "last", "And more."]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(planned(&resumed), 1);
    assert_eq!(server.requests().len(), 2);
}
