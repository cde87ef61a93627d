//! The journal: every change a run makes is told as one entry, and
//! replaying the entries onto the state they started from gives back the
//! live state exactly; a resumed run answers calls that were cut off.

mod common;

use kaizen_llm::{Block, CompletionFuture, EventSink, Provider, Request, Response, Role, Usage};
use kaizen_loop::{Agent, AgentConfig, Entry, Journal, SessionState};
use kaizen_protocol::{CancellationToken, Silent, Status};
use kaizen_tools::{
    CallContext, Danger, FileRecord, Tool, ToolError, ToolErrorKind, ToolFuture, ToolOutput,
    ToolRegistry, ToolSpec,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Answers in order; hangs when the script runs out.
struct Scripted(Mutex<Vec<Response>>);

impl Scripted {
    fn new(mut replies: Vec<Response>) -> Self {
        replies.reverse();
        Self(Mutex::new(replies))
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete<'a>(&'a self, _: &'a Request, _: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let next = self.0.lock().unwrap().pop();
            match next {
                Some(reply) => Ok(reply),
                None => std::future::pending().await,
            }
        })
    }
}

fn reply(text: &str, calls: &[(&str, serde_json::Value)]) -> Response {
    let calls = calls.iter().enumerate();
    common::response(
        text,
        calls
            .map(|(i, (name, args))| (format!("c{i}_{text}"), name.to_string(), args.to_string()))
            .collect(),
    )
}

/// How a test interrupts a call while it runs: a call asked to wait for
/// the interrupt notifies `started` once it has noted its file, and goes on
/// only after `interrupt`.
#[derive(Clone, Default)]
struct Running {
    started: Arc<Notify>,
    interrupt: CancellationToken,
}

impl Running {
    /// Interrupts the run once a call has started.
    fn interrupt_once_started(&self) {
        let running = self.clone();
        tokio::spawn(async move {
            running.started.notified().await;
            running.interrupt.cancel();
        });
    }
}

/// Notes a file and sets the todos; fails when asked; when asked, waits
/// for the interrupt (see [`Running`]), and then sleeps when asked.
struct Noter(ToolSpec, Running);

impl Tool for Noter {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = input["path"].as_str().unwrap_or_default();
            ctx.history.keep(Path::new("/"), Path::new(path)).unwrap();
            ctx.notes.note_file(
                path,
                FileRecord {
                    hash: format!("h-{path}"),
                    mtime_ms: 1,
                },
            );
            ctx.notes.set_todos(vec![json!(path)]);
            if input["wait_for_interrupt"].as_bool() == Some(true) {
                self.1.started.notify_one();
                self.1.interrupt.cancelled().await;
            }
            if let Some(ms) = input["sleep_ms"].as_u64() {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            if input["fail"].as_bool() == Some(true) {
                return Err(ToolError::new(ToolErrorKind::Failed, "asked to fail"));
            }
            Ok(ToolOutput::text(format!("noted {path}")))
        })
    }
}

fn registry(running: &Running) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(std::sync::Arc::new(Noter(
            ToolSpec {
                name: "Note".into(),
                description: "notes".into(),
                input_schema: json!({"type": "object"}),
                danger: Danger::Safe,
                read_only: false,
            },
            running.clone(),
        )))
        .unwrap();
    registry
}

/// The entries, and the files kept with their steps.
#[derive(Default)]
struct Kept(Mutex<Vec<Entry>>, Mutex<Vec<(u32, PathBuf)>>);

impl Journal for Kept {
    fn keep_file(&self, step: u32, _root: &Path, path: &Path) -> Result<(), String> {
        self.1.lock().unwrap().push((step, path.to_path_buf()));
        Ok(())
    }

    fn record(&self, entry: &Entry, _: &SessionState) {
        // Through JSON, as a log on disk would keep it.
        let line = serde_json::to_string(entry).unwrap();
        self.0
            .lock()
            .unwrap()
            .push(serde_json::from_str(&line).unwrap());
    }
}

