//! Kaizen's sessions on a Restate cluster, measured: the real Restate
//! server (from npm, as the cluster tests install it), real `kaizen
//! worker`s (two behind a TCP load balancer where it says so), and a
//! zero-latency scripted model server that answers by the conversation's
//! position (so concurrent sessions each get their own script), the
//! built-in Bash tool in the real sandbox.
//!
//! Prints:
//! - **added latency per step**: the same 10-command task (11 model calls
//!   and 10 Bash steps) by `kaizen run` here and by `kaizen run --cluster`,
//!   medians of `REPS`; the difference over the 21 journaled steps;
//! - **throughput**: `SESSIONS` sessions (default 200; the variable
//!   `KAIZEN_BENCH_SESSIONS` sets it) of one command each, sent at once to
//!   two workers behind the balancer; sessions per second, first send to
//!   last result, and how many turns each worker ran;
//! - **memory**: each worker's resident memory before, at its peak
//!   during, and after them (what an idle session costs a worker), and the
//!   session store's bytes per session;
//! - **resume time**: from killing the worker running a turn (SIGKILL)
//!   mid-step to the turn's result, which the other worker finishes.
//!
//! Asserts only that every session completed. The whole bench runs in a
//! network namespace of its own with only loopback.
//!
//! Run with `cargo bench -p kaizen --bench cluster`.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::{median, mib, ms};
use kaizen_cluster::{Cluster, TurnRequest};
use kaizen_model_server::{ModelServer, Options, Reply, Script};
use kaizen_protocol::Status;
use kaizen_test_support::netns::{self, Isolation};
use kaizen_test_support::restate::{self, ADMIN, INGRESS};
use kaizen_test_support::{KillOnDrop, balancer};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const REPS: usize = 5;
const KEY: &str = "sk-bench-key-0123456789";
const MODEL: &str = "gpt-4.1-mini";
/// Where the workers listen.
const WORKER_PORTS: [u16; 2] = [9181, 9182];
/// The load balancer in front of them.
const BALANCER_PORT: u16 = 9180;

