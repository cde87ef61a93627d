//! `kaizen eval`: runs task folders with each planner and reports, per
//! task and planner, whether the task's check passed, the model calls, the
//! tokens and the cost. A task folder (the shape of Terminal-Bench's,
//! without the container) holds:
//!
//! - `task.toml`: `instruction = "..."`, and optionally `max-cycles`;
//! - `workspace/`: the files the task starts from (copied for each run);
//! - `check.sh`: run with bash in the workspace after the run, in the OS
//!   sandbox (the run's workspace writable, the task folder readable, no
//!   network, no provider key: it judges files the model wrote, which may
//!   be hostile); exit 0 means the task was done;
//! - `script.json` (optional): the scripted model's turns, for offline runs
//!   against `kaizen-model-server` (the harness itself never reads it).
//!
//! Each run is `kaizen run` in a fresh copy of the workspace, against
//! whatever model the flags and environment choose, so the same command
//! compares planners on a real model.

use anyhow::{Context as _, bail};
use kaizen_sandbox::launcher::{self, Unconfined};
use kaizen_sandbox::{Containment, Sandbox};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The file that makes a directory a task.
const TASK_FILE: &str = "task.toml";
/// How long a task's check may run.
const CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// `kaizen eval`'s arguments.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// Task folders, or folders holding task folders.
    #[arg(required = true)]
    tasks: Vec<PathBuf>,
    /// A planner to run each task with (repeatable; `none` is the plain
    /// loop, the default).
    #[arg(long, value_name = "NAME|PATH")]
    planner: Vec<String>,
    /// The model (as for `kaizen run`).
    #[arg(long)]
    model: Option<String>,
    /// The provider (as for `kaizen run`).
    #[arg(long)]
    provider: Option<String>,
    /// Model calls per run at most (a task's own max-cycles is lower still).
    #[arg(long, default_value_t = 30)]
    max_cycles: u32,
    /// USD per run at most.
    #[arg(long, default_value_t = kaizen_runtime::DEFAULT_BUDGET_USD)]
    budget_usd: f64,
    /// Seconds per run at most.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
    /// The runs' permission mode: nobody is there to approve, and each run
    /// works in a scratch copy in the OS sandbox.
    #[arg(long, value_name = "MODE", default_value = "bypassPermissions")]
    permission_mode: String,
    /// One JSON object per line (per run, then per planner) instead of a
    /// table.
    #[arg(long)]
    json: bool,
}

impl EvalArgs {
    /// The options these arguments ask for.
    pub fn into_options(self) -> EvalOptions {
        let mut flags = vec![
            "--budget-usd".to_string(),
            self.budget_usd.to_string(),
            "--timeout".to_string(),
            self.timeout.to_string(),
            "--permission-mode".to_string(),
            self.permission_mode,
        ];
        for (flag, value) in [("--model", self.model), ("--provider", self.provider)] {
            if let Some(value) = value {
                flags.extend([flag.to_string(), value]);
            }
        }
        EvalOptions {
            tasks: self.tasks,
            planners: self.planner,
            run_flags: flags,
            max_cycles: self.max_cycles,
            json: self.json,
        }
    }
}

/// What `kaizen eval` was asked to do.
pub struct EvalOptions {
    /// Task folders, or folders of task folders.
    pub tasks: Vec<PathBuf>,
    /// Planner names or directories; `none` for the plain loop.
    pub planners: Vec<String>,
    /// Flags passed to every `kaizen run` (`--model`, limits, ...).
    pub run_flags: Vec<String>,
    /// Model calls per run at most (a task's own cap may be lower).
    pub max_cycles: u32,
    /// One JSON object per line instead of a table.
    pub json: bool,
}

/// `task.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct TaskFile {
    /// What the agent is asked to do.
    instruction: String,
    /// A cap on model calls for this task, over the flags'.
    max_cycles: Option<u32>,
}

/// One task.
struct Task {
    name: String,
    dir: PathBuf,
    spec: TaskFile,
}

