//! A cluster for one test: the real Restate server (from npm, under the
//! target directory), the scripted model server, and two `kaizen worker`s
//! behind a load balancer, sharing one home and workspace.
//!
//! Each test starts its own, in a network namespace of its own with only
//! loopback (the server looks for updates on the network at start): the
//! ports are fixed, and a namespace holds one test's copy of the binary, so
//! there is no server to share between tests.

use super::run::{KEY, Run, run_command};
use kaizen_model_server::{ModelServer, Script, Wire};
use kaizen_test_support::restate::{self, ADMIN, INGRESS};
use kaizen_test_support::{KillOnDrop, balancer, netns};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;
use tokio::task::JoinHandle;

/// Where the cluster reaches the workers: a load balancer in front of
/// the two.
const BALANCER_PORT: u16 = 9180;

/// Where the two workers listen.
const WORKER_PORTS: [u16; 2] = [9181, 9182];

/// A Restate server, the scripted model server, and two workers behind a
/// load balancer, with the run's home and workspace.
pub struct Cluster {
    _restate: KillOnDrop,
    _data: tempfile::TempDir,
    /// The scripted model the workers call.
    pub server: ModelServer,
    /// The home and workspace the workers and submitters share.
    pub run: Run,
    workers: Vec<Option<KillOnDrop>>,
}

impl Cluster {
    /// For `test` (its name), a cluster answering `script` in the copy of
    /// the test that runs in its own network namespace; `None` in the
    /// outer run, which returns once that copy passed (or the suite opted
    /// out of `netns`).
    pub async fn isolated(test: &str, script: Script) -> Option<Self> {
        Self::isolated_with(test, script, &[]).await
    }

    /// [`Cluster::isolated`] with `kaizen worker … ARGS`.
    pub async fn isolated_with(test: &str, script: Script, args: &[&str]) -> Option<Self> {
        // Installed before the namespace, where npm cannot reach its
        // registry.
        let server_bin = restate::install(env!("CARGO_TARGET_TMPDIR"));
        if !netns::isolated(env!("CARGO_TARGET_TMPDIR"), test) {
            return None;
        }
        Some(Self::start(&server_bin, script, args).await)
    }

    async fn start(server_bin: &Path, script: Script, args: &[&str]) -> Self {
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

    /// The workspace as the workers see it.
    pub fn ws(&self) -> PathBuf {
        self.run.ws()
    }

    /// Worker `index`'s log so far.
    pub fn log_of(&self, index: usize) -> String {
        std::fs::read_to_string(worker_log_path(&self.run, WORKER_PORTS[index])).unwrap_or_default()
    }

    /// The workers' logs so far.
    pub fn worker_log(&self) -> String {
        (0..WORKER_PORTS.len())
            .map(|i| format!("worker {i}:\n{}", self.log_of(i)))
            .collect()
    }

    /// Kills (SIGKILL) the worker that runs the turn; its index.
    pub fn kill_busy_worker(&mut self) -> usize {
        let busy = (0..WORKER_PORTS.len())
            .find(|&i| self.log_of(i).contains("turn started"))
            .unwrap_or_else(|| panic!("no worker runs the turn: {}", self.worker_log()));
        drop(self.workers[busy].take());
        busy
    }

    /// `kaizen run --cluster … --output-format events TASK`, in
    /// bypassPermissions mode.
    pub fn submit(&self, task: &str) -> Command {
        self.submit_in("bypassPermissions", task)
    }

    /// `kaizen run --cluster …` in permission mode `mode`.
    pub fn submit_in(&self, mode: &str, task: &str) -> Command {
        self.submit_from(&self.run.ws(), mode, task)
    }

    /// [`Cluster::submit_in`], for a turn in workspace `ws`.
    pub fn submit_from(&self, ws: &Path, mode: &str, task: &str) -> Command {
        run_command(
            self.run.home.path(),
            ws,
            Some((&self.server, Wire::OpenAi)),
            &[
                "--cluster",
                &format!("http://127.0.0.1:{INGRESS}"),
                "--output-format",
                "events",
                "--model",
                "gpt-4.1-mini",
                "--permission-mode",
                mode,
                task,
            ],
        )
    }

    /// [`Cluster::submit`] run on the test's runtime, for the test to
    /// kill a worker meanwhile; [`finished`] waits for it.
    pub fn submit_in_background(&self, task: &str) -> JoinHandle<std::io::Result<Output>> {
        tokio::spawn(tokio::process::Command::from(self.submit(task)).output())
    }

    /// The events a submitter that exited with `code` printed
    /// (events), and its stdout.
    pub fn ended(&self, out: &Output, code: i32) -> (Vec<Value>, String) {
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
    pub fn ask_before(&self, commands: &[&str]) {
        let rules: Vec<String> = commands.iter().map(|c| format!("Bash({c})")).collect();
        let config = format!("[permissions]\nask = {rules:?}\n");
        std::fs::write(self.run.home.path().join("config.toml"), config).unwrap();
    }

    /// Waits until a worker's log (one of `workers`) holds `text`.
    pub async fn wait_for_logged(&self, what: &'static str, workers: &[usize], text: &'static str) {
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

    /// `kaizen ARGS` with the cluster's home, as from another terminal.
    pub fn kaizen(&self, args: &[&str]) -> Output {
        super::at_home(self.run.home.path(), args)
    }

    /// `kaizen approve last ARGS`, as from another terminal.
    pub fn approve(&self, args: &[&str]) -> Output {
        approve(self.run.home.path(), args)
    }

    /// Waits until the session waits on a question whose text holds
    /// `text`.
    pub async fn wait_for_question(&self, text: &'static str) {
        let home = self.run.home.path().to_path_buf();
        self.wait_for("the turn to ask", move || {
            let listed = approve(&home, &["--list", "--json"]);
            String::from_utf8_lossy(&listed.stdout).contains(text)
        })
        .await;
    }

    /// Waits until the workspace file `name` has `lines` lines (a command
    /// appending to it ran that often).
    pub async fn wait_for_runs(&self, what: &'static str, name: &'static str, lines: usize) {
        let ws = self.ws();
        self.wait_for(what, move || runs(&ws, name) == lines).await;
    }

    /// Waits until `ready` holds (checked off the test's runtime).
    pub async fn wait_for(&self, what: &'static str, ready: impl FnMut() -> bool + Send + 'static) {
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
        .env("KAIZEN_CACHE_DIR", super::cache_dir())
        .env("KAIZEN_TOOLCHAINS_DIR", super::toolchains_dir())
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
    let args: Vec<&str> = ["approve", "last"].iter().chain(args).copied().collect();
    super::at_home(home, &args)
}

/// `cmd` started with no terminal: its stdin empty, its output kept.
pub fn started(mut cmd: Command) -> Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// What a process [`started`] printed, once it has exited.
pub async fn output_of(child: Child) -> Output {
    tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap()
}

/// What a submitter from [`Cluster::submit_in_background`] printed; the
/// two minutes are a guard against a hang, not a measure.
pub async fn finished(submitted: JoinHandle<std::io::Result<Output>>) -> Output {
    tokio::time::timeout(Duration::from_secs(120), submitted)
        .await
        .expect("the submitter did not end")
        .unwrap()
        .unwrap()
}

/// Lines in the workspace file `name` (how often a command ran).
pub fn runs(ws: &Path, name: &str) -> usize {
    std::fs::read_to_string(ws.join(name))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}
