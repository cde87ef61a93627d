//! Kaizen's own loop as a runtime beside the external ones: the same run
//! as `kaizen run`, in this process, with its plugins, sandbox and session.

use crate::output::Printer;
use crate::run_cmd::{self, Finished};
use crate::run_options::RunOptions;
use kaizen_llm::{HttpSettings, process_env, select_provider};
use kaizen_protocol::{CancellationToken, Observer, RUNTIME_NAME};
use kaizen_runtimes::{
    Availability, CostReporting, ExecuteFuture, Execution, ExecutionContext, RuntimeAdapter,
    RuntimeCapabilities, RuntimeError, Vendor,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Kaizen's loop, for one `kaizen run`: it runs the options it was made
/// with (the context is made from the same options), reporting to the
/// run's printer.
pub struct LocalRuntime {
    options: Mutex<Option<RunOptions>>,
    printer: Arc<Printer>,
}

impl LocalRuntime {
    /// The loop that would run `options`, reporting to `printer`.
    pub fn new(options: RunOptions, printer: Arc<Printer>) -> Self {
        Self {
            options: Mutex::new(Some(options)),
            printer,
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

impl RuntimeAdapter for LocalRuntime {
    fn name(&self) -> &str {
        RUNTIME_NAME
    }

    fn capabilities(&self) -> RuntimeCapabilities {
        capabilities()
    }

    fn availability(&self, _env: &BTreeMap<String, String>) -> Availability {
        let options = self.options.lock().unwrap_or_else(|e| e.into_inner());
        availability(options.as_ref().and_then(|o| o.model.as_deref()))
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
            let options = self
                .options
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .ok_or_else(|| failed("it has already run this task".to_string()))?;
            match run_cmd::run_with(options, self.printer.clone(), interrupt.clone()).await {
                Ok(Finished::Ran(result)) => Ok(Execution {
                    result: *result,
                    notes: Vec::new(),
                }),
                Ok(Finished::Compacted(_)) => Err(failed("it compacted instead of running".into())),
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
