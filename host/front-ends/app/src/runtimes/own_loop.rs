//! Kaizen's own loop as a runtime beside the external ones: what it can
//! do, whether it can run here, and an adapter over the front end's way of
//! running it (its answerers and its output go with the run).

use crate::session_builder::SetupError;
use futures::future::BoxFuture;
use kaizen_llm::{HttpSettings, process_env, select_provider};
use kaizen_protocol::{CancellationToken, Observer, RUNTIME_NAME, RunResult};
use kaizen_runtimes::{
    Availability, CostReporting, ExecuteFuture, Execution, ExecutionContext, RuntimeAdapter,
    RuntimeCapabilities, RuntimeError, Vendor,
};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A run of Kaizen's loop to its result; a setup failure with exit code
/// 2 is one where nothing ran (a missing provider, a setting the loop
/// cannot take).
pub type LoopFuture = BoxFuture<'static, Result<RunResult, SetupError>>;

/// The front end's run of the task, started with the interrupt that
/// stops it.
type LoopRun = Box<dyn FnOnce(CancellationToken) -> LoopFuture + Send>;

/// Kaizen's loop for one task: the front end runs the task it was made
/// for (the context is made from the same request), reporting to its own
/// output.
pub struct OwnLoop {
    model: Option<String>,
    run: Mutex<Option<LoopRun>>,
}

impl OwnLoop {
    /// The loop that `run` runs, on `model` (the configured default when
    /// `None`).
    pub fn new(
        model: Option<String>,
        run: impl FnOnce(CancellationToken) -> LoopFuture + Send + 'static,
    ) -> Self {
        Self {
            model,
            run: Mutex::new(Some(Box::new(run))),
        }
    }
}

/// What Kaizen's loop can do.
pub fn capabilities() -> RuntimeCapabilities {
    RuntimeCapabilities {
        vendors: vec![Vendor::Anthropic, Vendor::Openai, Vendor::Ollama],
        default_model: "the configured provider's default".to_string(),
        tools: [
            "Bash",
            "BashOutput",
            "KillShell",
            "Read",
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "Glob",
            "Grep",
            "WebFetch",
            "WebSearch",
            "TodoWrite",
            "Task",
            "AskUserQuestion",
            "Memory",
        ]
        .map(String::from)
        .to_vec(),
        sandbox: vec![
            "every tool a WebAssembly component with only its grants".to_string(),
            "programs under Landlock, seccomp and namespaces".to_string(),
        ],
        mcp: true,
        streaming: true,
        cost: CostReporting::Reported,
        resume: true,
        max_context_tokens: 200_000,
    }
}

/// Whether Kaizen's loop can run `model` (the default model when `None`)
/// here: it needs a provider for it.
pub fn availability(model: Option<&str>) -> Availability {
    let version = Some(env!("CARGO_PKG_VERSION").to_string());
    let path = std::env::current_exe().ok();
    match select_provider(model, None, &process_env, &HttpSettings::default()) {
        Ok(_) => Availability::ready(path, version),
        Err(err) => Availability {
            installed: true,
            path,
            version,
            problem: Some(err.to_string()),
        },
    }
}

impl RuntimeAdapter for OwnLoop {
    fn name(&self) -> &str {
        RUNTIME_NAME
    }

    fn capabilities(&self) -> RuntimeCapabilities {
        capabilities()
    }

    fn availability(&self, _env: &BTreeMap<String, String>) -> Availability {
        availability(self.model.as_deref())
    }

    fn execute<'a>(
        &'a self,
        _context: &'a ExecutionContext,
        _observer: &'a dyn Observer,
        interrupt: &'a CancellationToken,
    ) -> ExecuteFuture<'a> {
        Box::pin(async move {
            let failed = |why: String| RuntimeError::Failed {
                runtime: RUNTIME_NAME.to_string(),
                why,
            };
            let run = self
                .run
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .ok_or_else(|| failed("it has already run this task".to_string()))?;
            match run(interrupt.clone()).await {
                Ok(result) => Ok(Execution {
                    result,
                    notes: Vec::new(),
                }),
                // A usage error here is a missing provider or a setting
                // the loop cannot take: nothing ran.
                Err(err) if err.code == 2 => Err(RuntimeError::Unavailable {
                    runtime: RUNTIME_NAME.to_string(),
                    why: format!("{:#}", err.error),
                }),
                Err(err) => Err(failed(format!("{:#}", err.error))),
            }
        })
    }
}