async fn resume(
    provider: &Scripted,
    state: &mut SessionState,
    task: Option<&str>,
    journal: &Arc<Kept>,
    running: &Running,
) -> kaizen_protocol::RunResult {
    let pricing = |_: &str, _: &Usage| 0.25;
    let tools = registry(running);
    let agent = Agent {
        provider,
        tools: &tools,
        pricing: &pricing,
        config: config(),
        observer: &Silent,
        journal: Some(journal.clone()),
        guard: std::sync::Arc::new(kaizen_loop::Guard::allow_all()),
    };
    agent.resume(state, task, &running.interrupt).await
}

/// Arguments for a call still running an hour after the interrupt: it is
/// cut when its grace ends.
fn slower_than_grace() -> serde_json::Value {
    json!({"path": "/x", "wait_for_interrupt": true, "sleep_ms": 3_600_000})
}

/// An interrupt gives running calls 300 ms to finish.
fn config() -> AgentConfig {
    let mut config = AgentConfig::new("m", std::env::temp_dir());
    config.interrupt_grace = Duration::from_millis(300);
    config
}

fn replay(entries: &[Entry]) -> SessionState {
    let mut state = SessionState::new("s", "m");
    for entry in entries {
        state.apply(entry);
    }
    state
}

#[tokio::test]
async fn replaying_the_entries_gives_back_the_live_state() {
    let provider = Scripted::new(vec![
        reply("one", &[("Note", json!({"path": "/a"}))]),
        reply(
            "two",
            &[
                ("Note", json!({"path": "/b", "fail": true})),
                ("Missing", json!({})),
            ],
        ),
        reply("done", &[]),
    ]);
    let journal = Arc::new(Kept::default());
    let mut state = SessionState::new("s", "m");
    let result = resume(
        &provider,
        &mut state,
        Some("task"),
        &journal,
        &Running::default(),
    )
    .await;
    assert_eq!(result.status, Status::Complete);
    let entries = journal.0.lock().unwrap().clone();
    let kinds: Vec<String> = entries
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "start", "user", "turn", "results", "turn", "results", "turn", "end"
        ]
    );
    assert_eq!(replay(&entries), state);
    assert_eq!(
        state.read_files.len(),
        2,
        "a failed call's notes are kept too"
    );
    assert_eq!(state.todos, [json!("/b")]);
    assert_eq!(state.cost_usd, 0.75);
    // Each file was kept before its step's call changed it.
    assert_eq!(
        *journal.1.lock().unwrap(),
        [(1, PathBuf::from("/a")), (2, PathBuf::from("/b"))]
    );
}

#[tokio::test]
async fn an_interrupt_lets_the_running_step_finish_within_its_grace() {
    // The call goes on for 150 ms after the interrupt: half its grace.
    let provider = Scripted::new(vec![reply(
        "busy",
        &[(
            "Note",
            json!({"path": "/y", "wait_for_interrupt": true, "sleep_ms": 150}),
        )],
    )]);
    let journal = Arc::new(Kept::default());
    let mut state = SessionState::new("s", "m");
    let running = Running::default();
    running.interrupt_once_started();
    let result = resume(&provider, &mut state, Some("task"), &journal, &running).await;
    assert_eq!(result.status, Status::Interrupted);
    assert_eq!(result.cycles_used, 1);
    assert!(state.unanswered_calls().is_empty(), "the step finished");
    assert_eq!(state.tool_calls.len(), 1);
    assert_eq!(replay(&journal.0.lock().unwrap()), state);
}