/// One task run with one planner.
#[derive(Debug, Serialize)]
struct Row {
    task: String,
    planner: String,
    passed: bool,
    status: String,
    cycles: u64,
    model_calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    cost_usd: f64,
    duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Runs the evaluation; the exit code (1 when a task could not be run).
pub async fn eval(options: EvalOptions) -> anyhow::Result<u8> {
    let tasks = find_tasks(&options.tasks)?;
    if tasks.is_empty() {
        bail!("no task folder (a directory with {TASK_FILE}) in the paths given");
    }
    let planners = if options.planners.is_empty() {
        vec!["none".to_string()]
    } else {
        options.planners.clone()
    };
    let containment =
        kaizen_app::plugin_host::state_containment(&kaizen_app::config::kaizen_home()?)?;
    let mut rows = Vec::new();
    for task in &tasks {
        for planner in &planners {
            let row = run_one(task, planner, &options, &containment).await?;
            if options.json {
                println!("{}", serde_json::to_string(&row)?);
            } else {
                eprintln!(
                    "kaizen eval: {} with {}: {}",
                    row.task,
                    row.planner,
                    if row.passed { "passed" } else { "failed" }
                );
            }
            rows.push(row);
        }
    }
    report(&rows, &planners, options.json)?;
    Ok(0)
}

/// The tasks under `paths`, by name.
fn find_tasks(paths: &[PathBuf]) -> anyhow::Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for path in paths {
        if path.join(TASK_FILE).is_file() {
            tasks.push(read_task(path)?);
            continue;
        }
        let entries =
            std::fs::read_dir(path).with_context(|| format!("reading {}", path.display()))?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|dir| dir.join(TASK_FILE).is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            tasks.push(read_task(&dir)?);
        }
    }
    Ok(tasks)
}

fn read_task(dir: &Path) -> anyhow::Result<Task> {
    // Absolute: the check runs in the workspace's copy.
    let dir = &dir
        .canonicalize()
        .with_context(|| format!("reading {}", dir.display()))?;
    let file = dir.join(TASK_FILE);
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let spec: TaskFile =
        toml::from_str(&text).with_context(|| format!("{} is not a task file", file.display()))?;
    if !dir.join("check.sh").is_file() {
        bail!("{} has no check.sh", dir.display());
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Task {
        name,
        dir: dir.to_path_buf(),
        spec,
    })
}

/// Runs `task` with `planner` in a fresh copy of its workspace, then its
/// check.
async fn run_one(
    task: &Task,
    planner: &str,
    options: &EvalOptions,
    containment: &Containment,
) -> anyhow::Result<Row> {
    let scratch = tempfile::tempdir()?;
    let workspace = scratch.path().join("workspace");
    let seed = task.dir.join("workspace");
    if seed.is_dir() {
        kaizen_app::kits::copy_tree(&seed, &workspace)?;
    } else {
        std::fs::create_dir_all(&workspace)?;
    }
    let me = std::env::current_exe().context("finding the kaizen binary")?;
    // Kaizen itself, with the caller's environment (the provider's key):
    // it confines what the run does.
    let mut run = launcher::unconfined_async(Unconfined::KaizenItself, me);
    run.envs(std::env::vars_os())
        .arg("run")
        .arg("--cwd")
        .arg(&workspace)
        .args(["--output-format", "stream-json"])
        .args(&options.run_flags);
    let max_cycles = task
        .spec
        .max_cycles
        .map_or(options.max_cycles, |own| own.min(options.max_cycles));
    run.args(["--max-cycles", &max_cycles.to_string()]);
    if planner != "none" {
        run.args(["--planner", planner]);
    }
    run.arg(&task.spec.instruction)
        .current_dir(&workspace)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let output = run.output().await.context("starting kaizen run")?;
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let mut row = tally(task, planner, &lines);
    if lines.last().is_none_or(|last| last["type"] != "result") {
        let stderr = String::from_utf8_lossy(&output.stderr);
        row.error = Some(format!("kaizen run printed no result: {}", stderr.trim()));
        return Ok(row);
    }
    row.passed = check(task, &workspace, containment).await?;
    Ok(row)
}

