//! The run core in process, as every front end uses it: a request opened,
//! its task settled, the session built with collaborators given as
//! values, and its runs driven until no task is left, on a recorded
//! model, without starting the `kaizen` command.

use kaizen_app::notices::{Notice, Notices};
use kaizen_app::permission_flags::PermissionArgs;
use kaizen_app::plugin_loading::Selection;
use kaizen_app::run::{NextTasks, NoMoreTasks, Opened, RunRequest};
use kaizen_app::session::Choice;
use kaizen_app::session_builder::{Collaborators, SetupError};
use kaizen_loop::Inbox;
use kaizen_protocol::{CancellationToken, Event, Observer, RunResult, Status};
use std::collections::VecDeque;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// One `KAIZEN_HOME` for every test of this binary, set before any reads
/// the environment.
fn home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(|| {
        let home = tempfile::tempdir().unwrap();
        unsafe { std::env::set_var("KAIZEN_HOME", home.path()) };
        home
    })
    .path()
}

/// What went right, or a panic saying what went wrong.
fn ok<T>(done: Result<T, SetupError>) -> T {
    match done {
        Ok(value) => value,
        Err(failure) => panic!("{:#}", failure.error),
    }
}

/// A workspace of its own under the test's directory.
fn workspace(dir: &Path) -> PathBuf {
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    workspace
}

/// A recorded model that answers each call with the next of `answers`.
fn replay(dir: &Path, answers: &[&str]) -> PathBuf {
    let usage = r#""usage":{"input_tokens":10,"output_tokens":5,"cache_read_tokens":0,"cache_write_tokens":0}"#;
    let lines: Vec<String> = answers
        .iter()
        .map(|text| {
            format!(
                r#"{{"content":[{{"type":"text","text":"{text}"}}],{usage},"stop_reason":"end_turn","model":"m"}}"#
            )
        })
        .collect();
    let path = dir.join("replay.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A new session's request in `workspace` on the recording `replay`.
fn request(workspace: Option<PathBuf>, replay: PathBuf, session: Choice) -> RunRequest {
    RunRequest {
        model: None,
        provider: None,
        max_cycles: 10,
        budget_usd: 1.0,
        timeout: None,
        record: None,
        replay: Some(replay),
        selection: Selection {
            cwd: workspace,
            ..Selection::default()
        },
        planner: None,
        session,
        permissions: PermissionArgs::default(),
        hosted: None,
    }
}

/// Collaborators with nobody to answer, `inbox` for messages, and the
/// notices they hear kept in `heard`.
fn collaborators(inbox: Option<Inbox>, heard: &Arc<Mutex<Vec<Notice>>>) -> Collaborators<'static> {
    let sink = heard.clone();
    Collaborators {
        inbox,
        notices: Notices::new(move |notice| sink.lock().unwrap().push(notice.clone())),
        ..Collaborators::nobody()
    }
}

/// Keeps the output of every run's result event.
#[derive(Default)]
struct Results(Mutex<Vec<String>>);

impl Observer for Results {
    fn on_event(&self, event: &Event) {
        if let Event::Result(result) = event {
            self.0.lock().unwrap().push(result.output.clone());
        }
    }
}

/// An input like stream-json's: it leaves a message in the inbox when
/// the first run ends, and gives its own tasks between runs.
struct Input {
    runs: usize,
    inbox_after_first: Option<String>,
    next: VecDeque<String>,
}

impl NextTasks for Input {
    async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        inbox: Option<&Inbox>,
        _interrupt: &CancellationToken,
    ) -> RunResult {
        let result = run.await;
        self.runs += 1;
        if let (Some(message), Some(inbox)) = (self.inbox_after_first.take(), inbox) {
            inbox.send(message);
        }
        result
    }

    async fn next(&mut self) -> Option<String> {
        self.next.pop_front()
    }
}

/// The text of every user message of session `id`, as its log keeps it.
fn user_messages(id: &str) -> Vec<String> {
    let store = kaizen_app::session::open_store().unwrap();
    let state = kaizen_loop::restore(&store, id).unwrap().state;
    state
        .messages
        .iter()
        .map(|message| serde_json::to_value(message).unwrap())
        .filter(|message| message["role"] == "user")
        .map(|message| message.to_string())
        .collect()
}

/// A new session runs its task, then what waits in the inbox, then the
/// input's next task, and ends when no task is left.
async fn three_runs(dir: &Path) -> String {
    let workspace = workspace(dir);
    let replay = replay(dir, &["first", "second", "third"]);
    let opened = ok(Opened::open(request(Some(workspace), replay, Choice::New)));
    assert!(opened.continued().is_none());
    let refused = opened.task(Some("  ".into())).unwrap_err();
    assert_eq!(refused.code, 2);
    assert!(refused.error.to_string().contains("the task is empty"));
    let task = ok(opened.task(Some("count the files".into())));
    assert_eq!(task.as_deref(), Some("count the files"));
    let heard = Arc::new(Mutex::new(Vec::new()));
    let with = collaborators(Some(Inbox::default()), &heard);
    let built = ok(opened.build(task, with).await);
    let id = built.session_id().to_string();
    let mut input = Input {
        runs: 0,
        inbox_after_first: Some("and the directories".into()),
        next: VecDeque::from(["now sum them".to_string()]),
    };
    let results = Results::default();
    let result = built
        .run(&results, &mut input, &CancellationToken::new())
        .await;
    assert_eq!(result.status, Status::Complete, "{result:?}");
    assert_eq!(result.output, "third");
    assert_eq!(result.session_id, id);
    assert_eq!(input.runs, 3);
    assert_eq!(*results.0.lock().unwrap(), ["first", "second", "third"]);
    let said = user_messages(&id);
    assert_eq!(said.len(), 3, "{said:?}");
    for (message, task) in
        said.iter()
            .zip(["count the files", "and the directories", "now sum them"])
    {
        assert!(message.contains(task), "{message} lacks {task}");
    }
    id
}

