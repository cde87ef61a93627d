//! `kaizen worker` and `kaizen run --cluster` on the real Restate server
//! (from npm, under the target directory), with the scripted model server
//! and the built-in tools in the real sandbox, and two workers behind a
//! load balancer: a session's turn is sent to the cluster, the worker
//! running it is killed with SIGKILL while a Bash step runs (or while the
//! turn waits for an approval), the other takes over, and the submitter
//! prints the same events and result a local run prints, with no finished
//! step run twice, the cut step reported once and the approval honoured.
//!
//! Each test re-runs itself in a network namespace of its own, with only
//! loopback: the server looks for updates on the network at start.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{KEY, Run, results_sent, run_command};
use common::terminal::Terminal;
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use kaizen_test_support::netns;
use kaizen_test_support::restate::{self, ADMIN, INGRESS};
use kaizen_test_support::{KillOnDrop, balancer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Where the cluster reaches the workers: a load balancer in front of
/// the two.
const BALANCER_PORT: u16 = 9180;

/// Where the two workers listen.
const WORKER_PORTS: [u16; 2] = [9181, 9182];

fn server_bin() -> PathBuf {
    restate::install(env!("CARGO_TARGET_TMPDIR"))
}

/// `kaizen worker ARGS` on `port` with the run's home and the model
/// server's provider; with `register`, it registers the balancer's
/// address.
fn worker(run: &Run, server: &ModelServer, port: u16, register: bool, args: &[&str]) -> KillOnDrop {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.args(["worker", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--root")
        .arg(run.ws())
        .args(args)
        .env("KAIZEN_HOME", run.home.path())
        .env("KAIZEN_CACHE_DIR", common::cache_dir())
        .env("KAIZEN_TOOLCHAINS_DIR", common::toolchains_dir())
        .env(
            "CLAUDE_CONFIG_DIR",
            run.home.path().join("no-claude-settings"),
        )
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", server.openai_base_url())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("KAIZEN_MODEL");
    if register {
        cmd.args([
            "--register",
            &format!("http://127.0.0.1:{ADMIN}"),
            "--advertise",
            &format!("http://127.0.0.1:{BALANCER_PORT}"),
        ]);
    }
    let log = std::fs::File::create(worker_log_path(run, port)).unwrap();
    cmd.stdout(Stdio::null()).stderr(log);
    KillOnDrop(cmd.spawn().unwrap())
}

fn worker_log_path(run: &Run, port: u16) -> PathBuf {
    run.home.path().join(format!("worker-{port}.log"))
}

/// `kaizen approve last ARGS` with the home at `home`.
fn approve(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(["approve", "last"])
        .args(args)
        .env("KAIZEN_HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `cmd` started with no terminal: its stdin empty, its output kept.
fn started(mut cmd: Command) -> std::process::Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// What a process [`started`] printed, once it has exited.
async fn output_of(child: std::process::Child) -> Output {
    tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap()
}

/// The statuses of a result's tool calls, in order.
fn statuses(result: &Value) -> Vec<&str> {
    result["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call["status"].as_str().unwrap())
        .collect()
}

/// Lines in the workspace file `name` (how often a command ran).
fn runs(ws: &Path, name: &str) -> usize {
    std::fs::read_to_string(ws.join(name))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

/// A Restate server, the scripted model server for `script`, and two
/// workers behind a load balancer, with the run's home and workspace.
struct Cluster {
    _restate: KillOnDrop,
    _data: tempfile::TempDir,
    server: ModelServer,
    run: Run,
    workers: Vec<Option<KillOnDrop>>,
}

impl Cluster {
    async fn start(server_bin: &Path, script: Script) -> Self {
        Self::start_with(server_bin, script, &[]).await
    }

    /// [`Cluster::start`] with `kaizen worker … ARGS`.
    async fn start_with(server_bin: &Path, script: Script, args: &[&str]) -> Self {
        let data = tempfile::tempdir().unwrap();
        let restate = restate::start(server_bin, data.path());
        let server = ModelServer::start(script).await.unwrap();
        let run = Run::builtins_only();
        let backends = WORKER_PORTS.map(|port| ([127, 0, 0, 1], port).into());
        balancer::start(([127, 0, 0, 1], BALANCER_PORT).into(), backends.to_vec()).unwrap();
        let workers = vec![
            Some(worker(&run, &server, WORKER_PORTS[0], true, args)),
            Some(worker(&run, &server, WORKER_PORTS[1], false, args)),
        ];
        let log = worker_log_path(&run, WORKER_PORTS[0]);
        restate::wait_for("the first worker to register", || {
            std::fs::read_to_string(&log).is_ok_and(|log| log.contains("registered"))
        })
        .unwrap_or_else(|err| panic!("{err}: {}", std::fs::read_to_string(&log).unwrap()));
        Self {
            _restate: restate,
            _data: data,
            server,
            run,
            workers,
        }
    }

    /// Worker `index`'s log so far.
    fn log_of(&self, index: usize) -> String {
        std::fs::read_to_string(worker_log_path(&self.run, WORKER_PORTS[index])).unwrap_or_default()
    }

    /// The workers' logs so far.
    fn worker_log(&self) -> String {
        (0..WORKER_PORTS.len())
            .map(|i| format!("worker {i}:\n{}", self.log_of(i)))
            .collect()
    }

    /// Kills (SIGKILL) the worker that runs the turn; its index.
    fn kill_busy_worker(&mut self) -> usize {
        let busy = (0..WORKER_PORTS.len())
            .find(|&i| self.log_of(i).contains("turn started"))
            .unwrap_or_else(|| panic!("no worker runs the turn: {}", self.worker_log()));
        drop(self.workers[busy].take());
        busy
    }

    /// `kaizen run --cluster … --output-format stream-json TASK`, in
    /// bypassPermissions mode.
    fn submit(&self, task: &str) -> Command {
        self.submit_in("bypassPermissions", task)
    }

    /// `kaizen run --cluster …` in permission mode `mode`.
    fn submit_in(&self, mode: &str, task: &str) -> Command {
        self.submit_from(&self.run.ws(), mode, task)
    }

    /// [`Cluster::submit_in`], for a turn in workspace `ws`.
    fn submit_from(&self, ws: &Path, mode: &str, task: &str) -> Command {
        run_command(
            self.run.home.path(),
            ws,
            Some((&self.server, Wire::OpenAi)),
            &[
                "--cluster",
                &format!("http://127.0.0.1:{INGRESS}"),
                "--output-format",
                "stream-json",
                "--model",
                "gpt-4.1-mini",
                "--permission-mode",
                mode,
                task,
            ],
        )
    }

    /// The events a submitter that exited with `code` printed
    /// (stream-json), and its stdout.
    fn ended(&self, out: &Output, code: i32) -> (Vec<Value>, String) {
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{stdout}\n{}\nworker: {}",
            String::from_utf8_lossy(&out.stderr),
            self.worker_log()
        );
        let events = stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (events, stdout)
    }

    /// Makes the workers ask before Bash runs each of `commands`.
    fn ask_before(&self, commands: &[&str]) {
        let rules: Vec<String> = commands.iter().map(|c| format!("Bash({c})")).collect();
        let config = format!("[permissions]\nask = {rules:?}\n");
        std::fs::write(self.run.home.path().join("config.toml"), config).unwrap();
    }

    /// Waits until a worker's log (one of `workers`) holds `text`.
    async fn wait_for_logged(&self, what: &'static str, workers: &[usize], text: &'static str) {
        let logs: Vec<PathBuf> = workers
            .iter()
            .map(|&i| worker_log_path(&self.run, WORKER_PORTS[i]))
            .collect();
        self.wait_for(what, move || {
            logs.iter()
                .any(|log| std::fs::read_to_string(log).is_ok_and(|log| log.contains(text)))
        })
        .await;
    }

    /// `kaizen approve last ARGS`, as from another terminal.
    fn approve(&self, args: &[&str]) -> Output {
        approve(self.run.home.path(), args)
    }

    /// Waits until the session waits on a question whose text holds
    /// `text`.
    async fn wait_for_question(&self, text: &'static str) {
        let home = self.run.home.path().to_path_buf();
        self.wait_for("the turn to ask", move || {
            let listed = approve(&home, &["--list", "--json"]);
            String::from_utf8_lossy(&listed.stdout).contains(text)
        })
        .await;
    }

    /// Waits until `ready` holds (checked off the test's runtime).
    async fn wait_for(&self, what: &'static str, ready: impl FnMut() -> bool + Send + 'static) {
        tokio::task::spawn_blocking(move || restate::wait_for(what, ready))
            .await
            .unwrap()
            .unwrap_or_else(|err| {
                panic!(
                    "{err}; the model server had {} requests; the worker's log:\n{}",
                    self.server.requests().len(),
                    self.worker_log()
                )
            });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_survives_its_worker_and_prints_as_a_local_run() {
    let server_bin = server_bin();
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "a_turn_survives_its_worker_and_prints_as_a_local_run",
    ) {
        return;
    }
    let script = Script::new()
        .reply(
            Reply::tool("Bash", &json!({"command": "echo a >> runs-a"}).to_string())
                .with_usage(100, 10),
        )
        .reply(
            Reply::tool(
                "Bash",
                &json!({"command": "echo b >> runs-b; sleep 4; echo slept"}).to_string(),
            )
            .with_usage(100, 10),
        )
        .reply(Reply::text("done").with_usage(100, 10));
    let mut cluster = Cluster::start(&server_bin, script).await;
    let ws = cluster.run.ws();
    let submit = cluster.submit("count a, then b");
    let submitted = tokio::process::Command::from(submit).output();
    let submitted = tokio::spawn(submitted);

    // The worker running the turn is lost while the second Bash step
    // runs; the engine gives the turn to the other.
    let ws_seen = ws.clone();
    cluster
        .wait_for("the second Bash step", move || {
            runs(&ws_seen, "runs-b") == 1
        })
        .await;
    let lost = cluster.kill_busy_worker();
    let (server, run) = (&cluster.server, &cluster.run);
    assert_eq!(runs(&ws, "runs-a"), 1);
    assert_eq!(server.requests().len(), 2);

    let out = tokio::time::timeout(Duration::from_secs(120), submitted)
        .await
        .expect("the submitter did not end")
        .unwrap()
        .unwrap();
    let (events, stdout) = cluster.ended(&out, 0);
    assert!(
        cluster.log_of(1 - lost).contains("turn ended complete"),
        "{}",
        cluster.worker_log()
    );
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result", "{stdout}");
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(result["output"], "done");
    assert_eq!(result["cycles_used"], 3);
    // Each model call counted once: three calls of 100 and 10 tokens.
    assert_eq!(result["tokens_used"]["input"], 300, "{result:#}");
    assert_eq!(result["tokens_used"]["output"], 30);
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(statuses(result), ["success", "error"], "{result:#}");
    let cut = serde_json::to_string(&calls[1]).unwrap();
    assert!(cut.contains("cut off"), "{cut}");
    // No finished step ran again, and the cut one was not run again.
    assert_eq!(runs(&ws, "runs-a"), 1, "a finished Bash step ran again");
    assert_eq!(runs(&ws, "runs-b"), 1, "the cut Bash step ran again");
    assert_eq!(
        server.requests().len(),
        3,
        "a finished model call ran again"
    );

    // The submitter printed each event once, as a local run would.
    let id = result["session_id"].as_str().unwrap();
    let session_dir = run.home.path().join("sessions").join(id);
    let stream = std::fs::read_to_string(session_dir.join("stream.jsonl")).unwrap();
    let of_type = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(of_type("session_start"), 1, "{stdout}");
    assert_eq!(of_type("tool_call"), 2, "{stdout}");
    assert_eq!(of_type("tool_result"), 2, "{stdout}\nthe stream:\n{stream}");
    assert_eq!(of_type("result"), 1, "{stdout}");

    // The session is kept in the shared store, its log written once.
    let id = result["session_id"].as_str().unwrap();
    let log = std::fs::read_to_string(
        run.home
            .path()
            .join("sessions")
            .join(id)
            .join("events.jsonl"),
    )
    .unwrap();
    let seqs: Vec<u64> = log
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "{log}");
    let listed = Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(["sessions", "list", "--json"])
        .env("KAIZEN_HOME", run.home.path())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains(id),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
}

/// A request reaching a worker cannot send its keys and grants to work
/// anywhere on its machine: a turn whose workspace is outside the
/// worker's `--root` directories is refused, and nothing of it runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_outside_the_workers_roots_is_refused() {
    let server_bin = server_bin();
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "a_turn_outside_the_workers_roots_is_refused",
    ) {
        return;
    }
    let script = Script::new().reply(Reply::tool(
        "Bash",
        &json!({"command": "touch ran"}).to_string(),
    ));
    let cluster = Cluster::start(&server_bin, script).await;
    let elsewhere = tempfile::tempdir().unwrap();
    let out = output_of(started(cluster.submit_from(
        elsewhere.path(),
        "bypassPermissions",
        "go",
    )))
    .await;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("outside the directories this worker serves"),
        "{said}\n{}",
        cluster.worker_log()
    );
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert!(!elsewhere.path().join("ran").exists());
    assert!(cluster.server.requests().is_empty(), "the model was asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_the_turn_through_the_engine() {
    let server_bin = server_bin();
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "ctrl_c_cancels_the_turn_through_the_engine",
    ) {
        return;
    }
    let script = Script::new()
        .reply(Reply::tool(
            "Bash",
            &json!({"command": "touch started; sleep 2"}).to_string(),
        ))
        .reply(Reply::text("never asked for"));
    let cluster = Cluster::start(&server_bin, script).await;
    let ws = cluster.run.ws();
    let submitter = started(cluster.submit("wait"));
    let started = ws.join("started");
    cluster
        .wait_for("the Bash step", move || started.exists())
        .await;
    // Ctrl-C at the submitting terminal.
    let pid = libc::pid_t::try_from(submitter.id()).unwrap();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = output_of(submitter).await;
    let (events, stdout) = cluster.ended(&out, 130);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "interrupted", "{result:#}");
    // The turn ended at its step: the model was not asked again.
    assert_eq!(cluster.server.requests().len(), 1, "{stdout}");
    assert!(cluster.worker_log().contains("turn ended interrupted"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_answered_after_the_kill_is_honoured() {
    let server_bin = server_bin();
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "an_approval_answered_after_the_kill_is_honoured",
    ) {
        return;
    }
    let script = Script::new()
        .reply(Reply::tool(
            "Bash",
            &json!({"command": "touch approved"}).to_string(),
        ))
        .reply(Reply::tool(
            "Bash",
            &json!({"command": "touch refused"}).to_string(),
        ))
        .reply(Reply::text("done"));
    let mut cluster = Cluster::start(&server_bin, script).await;
    cluster.ask_before(&["touch approved", "touch refused"]);
    let ws = cluster.run.ws();
    let submitter = started(cluster.submit_in("default", "touch two files"));

    // The turn waits on the first approval; its worker is lost; the
    // other takes the turn up and waits on the same question, which is
    // answered now.
    cluster.wait_for_question("touch approved").await;
    let lost = cluster.kill_busy_worker();
    assert!(!ws.join("approved").exists());
    cluster
        .wait_for_logged(
            "the other worker to take the turn",
            &[1 - lost],
            "turn started",
        )
        .await;
    let answered = cluster.approve(&["--allow"]);
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );

    // The other worker honours it, and the turn asks again.
    cluster.wait_for_question("touch refused").await;
    assert!(
        ws.join("approved").exists(),
        "the approved call did not run"
    );
    let listed = cluster.approve(&["--list"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let refused = cluster.approve(&["--deny", "make a note instead"]);
    assert!(refused.status.success());

    let out = output_of(submitter).await;
    let (events, stdout) = cluster.ended(&out, 0);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(result["output"], "done");
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(statuses(result), ["success", "denied"], "{result:#}");
    let refusal = serde_json::to_string(&calls[1]).unwrap();
    assert!(refusal.contains("make a note instead"), "{refusal}");
    assert!(!ws.join("refused").exists());
    // One model call per step: the first came back from the journal.
    assert_eq!(cluster.server.requests().len(), 3, "{stdout}");
    // Nobody was at the submitter's terminal: it said how to answer.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("kaizen approve").count(), 2, "{stderr}");
    // Nothing waits now, and the session is marked as a cluster's.
    let nothing = cluster.approve(&["--allow"]);
    assert_eq!(nothing.status.code(), Some(1));
    let listed = Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(["sessions", "list"])
        .env("KAIZEN_HOME", cluster.run.home.path())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("[cluster] touch two files"), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_submitting_terminal_answers_and_lets_go_of_what_was_answered_elsewhere() {
    let server_bin = server_bin();
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "the_submitting_terminal_answers_and_lets_go_of_what_was_answered_elsewhere",
    ) {
        return;
    }
    let question = json!({"questions": [{
        "question": "Which database?",
        "header": "Database",
        "options": [
            {"label": "PostgreSQL", "description": "a server"},
            {"label": "SQLite", "description": "a file"},
        ],
        "multiSelect": false,
    }]});
    let script = Script::new()
        .reply(Reply::tool(
            "Bash",
            &json!({"command": "touch approved"}).to_string(),
        ))
        .reply(Reply::tool("AskUserQuestion", &question.to_string()))
        .reply(Reply::tool(
            "Bash",
            &json!({"command": "touch elsewhere"}).to_string(),
        ))
        .reply(Reply::text("done"));
    let cluster = Cluster::start(&server_bin, script).await;
    cluster.ask_before(&["touch approved", "touch elsewhere"]);
    let ws = cluster.run.ws();
    let mut terminal = Terminal::spawn(cluster.submit_in("default", "set up"));
    terminal.expect("Kaizen wants to run Bash");
    terminal.expect("touch approved");
    terminal.type_line("1");
    terminal.expect("Which database?");
    terminal.type_line("2");
    // The prompt itself (the event before it names the command too).
    terminal.expect("Kaizen wants to run Bash");
    terminal.expect("touch elsewhere");
    // Answered from another terminal while this one asks.
    let refused = cluster.approve(&["--deny", "not now"]);
    assert!(
        refused.status.success(),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    terminal.expect("answered elsewhere");
    assert_eq!(terminal.finish(), Some(0), "{}", terminal.transcript());
    assert!(ws.join("approved").exists(), "{}", terminal.transcript());
    assert!(!ws.join("elsewhere").exists());
    let sent = results_sent(&cluster.server, 3);
    assert!(sent[1].contains("Which database? → SQLite"), "{sent:?}");
    assert!(sent[2].contains("not now"), "{sent:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_cut_with_its_worker_is_reported_once_and_not_run_again() {
    let server_bin = server_bin();
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "a_sub_agent_cut_with_its_worker_is_reported_once_and_not_run_again",
    ) {
        return;
    }
    let task = json!({
        "description": "Look around",
        "prompt": "List the text files, then count.",
        "subagent_type": "general-purpose",
    });
    let script = Script::new()
        .reply(Reply::tool("Task", &task.to_string()))
        // The sub-agent: two read-only calls at once, then a slow command.
        .reply(
            Reply::tool("Glob", &json!({"pattern": "*.txt"}).to_string())
                .with_tool("Grep", &json!({"pattern": "nothing"}).to_string()),
        )
        .reply(Reply::tool(
            "Bash",
            &json!({"command": "echo s >> runs-s; sleep 4"}).to_string(),
        ))
        .reply(Reply::text("done"));
    let mut cluster = Cluster::start(&server_bin, script).await;
    let ws = cluster.run.ws();
    let submitted = tokio::spawn(tokio::process::Command::from(cluster.submit("look")).output());
    let ws_seen = ws.clone();
    cluster
        .wait_for("the sub-agent's Bash step", move || {
            runs(&ws_seen, "runs-s") == 1
        })
        .await;
    cluster.kill_busy_worker();
    let out = tokio::time::timeout(Duration::from_secs(120), submitted)
        .await
        .expect("the submitter did not end")
        .unwrap()
        .unwrap();
    let (events, stdout) = cluster.ended(&out, 0);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(result["output"], "done");
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{result:#}");
    assert_eq!(calls[0]["name"], "Task");
    assert_eq!(calls[0]["status"], "error", "{result:#}");
    assert!(
        serde_json::to_string(&calls[0])
            .unwrap()
            .contains("cut off"),
        "{result:#}"
    );
    // The sub-agent's command ran once, and no model call ran again.
    assert_eq!(runs(&ws, "runs-s"), 1);
    assert_eq!(cluster.server.requests().len(), 4, "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_waiting_on_an_answer_is_let_go_of_and_runs_again_when_answered() {
    let server_bin = server_bin();
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "a_turn_waiting_on_an_answer_is_let_go_of_and_runs_again_when_answered",
    ) {
        return;
    }
    let script = Script::new()
        .reply(Reply::tool(
            "Bash",
            &json!({"command": "touch approved"}).to_string(),
        ))
        .reply(Reply::text("done"));
    let cluster = Cluster::start_with(&server_bin, script, &["--suspend-after", "1"]).await;
    cluster.ask_before(&["touch approved"]);
    let ws = cluster.run.ws();
    let submitter = started(cluster.submit_in("default", "touch a file"));
    cluster.wait_for_question("touch approved").await;
    // Nobody answers for a while: the engine suspends the turn, and the
    // worker lets go of it without writing anything more.
    cluster
        .wait_for_logged(
            "the worker to let go of the turn",
            &[0, 1],
            "let go of the turn",
        )
        .await;
    let answered = cluster.approve(&["--allow"]);
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    let out = output_of(submitter).await;
    let (events, stdout) = cluster.ended(&out, 0);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "complete", "{result:#}");
    assert!(ws.join("approved").exists());
    assert_eq!(cluster.server.requests().len(), 2, "{stdout}");
    let of_type = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(of_type("tool_call"), 1, "{stdout}");
    assert_eq!(of_type("permission_request"), 1, "{stdout}");
    assert_eq!(of_type("tool_result"), 1, "{stdout}");
    assert!(cluster.worker_log().contains("turn ended complete"));
}