/// The row's numbers, from the run's `stream-json` lines.
fn tally(task: &Task, planner: &str, lines: &[serde_json::Value]) -> Row {
    let count = |kind: &str| lines.iter().filter(|l| l["type"] == kind).count() as u64;
    let extra_candidates: u64 = lines
        .iter()
        .filter(|l| l["type"] == "planner")
        .filter_map(|l| l["candidates"].as_u64())
        .map(|n| n.saturating_sub(1))
        .sum();
    let result = lines
        .last()
        .filter(|l| l["type"] == "result")
        .cloned()
        .unwrap_or_default();
    Row {
        task: task.name.clone(),
        planner: planner.to_string(),
        passed: false,
        status: result["status"].as_str().unwrap_or("error").to_string(),
        cycles: result["cycles_used"].as_u64().unwrap_or(0),
        model_calls: count("assistant") + count("plugin_completion") + extra_candidates,
        input_tokens: result["tokens_used"]["input"].as_u64().unwrap_or(0),
        output_tokens: result["tokens_used"]["output"].as_u64().unwrap_or(0),
        cost_usd: result["cost_usd"].as_f64().unwrap_or(0.0),
        duration_ms: result["duration_ms"].as_u64().unwrap_or(0),
        error: result["error_message"].as_str().map(str::to_string),
    }
}

/// Runs the task's check in `workspace`, in the OS sandbox (`workspace`
/// writable, the task's folder readable); true when it exits 0 in time.
async fn check(task: &Task, workspace: &Path, containment: &Containment) -> anyhow::Result<bool> {
    let mut containment = containment.clone();
    containment.writable = vec![workspace.to_path_buf()];
    containment.readable = vec![task.dir.clone()];
    let sandbox = Sandbox::new(containment.policy(containment.session_scope(), &[]))
        .context("starting the OS sandbox for check.sh")?;
    let output = sandbox
        .run(kaizen_sandbox::Command {
            program: "bash".into(),
            args: vec![task.dir.join("check.sh").display().to_string()],
            cwd: Some(workspace.to_path_buf()),
            timeout: Some(CHECK_TIMEOUT),
            ..kaizen_sandbox::Command::default()
        })
        .await
        .context("running check.sh")?;
    Ok(!output.timed_out && output.exit_code == Some(0))
}

/// The summary per planner, after the rows.
fn report(rows: &[Row], planners: &[String], json: bool) -> anyhow::Result<()> {
    if !json {
        println!(
            "{:<28} {:<22} {:<6} {:>6} {:>6} {:>9} {:>9} {:>9}",
            "task", "planner", "passed", "cycles", "calls", "in tok", "out tok", "cost $"
        );
        for row in rows {
            println!(
                "{:<28} {:<22} {:<6} {:>6} {:>6} {:>9} {:>9} {:>9.4}",
                row.task,
                row.planner,
                if row.passed { "yes" } else { "no" },
                row.cycles,
                row.model_calls,
                row.input_tokens,
                row.output_tokens,
                row.cost_usd
            );
        }
        println!();
    }
    for planner in planners {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.planner == planner).collect();
        let passed = mine.iter().filter(|r| r.passed).count();
        let calls: u64 = mine.iter().map(|r| r.model_calls).sum();
        let tokens: u64 = mine.iter().map(|r| r.input_tokens + r.output_tokens).sum();
        let cost: f64 = mine.iter().map(|r| r.cost_usd).sum();
        if json {
            let summary = serde_json::json!({
                "summary": planner, "passed": passed, "tasks": mine.len(),
                "model_calls": calls, "tokens": tokens, "cost_usd": cost,
            });
            println!("{summary}");
        } else {
            println!(
                "{planner}: {passed}/{} passed, {calls} model calls, {tokens} tokens, ${cost:.4}",
                mine.len()
            );
        }
    }
    Ok(())
}