#[tokio::test]
async fn a_session_runs_each_next_task_then_goes_on_where_it_was() {
    let _ = home();
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("first");
    std::fs::create_dir_all(&first).unwrap();
    let id = three_runs(&first).await;

    // Resumed without a workspace or model: it goes on in its own, and
    // the user hears what it lost; with nothing new to do it is refused.
    let again = tmp.path().join("again");
    std::fs::create_dir_all(&again).unwrap();
    let replay = replay(&again, &["fourth"]);
    let opened = ok(Opened::open(request(
        None,
        replay,
        Choice::Resume(id.clone()),
    )));
    let continued = opened.continued().unwrap();
    assert_eq!(continued.id, id);
    let refused = opened.task(None).unwrap_err();
    assert_eq!(refused.code, 2);
    assert!(
        refused.error.to_string().contains("is complete"),
        "{:#}",
        refused.error
    );
    let task = ok(opened.task(Some("and the hidden ones".into()))).unwrap();
    assert!(
        task.starts_with("[Kaizen: this session was resumed"),
        "{task}"
    );
    assert!(task.ends_with("\n\nand the hidden ones"), "{task}");
    let heard = Arc::new(Mutex::new(Vec::new()));
    let built = ok(opened.build(Some(task), collaborators(None, &heard)).await);
    assert_eq!(built.session_id(), id);
    let result = built
        .run(
            &Results::default(),
            &mut NoMoreTasks,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(result.status, Status::Complete, "{result:?}");
    assert_eq!(result.output, "fourth");
    let heard = heard.lock().unwrap().clone();
    assert!(
        heard.iter().any(|notice| matches!(
            notice,
            Notice::Note(text) if text == &format!("continuing session {id}: programs it started before, background shells included, are gone")
        )),
        "{heard:?}"
    );
    let store = kaizen_app::session::open_store().unwrap();
    let meta = store.meta(&id).unwrap();
    assert_eq!(Path::new(&meta.cwd), first.join("ws"));
    assert_eq!(user_messages(&id).len(), 4);
}

#[tokio::test]
async fn an_interrupted_session_takes_no_next_task() {
    let _ = home();
    let tmp = tempfile::tempdir().unwrap();
    let replay = replay(tmp.path(), &["never asked", "nor this"]);
    let request = request(Some(workspace(tmp.path())), replay, Choice::New);
    let opened = ok(Opened::open(request));
    let task = ok(opened.task(Some("wait".into())));
    let heard = Arc::new(Mutex::new(Vec::new()));
    let built = ok(opened.build(task, collaborators(None, &heard)).await);
    let interrupt = CancellationToken::new();
    interrupt.cancel();
    let mut input = Input {
        runs: 0,
        inbox_after_first: None,
        next: VecDeque::from(["more".to_string()]),
    };
    let result = built.run(&Results::default(), &mut input, &interrupt).await;
    assert_eq!(result.status, Status::Interrupted, "{result:?}");
    assert_eq!(input.runs, 1);
}

#[tokio::test]
async fn a_request_that_cannot_work_is_refused_before_a_session_opens() {
    let _ = home();
    let tmp = tempfile::tempdir().unwrap();
    let replay = replay(tmp.path(), &["never asked"]);
    let mut no_cycles = request(Some(workspace(tmp.path())), replay.clone(), Choice::New);
    no_cycles.max_cycles = 0;
    let refused = Opened::open(no_cycles).err().unwrap();
    assert_eq!(refused.code, 2);
    assert!(refused.error.to_string().contains("--max-cycles"));
    let missing = request(None, replay, Choice::Resume("no-such-session".into()));
    let refused = Opened::open(missing).err().unwrap();
    assert_eq!(refused.code, 2);
}

#[tokio::test]
async fn a_continued_session_is_compacted_instead_of_run() {
    let _ = home();
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("first");
    std::fs::create_dir_all(&first).unwrap();
    let id = three_runs(&first).await;
    let again = tmp.path().join("again");
    std::fs::create_dir_all(&again).unwrap();
    let replay = replay(
        &again,
        &["They counted files and directories, then summed them."],
    );
    let request = request(Some(first.join("ws")), replay, Choice::Resume(id.clone()));
    let opened = ok(Opened::open(request));
    let heard = Arc::new(Mutex::new(Vec::new()));
    let seen = Results::default();
    let compacted = ok(opened
        .compact(
            collaborators(None, &heard),
            &seen,
            &CancellationToken::new(),
        )
        .await);
    assert_eq!(compacted.session_id, id);
    let event = compacted.outcome.unwrap();
    assert!(matches!(event, Some(Event::Compaction { .. })), "{event:?}");
    // Nothing ran: no result, and no new user message.
    assert!(seen.0.lock().unwrap().is_empty());
    let said = user_messages(&id);
    assert!(
        said.iter().all(|message| !message.contains("resumed")),
        "{said:?}"
    );
}