#[tokio::test]
async fn a_cut_step_is_logged_and_its_calls_are_answered_as_lost_on_resume() {
    let provider = Scripted::new(vec![reply("slow", &[("Note", slower_than_grace())])]);
    let journal = Arc::new(Kept::default());
    let mut state = SessionState::new("s", "m");
    let running = Running::default();
    running.interrupt_once_started();
    let result = resume(&provider, &mut state, Some("task"), &journal, &running).await;
    assert_eq!(result.status, Status::Interrupted);
    let entries = journal.0.lock().unwrap().clone();
    assert_eq!(replay(&entries), state);
    assert!(state.read_files.contains_key("/x"), "noted before the cut");
    assert_eq!(state.unanswered_calls().len(), 1);

    // Resume from the replayed state with a new task.
    let mut resumed = replay(&entries);
    let provider = Scripted::new(vec![reply("fine", &[])]);
    let again = Arc::new(Kept::default());
    let result = resume(
        &provider,
        &mut resumed,
        Some("and now this"),
        &again,
        &Running::default(),
    )
    .await;
    assert_eq!(result.status, Status::Complete);
    let opening = &resumed.messages[2];
    assert_eq!(opening.role, Role::User);
    match &opening.content[..] {
        [
            Block::ToolResult {
                tool_use_id,
                content,
                is_error: true,
            },
            Block::Text { text },
        ] => {
            assert_eq!(tool_use_id, "c0_slow");
            let Block::Text { text: lost } = &content[0] else {
                panic!("{content:?}")
            };
            assert!(lost.contains("cut off when the session stopped"), "{lost}");
            assert_eq!(text, "and now this");
        }
        other => panic!("{other:?}"),
    }
    assert!(resumed.unanswered_calls().is_empty());
    let mut whole = entries;
    whole.extend(again.0.lock().unwrap().iter().cloned());
    assert_eq!(replay(&whole), resumed);
}

mod recorded {
    //! The same runs kept by a `SessionRecorder` in a real store on disk.

    use super::*;
    use kaizen_loop::{CheckpointPolicy, SessionRecorder, restore, restore_at, rewind_log};
    use kaizen_session_store::{SessionMeta, SessionStore};

    fn session(store: &SessionStore, id: &str) {
        store
            .create(&SessionMeta::new(id, "task", "m", "/w"))
            .unwrap();
    }

    async fn run_recorded(
        replies: Vec<Response>,
        running: &Running,
    ) -> (tempfile::TempDir, SessionStore, SessionState) {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::open(dir.path()).unwrap();
        session(&store, "s");
        let mut state = SessionState::new("s", "m");
        let policy = CheckpointPolicy {
            every_cycles: 2,
            every: Duration::from_secs(3600),
        };
        let recorder =
            Arc::new(SessionRecorder::new(store.clone(), "s", 0, policy, &state).unwrap());
        let pricing = |_: &str, _: &Usage| 0.25;
        let tools = registry(running);
        let provider = Scripted::new(replies);
        let agent = Agent {
            provider: &provider,
            tools: &tools,
            pricing: &pricing,
            config: config(),
            observer: &Silent,
            journal: Some(recorder.clone()),
            guard: std::sync::Arc::new(kaizen_loop::Guard::allow_all()),
        };
        agent
            .resume(&mut state, Some("task"), &running.interrupt)
            .await;
        assert!(recorder.problems().is_empty(), "{:?}", recorder.problems());
        (dir, store, state)
    }

    fn five_cycles() -> Vec<Response> {
        let mut replies: Vec<Response> = (0..4)
            .map(|i| {
                reply(
                    &format!("step{i}"),
                    &[("Note", json!({"path": format!("/f{i}")}))],
                )
            })
            .collect();
        replies.push(reply("done", &[]));
        replies
    }

    #[tokio::test]
    async fn a_recorded_session_is_restored_exactly() {
        let (_dir, store, live) = run_recorded(five_cycles(), &Running::default()).await;
        let restored = restore(&store, "s").unwrap();
        assert_eq!(restored.state, live);
        assert!(restored.warnings.is_empty(), "{:?}", restored.warnings);
        // Checkpoints at cycles 2 and 4, and at the end; one still waiting
        // when a newer one comes is skipped (a busy disk, a loaded
        // machine), but the end's is always written.
        let steps: Vec<Option<u64>> = store
            .list_checkpoints("s")
            .unwrap()
            .iter()
            .map(|c| c.step)
            .collect();
        assert!((1..=3).contains(&steps.len()), "{steps:?}");
        let last = store
            .read_events::<serde_json::Value>("s")
            .unwrap()
            .events
            .len();
        assert_eq!(steps.last(), Some(&Some(last as u64)), "{steps:?}");
        let meta = store.meta("s").unwrap();
        assert_eq!((meta.status.as_str(), meta.cycles), ("complete", 5));
    }