fn main() {
    // Outside the namespace: install (that needs the registry), then run
    // this bench again inside one.
    let server = restate::install(env!("CARGO_TARGET_TMPDIR"));
    match netns::program_isolated(env!("CARGO_TARGET_TMPDIR")) {
        Isolation::Inside => {}
        Isolation::Ran(status) => std::process::exit(status.code().unwrap_or(1)),
        Isolation::OptedOut => return,
    }
    let sessions = std::env::var("KAIZEN_BENCH_SESSIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(bench(&server, sessions));
}

/// A task of `commands` Bash commands, then an answer.
fn script(commands: &[&str]) -> Script {
    let mut script = Script::new();
    for command in commands {
        script = script.reply(
            Reply::tool("Bash", &json!({ "command": command }).to_string()).with_usage(100, 10),
        );
    }
    script.reply(Reply::text("done").with_usage(100, 10))
}

/// A model server answering `script` by position, at once.
async fn model_server(script: Script) -> ModelServer {
    let options = Options {
        pace: None,
        by_position: true,
        ..Options::default()
    };
    ModelServer::start_with(script, options)
        .await
        .expect("the model server")
}

/// Where one setup's files go.
struct Place {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Place {
    fn new() -> Self {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cluster-bench");
        std::fs::create_dir_all(&root).expect("the bench's directory");
        Self {
            home: tempfile::tempdir_in(&root).expect("a home"),
            ws: tempfile::tempdir_in(&root).expect("a workspace"),
        }
    }

    /// `kaizen ARGS` with this home and `server` as the provider.
    fn kaizen(&self, server: &ModelServer, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
        cmd.args(args)
            .env("KAIZEN_HOME", self.home.path())
            .env(
                "KAIZEN_CACHE_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache"),
            )
            .env("CLAUDE_CONFIG_DIR", self.home.path().join("no-claude"))
            .env("OPENAI_API_KEY", KEY)
            .env("OPENAI_BASE_URL", server.openai_base_url())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("KAIZEN_MODEL")
            .env_remove("KAIZEN_LOG");
        cmd
    }

    /// A worker on `port`, registered with the cluster when `register`
    /// (as the balancer's address when `behind`).
    fn worker(&self, server: &ModelServer, port: u16, register: bool, behind: bool) -> KillOnDrop {
        let listen = format!("127.0.0.1:{port}");
        let admin = format!("http://127.0.0.1:{ADMIN}");
        let balancer = format!("http://127.0.0.1:{BALANCER_PORT}");
        let root = std::env::temp_dir().display().to_string();
        let mut args = vec!["worker", "--listen", &listen, "--root", &root];
        if register {
            args.extend(["--register", &admin]);
            if behind {
                args.extend(["--advertise", &balancer]);
            }
        }
        let log = self.log(port);
        let mut cmd = self.kaizen(server, &args);
        cmd.stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("the worker's log"));
        let worker = KillOnDrop(cmd.spawn().expect("spawning kaizen worker"));
        restate::wait_for("the worker", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                && (!register
                    || std::fs::read_to_string(&log).is_ok_and(|l| l.contains("registered")))
        })
        .unwrap_or_else(|err| panic!("{err}: {}", std::fs::read_to_string(&log).unwrap()));
        worker
    }

    /// Two workers behind the balancer, registered through it.
    fn two_workers(&self, server: &ModelServer) -> [KillOnDrop; 2] {
        let second = self.worker(server, WORKER_PORTS[1], false, true);
        let first = self.worker(server, WORKER_PORTS[0], true, true);
        [first, second]
    }

    /// The log of the worker on `port`.
    fn log(&self, port: u16) -> PathBuf {
        self.home.path().join(format!("worker-{port}.log"))
    }

    /// How many turns the worker on `port` started.
    fn turns_started(&self, port: u16) -> usize {
        std::fs::read_to_string(self.log(port))
            .unwrap_or_default()
            .matches("turn started")
            .count()
    }

    /// A turn of session `session` running `task`.
    fn turn(&self, session: usize, task: &str) -> TurnRequest {
        TurnRequest {
            turn: format!("turn-{session}"),
            task: task.to_string(),
            model: Some(MODEL.into()),
            cwd: Some(self.ws.path().display().to_string()),
            max_cycles: 50,
            budget_usd: 10.0,
            permission_mode: Some("bypassPermissions".into()),
            ..TurnRequest::default()
        }
    }
}

/// One run of `kaizen ARGS`, which must succeed: its wall time.
fn timed(mut cmd: Command) -> Duration {
    let started = Instant::now();
    let out = cmd.output().expect("running kaizen");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// A process's resident memory and its peak, in KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The bytes of the files under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => bytes_under(&entry.path()),
            _ => entry.metadata().map_or(0, |meta| meta.len()),
        })
        .sum()
}

