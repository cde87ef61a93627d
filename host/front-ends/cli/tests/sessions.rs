//! Durable sessions through the real binary: every run is kept under
//! `$KAIZEN_HOME/sessions`; Ctrl-C and SIGKILL lose nothing that finished;
//! `--resume`, `--fork`, `kaizen rewind` and `kaizen sessions` work on what
//! was kept. The model is the scripted server answering by position in
//! the conversation, as a deterministic model would, so a resumed session
//! is asked what it would have been asked.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{KEY, Run, result_of};
use kaizen_model_server::{ModelServer, Options, Reply, Script, Wire};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// In each successful step's output only, never in a command: how the
/// model tells which steps are done.
const DONE: &str = "STEP-DONE";

/// A step that appends its number to `steps.txt`, after `pause` seconds.
fn step(n: usize, pause: f64) -> Reply {
    let command = format!("sleep {pause}; echo {n} >> steps.txt && echo STEP-$(echo DONE)");
    Reply::tool(
        "Bash",
        &json!({ "command": command, "description": format!("step {n}") }).to_string(),
    )
}

/// `steps` steps, then an answer.
fn script(steps: usize, pause: f64) -> Script {
    let mut script = Script::new();
    for n in 1..=steps {
        script = script.reply(step(n, pause));
    }
    script.reply(Reply::text("All steps done."))
}

async fn server(script: Script) -> ModelServer {
    let options = Options {
        by_position: true,
        position_marker: Some(DONE.into()),
        ..Options::default()
    };
    ModelServer::start_with(script, options).await.unwrap()
}

/// A home and a workspace whose session's runs the tests stop, resume
/// and fork.
struct Place(Run);

impl Place {
    fn new() -> Self {
        Self(Run::builtins_only())
    }

    /// `kaizen run --model gpt-4o-mini --output-format json ARGS` here.
    fn run(&self, server: &ModelServer, args: &[&str]) -> Command {
        let mut all = vec!["--model", "gpt-4o-mini", "--output-format", "json"];
        all.extend_from_slice(args);
        self.0.command(Some((server, Wire::OpenAi)), &all)
    }

    /// [`Self::run`] run to its end.
    fn output(&self, server: &ModelServer, args: &[&str]) -> Output {
        self.run(server, args).output().unwrap()
    }