    #[tokio::test]
    async fn a_session_rewound_to_an_entry_is_as_it_was_then() {
        let (_dir, store, _) = run_recorded(five_cycles(), &Running::default()).await;
        let then = restore_at(&store, "s", 2).unwrap();
        rewind_log(&store, "s", then.seq).unwrap();
        let events = store.read_events::<serde_json::Value>("s").unwrap().events;
        assert_eq!(events.len() as u64, then.seq);
        assert!(
            store
                .list_checkpoints("s")
                .unwrap()
                .iter()
                .all(|c| c.step.is_some_and(|step| step <= then.seq))
        );
        let now = restore(&store, "s").unwrap();
        assert_eq!((now.state, now.seq), (then.state, then.seq));
        // Back to nothing: a session made by a turn that is run again.
        rewind_log(&store, "s", 0).unwrap();
        assert!(
            store
                .read_events::<serde_json::Value>("s")
                .unwrap()
                .events
                .is_empty()
        );
        assert!(store.list_checkpoints("s").unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_damaged_newest_checkpoint_falls_back_to_an_older_one_and_the_log() {
        let (_dir, store, live) = run_recorded(five_cycles(), &Running::default()).await;
        let newest = store.list_checkpoints("s").unwrap().pop().unwrap().path;
        let mut bytes = std::fs::read(&newest).unwrap();
        let at = bytes.len() / 2 + 30;
        bytes[at] ^= 1;
        std::fs::write(&newest, bytes).unwrap();
        let restored = restore(&store, "s").unwrap();
        assert_eq!(
            restored.state, live,
            "the log makes up for the lost checkpoint"
        );
        assert_eq!(restored.warnings.len(), 1);
        assert!(
            restored.warnings[0].contains("checksum mismatch"),
            "{:?}",
            restored.warnings
        );
    }

    #[tokio::test]
    async fn a_fork_point_is_the_state_after_that_cycles_results() {
        let (_dir, store, live) = run_recorded(five_cycles(), &Running::default()).await;
        let at_three = restore_at(&store, "s", 3).unwrap().state;
        assert_eq!(at_three.cycles, 3);
        assert_eq!(at_three.tool_calls.len(), 3);
        assert_eq!(
            at_three.messages.len(),
            1 + 3 * 2,
            "task, then 3 turns with results"
        );
        assert_eq!(at_three.messages[..], live.messages[..7]);
        assert_eq!(at_three.read_files.len(), 3);
        let at_zero = restore_at(&store, "s", 0).unwrap().state;
        assert_eq!(at_zero.messages.len(), 1);
        let err = restore_at(&store, "s", 9).unwrap_err().to_string();
        assert!(err.contains("has no cycle 9"), "{err}");
    }

    #[tokio::test]
    async fn an_interrupted_run_is_checkpointed_with_its_cut_calls_unanswered() {
        let running = Running::default();
        running.interrupt_once_started();
        let replies = vec![reply("slow", &[("Note", slower_than_grace())])];
        let (_dir, store, live) = run_recorded(replies, &running).await;
        assert_eq!(live.status, Some(Status::Interrupted));
        let meta = store.meta("s").unwrap();
        assert_eq!(meta.status, "interrupted");
        // The end's checkpoint holds everything: nothing to replay.
        let restored = restore(&store, "s").unwrap();
        assert_eq!(restored.state, live);
        assert_eq!(restored.state.unanswered_calls().len(), 1);
    }
}
