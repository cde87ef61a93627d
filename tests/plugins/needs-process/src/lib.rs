//! `needs-process`: calls the `process` host interface, so its component
//! imports `kaizen:plugin/process`; the host must refuse to load it unless
//! that capability is granted.

use kaizen_sdk::host::process::{self, Command};
use kaizen_sdk::prelude::*;

/// Input of `Run`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct RunInput {
    /// The program to run, without arguments.
    program: String,
}

struct Run;

impl Tool for Run {
    const NAME: &'static str = "Run";
    const DESCRIPTION: &'static str =
        "Runs a program in the host's sandbox and returns its output.";
    const DANGER: Danger = Danger::Dangerous;
    type Input = RunInput;

    fn call(_ctx: &CallContext, input: RunInput) -> Result<Output, ToolError> {
        let command = Command {
            program: input.program,
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            stdin: None,
            timeout_ms: Some(10_000),
        };
        let output = process::run(&command).map_err(|err| ToolError::failed(format!("{err:?}")))?;
        let code = output
            .exit_code
            .map_or_else(|| "none".to_owned(), |c| c.to_string());
        Ok(Output::text(format!(
            "exit: {code}\n{}",
            String::from_utf8_lossy(&output.stdout)
        )))
    }
}

export_tools!(Run);