    /// [`Self::run`] started with its output kept, for the test to signal.
    fn spawn(&self, server: &ModelServer, args: &[&str]) -> Child {
        self.run(server, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `kaizen ARGS` with this home and no workspace flag.
    fn kaizen(&self, args: &[&str]) -> Output {
        common::at_home(self.0.home.path(), args)
    }

    /// Where the sessions are kept.
    fn sessions_dir(&self) -> PathBuf {
        self.0.home.path().join("sessions")
    }

    fn sessions(&self) -> Vec<Value> {
        let out = self.kaizen(&["sessions", "list", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn steps(&self) -> Vec<usize> {
        std::fs::read_to_string(self.0.workspace.path().join("steps.txt"))
            .unwrap_or_default()
            .lines()
            .map(|line| line.trim().parse().unwrap())
            .collect()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.ws().join(name)
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Waits until `steps.txt` has `n` lines.
fn wait_for_steps(place: &Place, n: usize) {
    let until = Instant::now() + Duration::from_secs(60);
    while place.steps().len() < n {
        assert!(Instant::now() < until, "no step {n} within a minute");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &std::process::Child, signal: i32) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: signals our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_finishes_the_step_and_resume_goes_on_exactly_there() {
    let place = Place::new();
    let server = server(script(5, 0.3)).await;
    let child = place.spawn(&server, &["Do the five steps."]);
    wait_for_steps(&place, 2);
    // Step 3 is running (or about to): it is finished, not cut.
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let result = result_of(&out);
    assert_eq!(result["status"], "interrupted");
    let id = result["session_id"].as_str().unwrap().to_string();
    assert!(
        stderr(&out).contains(&format!("continue it with: kaizen run --resume {id}")),
        "{}",
        stderr(&out)
    );
    let meta = &place.sessions()[0];
    assert_eq!(meta["status"], "interrupted");
    let done = place.steps();

    let out = place.output(&server, &["--resume", &id]);
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{}", stderr(&out));
    assert_eq!(result["session_id"], id.as_str());
    assert!(
        stderr(&out).contains(&format!(
            "continuing session {id}: programs it started before"
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(place.steps(), [1, 2, 3, 4, 5], "interrupted after {done:?}");
    // The model was told what the interruption lost.
    let last = server.requests().pop().unwrap();
    assert!(
        last.body["messages"]
            .to_string()
            .contains("this session was resumed; it ended interrupted")
    );
    assert_eq!(place.sessions().len(), 1);
    assert_eq!(place.sessions()[0]["status"], "complete");

    // A complete session has nothing to resume without a task.
    let out = place.output(&server, &["--resume", "last"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is complete; give it a task"),
        "{}",
        stderr(&out)
    );
}

/// The variable that replays a run of the kill loop: its seed.
const SEED_VAR: &str = "KAIZEN_TEST_SEED";

/// The seed for the kill loop: [`SEED_VAR`] when set, else the clock, so
/// that runs cover different kill moments. Printed either way.
fn seed() -> u64 {
    let seed = match std::env::var(SEED_VAR) {
        Ok(value) => value
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{SEED_VAR}={value:?} is not a u64: {e}")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    };
    eprintln!(
        "seed {seed}; replay this run with: {SEED_VAR}={seed} cargo test -p kaizen \
         --test sessions killed_at_random_and_resumed_every_step_is_done_once"
    );
    seed
}

/// A tiny deterministic generator, so a failure can be replayed from the
/// seed it prints.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_at_random_and_resumed_every_step_is_done_once() {
    const STEPS: usize = 12;
    const KILLS: usize = 10;
    let seed = seed();
    let mut random = Lcg(seed);
    let place = Place::new();
    let server = server(script(STEPS, 0.05)).await;
    let mut kills = 0;
    let mut finished = None;
    for round in 0..KILLS + 5 {
        let resume = !place.sessions().is_empty();
        let args: &[&str] = if resume {
            &["--resume", "last"]
        } else {
            &["Do the twelve steps."]
        };
        let mut child = place.spawn(&server, args);
        if kills < KILLS {
            std::thread::sleep(Duration::from_millis(random.below(400)));
            if child.try_wait().unwrap().is_none() {
                signal(&child, libc::SIGKILL);
                kills += 1;
            }
        }
        let out = child.wait_with_output().unwrap();
        if out.status.code() == Some(0) {
            finished = Some((round, result_of(&out)));
            break;
        }
        assert!(
            out.status.code().is_none(),
            "round {round} (seed {seed}) failed by itself: {}",
            stderr(&out)
        );
    }
    let (round, result) = finished.unwrap_or_else(|| panic!("never finished (seed {seed})"));
    assert_eq!(result["status"], "complete");
    let steps = place.steps();
    for n in 1..=STEPS {
        let times = steps.iter().filter(|&&s| s == n).count();
        assert!(
            times >= 1,
            "step {n} was never done (seed {seed}): {steps:?}"
        );
    }
    // Each kill may repeat at most the step it cut.
    assert!(
        steps.len() <= STEPS + kills,
        "{} steps for {STEPS} with {kills} kills (seed {seed}): {steps:?}",
        steps.len()
    );
    let cut = server
        .requests()
        .iter()
        .filter(|r| {
            r.body["messages"]
                .to_string()
                .contains("was cut off when the session stopped")
        })
        .count();
    eprintln!(
        "{kills} kills, finished in round {round}, {} step runs, {cut} requests after a cut call",
        steps.len()
    );
    assert_eq!(
        place.sessions().len(),
        1,
        "every round resumed the same session"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_diverges_and_leaves_its_parent_untouched() {
    let place = Place::new();
    let server = server(script(3, 0.0)).await;
    let out = place.output(&server, &["Do the three steps."]);
    let parent = result_of(&out)["session_id"].as_str().unwrap().to_string();
    let parent_dir = place.sessions_dir().join(&parent);
    let before = snapshot(&parent_dir);

    // After cycle 1 (step 1 done), the fork does steps 2 and 3 again.
    let out = place.output(
        &server,
        &["--fork", &parent, "--at", "1", "Do the rest again."],
    );
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{}", stderr(&out));
    let child = result["session_id"].as_str().unwrap();
    assert_ne!(child, parent);
    assert_eq!(place.steps(), [1, 2, 3, 2, 3]);
    assert_eq!(
        snapshot(&parent_dir),
        before,
        "the parent's files are unchanged"
    );
    let sessions = place.sessions();
    let forked = sessions.iter().find(|s| s["id"] == child).unwrap();
    assert_eq!(forked["parent"], json!({"id": parent, "step": 1}));
    let show = place.kaizen(&["sessions", "show", child]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        text.contains(&format!("forked from {parent} after cycle 1")),
        "{text}"
    );
    assert!(text.contains("is a fork of session"), "{text}");
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(snapshot(&path));
        } else {
            files.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn rewind_puts_back_what_the_edit_tools_changed() {
    let place = Place::new();
    let kept = place.file("kept.txt");
    let original = "line one\r\nline two\ncafé, no newline at the end"
        .as_bytes()
        .to_vec();
    std::fs::write(&kept, &original).unwrap();
    let created = place.file("new/created.txt");
    let script = Script::new()
        .reply(Reply::tool("Read", &json!({"file_path": kept}).to_string()))
        .reply(Reply::tool(
            "Edit",
            &json!({"file_path": kept, "old_string": "line one", "new_string": "LINE ONE"})
                .to_string(),
        ))
        .reply(Reply::tool(
            "Write",
            &json!({"file_path": created, "content": "made by the session\n"}).to_string(),
        ))
        .reply(Reply::tool(
            "Edit",
            &json!({"file_path": kept, "old_string": "line two", "new_string": "LINE TWO"})
                .to_string(),
        ))
        .reply(Reply::text("Edited."));
    let server = ModelServer::start(script).await.unwrap();
    let out = place.output(&server, &["Edit the files."]);
    assert_eq!(result_of(&out)["status"], "complete", "{}", stderr(&out));
    assert!(std::fs::read_to_string(&kept).unwrap().contains("LINE TWO"));

    // Before cycle 4: only the second edit is undone.
    let dry = place.kaizen(&["rewind", "last", "--to", "4", "--dry-run"]);
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(text.contains("would restore"), "{text}");
    assert!(std::fs::read_to_string(&kept).unwrap().contains("LINE TWO"));
    let out = place.kaizen(&["rewind", "last", "--to", "4"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let now = std::fs::read(&kept).unwrap();
    assert!(
        now.starts_with(b"LINE ONE\r\nline two\n"),
        "{:?}",
        String::from_utf8_lossy(&now)
    );
    assert!(created.exists());

    // Everything: byte for byte, and the created file is gone.
    let out = place.kaizen(&["rewind", "last", "--fork"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&kept).unwrap(), original);
    assert!(!created.exists());
    assert!(
        text.contains("Files changed by Bash or other programs are not tracked"),
        "{text}"
    );
    assert!(text.contains("go on with: kaizen run --resume"), "{text}");
    assert_eq!(place.sessions().len(), 2, "the fork from before cycle 1");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_listed_shown_removed_and_keep_no_key() {
    let place = Place::new();
    let script = Script::new()
        .reply(Reply::tool(
            "Bash",
            &json!({"command": format!("echo {KEY}")}).to_string(),
        ))
        .reply(Reply::text(format!("The key is {KEY}.")));
    let server = ModelServer::start(script).await.unwrap();
    let out = place.output(&server, &["Show the key."]);
    assert_eq!(result_of(&out)["status"], "complete", "{}", stderr(&out));
    let sessions_dir = place.sessions_dir();
    for (path, bytes) in snapshot(&sessions_dir) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} holds the key",
            path.display()
        );
    }

    let list = place.kaizen(&["sessions", "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.contains("complete") && text.contains("Show the key."),
        "{text}"
    );
    let show = place.kaizen(&["sessions", "show", "last"]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("→ Bash"), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    let json_lines = place.kaizen(&["sessions", "show", "last", "--json"]);
    let kinds: Vec<String> = String::from_utf8_lossy(&json_lines.stdout)
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds, ["start", "user", "turn", "results", "turn", "end"]);

    let out = place.kaizen(&["sessions", "prune", "--older-than", "1d"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("No session is that old"));
    let out = place.kaizen(&["sessions", "rm", "last"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(place.sessions().is_empty());
    let out = place.kaizen(&["sessions", "show", "nope"]);
    assert!(
        stderr(&out).contains("no session `nope`"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn after_ctrl_c_nothing_the_session_started_is_left_running() {
    let place = Place::new();
    let marker = "317.25";
    let script = Script::new()
        .reply(Reply::tool(
            "Bash",
            &json!({"command": format!("sleep {marker}"), "run_in_background": true}).to_string(),
        ))
        .reply(step(1, 1.0))
        .reply(Reply::text("never reached"));
    let server = server(script).await;
    let child = place.spawn(&server, &["Start a job, then step."]);
    let until = Instant::now() + Duration::from_secs(60);
    while common::host_processes_with(&format!("sleep {marker}")).is_empty() {
        assert!(Instant::now() < until, "the job never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        common::host_processes_with(&format!("sleep {marker}")).is_empty(),
        "the background job outlived the run"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_killed_before_its_task_was_logged_resumes_with_that_task() {
    let place = Place::new();
    let server = server(script(1, 0.0)).await;
    let out = place.output(&server, &["The original task."]);
    let id = result_of(&out)["session_id"].as_str().unwrap().to_string();
    // As if killed right after the session was created.
    let dir = place.sessions_dir().join(&id);
    std::fs::remove_file(dir.join("events.jsonl")).unwrap();
    std::fs::remove_dir_all(dir.join("checkpoints")).unwrap();
    let before = server.requests().len();
    let out = place.output(&server, &["--resume", "last"]);
    assert_eq!(result_of(&out)["status"], "complete", "{}", stderr(&out));
    let first = &server.requests()[before];
    let text = first.body["messages"][1]["content"].to_string();
    assert!(text.contains("The original task."), "{text}");
    assert!(text.contains("it was killed or crashed"), "{text}");
}