async fn bench(server_bin: &Path, sessions: usize) {
    let data = tempfile::tempdir().expect("the server's directory");
    let _restate = restate::start(server_bin, data.path());
    let ingress = format!("http://127.0.0.1:{INGRESS}");
    let admin = format!("http://127.0.0.1:{ADMIN}");
    println!("load average: {}", common::load_average());

    // Added latency per step: the same task here and on the cluster.
    let commands = ["true"; 10];
    let server = model_server(script(&commands)).await;
    let place = Place::new();
    let worker = place.worker(&server, WORKER_PORTS[0], true, false);
    let task = "run true ten times";
    let ws = place.ws.path().display().to_string();
    // The median wall time of the task run with `placement`'s flags.
    let timed_run = |placement: &[&str]| {
        let args = [
            &["run"][..],
            placement,
            &[
                "--output-format",
                "json",
                "--model",
                MODEL,
                "--permission-mode",
                "bypassPermissions",
                "--cwd",
                &ws,
                task,
            ],
        ]
        .concat();
        median((0..REPS).map(|_| timed(place.kaizen(&server, &args))))
    };
    let local = timed_run(&[]);
    let clustered = timed_run(&["--cluster", &ingress]);
    let steps = 2 * commands.len() as u32 + 1;
    println!(
        "10-command task: here {:.1} ms, on the cluster {:.1} ms; added per journaled step ({steps}): {:.2} ms",
        ms(local),
        ms(clustered),
        ms(clustered.saturating_sub(local) / steps)
    );
    drop(worker);
    drop(server);

    // Throughput and memory: many one-command sessions at once, on two
    // workers behind the balancer.
    let backends = WORKER_PORTS.map(|port| ([127, 0, 0, 1], port).into());
    balancer::start(([127, 0, 0, 1], BALANCER_PORT).into(), backends.to_vec())
        .expect("the load balancer");
    let server = model_server(script(&["true"])).await;
    let place = Place::new();
    let workers = place.two_workers(&server);
    let pids = workers.each_ref().map(|worker| worker.0.id());
    let before = pids.map(|pid| rss_kib(pid).0);
    let cluster = Cluster::new(&ingress, &admin).expect("an HTTP client");
    let started = Instant::now();
    let submitted = futures::future::join_all((0..sessions).map(|i| {
        let cluster = &cluster;
        let request = place.turn(i, "run true once");
        async move {
            let turn = cluster
                .submit(&format!("bench-{i}"), &request)
                .await
                .expect("submitting");
            cluster.result(&turn).await.expect("a result")
        }
    }))
    .await;
    let took = started.elapsed();
    let incomplete = submitted
        .iter()
        .filter(|result| result.status != Status::Complete)
        .count();
    assert_eq!(incomplete, 0, "sessions that did not complete");
    let after = pids.map(rss_kib);
    let ran = WORKER_PORTS.map(|port| place.turns_started(port));
    println!(
        "{sessions} sessions at once on two workers: {:.1} s, {:.1} sessions/s; turns run by each worker: {} and {}",
        took.as_secs_f64(),
        sessions as f64 / took.as_secs_f64(),
        ran[0],
        ran[1]
    );
    for (i, ((before, (after, peak)), ran)) in before.iter().zip(after).zip(ran).enumerate() {
        println!(
            "worker {i} memory: {:.1} MiB before, {:.1} MiB at peak ({:.2} MiB per turn it ran), {:.1} MiB after ({:.1} KiB per idle session)",
            mib(*before),
            mib(peak),
            mib(peak.saturating_sub(*before)) / ran.max(1) as f64,
            mib(after),
            after.saturating_sub(*before) as f64 / ran.max(1) as f64
        );
    }
    println!(
        "session store: {:.1} KiB per session",
        bytes_under(&place.home.path().join("sessions")) as f64 / 1024.0 / sessions as f64
    );
    drop(workers);
    drop(server);

    // Resume: the worker running a turn is killed while a step runs; the
    // other finishes the turn.
    let server = model_server(script(&["touch started && sleep 30"])).await;
    let place = Place::new();
    let mut workers = place.two_workers(&server).map(Some);
    let turn = cluster
        .submit("resumed", &place.turn(0, "wait"))
        .await
        .expect("submitting");
    let started_file: PathBuf = place.ws.path().join("started");
    restate::wait_for("the step to start", || started_file.exists()).expect("the step");
    let busy = (0..2)
        .find(|&i| place.turns_started(WORKER_PORTS[i]) > 0)
        .expect("a worker runs the turn");
    let killed = Instant::now();
    drop(workers[busy].take());
    let result = cluster.result(&turn).await.expect("a result");
    let resumed = killed.elapsed();
    assert_eq!(result.status, Status::Complete, "{result:?}");
    assert_eq!(place.turns_started(WORKER_PORTS[1 - busy]), 1);
    println!(
        "resume after the worker running a turn was killed mid-step: {:.1} ms to the turn's result (from the other worker)",
        ms(resumed)
    );
    println!("medians of {REPS} runs where repeated; the model answers at once");
}
