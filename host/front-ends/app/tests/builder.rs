//! The session builder in process, as an embedder uses it: a session built
//! from a request and collaborators given as values, run on a recorded
//! model, its events observed and its approvals answered by code, without
//! starting the `kaizen` command.

use kaizen_app::notices::{Notice, Notices};
use kaizen_app::permission_flags::PermissionArgs;
use kaizen_app::plugin_loading::Selection;
use kaizen_app::session_builder::{Collaborators, Ready, SessionBuilder, SessionRequest, Start};
use kaizen_protocol::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, Event, Observer, Status,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Keeps every event's type.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl Observer for Seen {
    fn on_event(&self, event: &Event) {
        let value = serde_json::to_value(event).unwrap();
        let kind = value["type"].as_str().unwrap_or_default().to_string();
        self.0.lock().unwrap().push(kind);
    }
}

/// Refuses every call it is asked about, and remembers which.
#[derive(Default)]
struct Refuses(Mutex<Vec<String>>);

impl Approver for Refuses {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        self.0.lock().unwrap().push(request.tool.clone());
        Box::pin(async { Approval::Deny("not from this program".into()) })
    }
}

/// A recorded model: a Glob call, a Write call (which the user's rules
/// say to ask about), then an answer.
fn replay(dir: &Path) -> PathBuf {
    let usage = r#""usage":{"input_tokens":10,"output_tokens":5,"cache_read_tokens":0,"cache_write_tokens":0}"#;
    let turns = [
        format!(
            r#"{{"content":[{{"type":"tool_use","id":"g1","name":"Glob","arguments":"{{\"pattern\":\"**/*.rs\"}}"}}],{usage},"stop_reason":"tool_use","model":"m"}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"tool_use","id":"w1","name":"Write","arguments":"{{\"file_path\":\"notes.txt\",\"content\":\"x\"}}"}}],{usage},"stop_reason":"tool_use","model":"m"}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"done"}}],{usage},"stop_reason":"end_turn","model":"m"}}"#
        ),
    ];
    let path = dir.join("replay.jsonl");
    std::fs::write(&path, turns.join("\n") + "\n").unwrap();
    path
}

#[tokio::test]
async fn an_embedder_builds_runs_watches_and_approves_a_session() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("kaizen-home");
    // The only test of this binary: nothing else reads the environment.
    unsafe { std::env::set_var("KAIZEN_HOME", &home) };
    // The user's own rule: writing files asks.
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        "[permissions]\nask = [\"Write\"]\n",
    )
    .unwrap();
    let workspace = tmp.path().join("ws");
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    std::fs::write(workspace.join("src/lib.rs"), "").unwrap();
    // The workspace would allow writing, but it is not trusted: its rule
    // is left out, and the embedder hears so.
    std::fs::write(
        workspace.join("kaizen.toml"),
        "[permissions]\nallow = [\"Write\"]\n",
    )
    .unwrap();
    let request = SessionRequest {
        selection: Selection {
            cwd: Some(workspace.clone()),
            ..Selection::default()
        },
        permissions: PermissionArgs::default(),
        model: None,
        provider: None,
        replay: Some(replay(tmp.path())),
        record: None,
        planner: None,
        max_cycles: 10,
        budget_usd: 1.0,
        timeout: None,
        start: Start::New {
            id: None,
            made_before: false,
            task: "tidy up".into(),
        },
        recall_for: None,
    };
    let approver = Arc::new(Refuses::default());
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    let collaborators = Collaborators {
        approver: Some(approver.clone()),
        notices: Notices::new(move |notice| sink.lock().unwrap().push(notice.clone())),
        ..Collaborators::nobody()
    };
    let Ready {
        session,
        mut state,
        config,
    } = match SessionBuilder::new(request, collaborators).build().await {
        Ok(ready) => ready,
        Err(failure) => panic!("{:#}", failure.error),
    };
    let seen = Seen::default();
    let agent = session.agent(config, &seen);
    let result = agent
        .run(&mut state, "tidy up", &CancellationToken::new())
        .await;
    assert!(session.end(&state.session_id).is_empty());
    assert_eq!(result.status, Status::Complete, "{result:?}");
    assert_eq!(result.output, "done");
    // Glob only reads, and ran; Write asked, and the embedder refused it.
    assert_eq!(*approver.0.lock().unwrap(), ["Write"]);
    let calls: Vec<(&str, &str)> = result
        .tool_calls
        .iter()
        .map(|call| (call.name.as_str(), call.status.as_str()))
        .collect();
    assert_eq!(calls, [("Glob", "success"), ("Write", "denied")]);
    assert!(!workspace.join("notes.txt").exists());
    let kinds = seen.0.lock().unwrap().clone();
    assert!(kinds.iter().any(|kind| kind == "tool_call"), "{kinds:?}");
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("result"),
        "{kinds:?}"
    );
    let heard = heard.lock().unwrap().clone();
    assert!(
        heard.iter().any(|notice| matches!(
            notice,
            Notice::Note(text) if text.contains("allow rules are not used") && text.contains("not trusted")
        )),
        "{heard:?}"
    );
    // The session was kept where `kaizen sessions` finds it.
    let store = kaizen_app::session::open_store().unwrap();
    assert!(store.meta(&state.session_id).is_ok());
}
