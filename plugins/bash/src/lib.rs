//! `bash`: the built-in `Bash`, `BashOutput` and `KillShell` tools, shaped
//! like Claude Code's tools of the same names.
//!
//! Commands run through the host's `process` import in the session's shell
//! named `bash`: every command is its own process tree inside the OS
//! sandbox, while the working directory and exported variables carry over
//! from one command to the next. Background commands become jobs with ids
//! that `BashOutput` reads and `KillShell` ends.
//!
//! The formatting of results is plain Rust, tested natively:
//! `cargo test --manifest-path plugins/Cargo.toml`.

mod format;

use format::{background_started, command_result, job_report};
use kaizen_sdk::host::process::{self, ProcessError};
use kaizen_sdk::prelude::*;

/// The shell every command of the session runs in.
const SHELL: &str = "bash";
/// Timeout when the call names none.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// Input of `Bash`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct BashInput {
    /// The command to execute.
    command: String,
    /// Optional timeout in milliseconds (max 600000). Defaults to 120000 (2 minutes).
    #[schemars(range(min = 1, max = 600000))]
    timeout: Option<u64>,
    /// Clear, concise description of what this command does in 5-10 words, in active voice. Examples: "Lists files in current directory", "Installs package dependencies".
    #[allow(dead_code)]
    description: Option<String>,
    /// Set to true to run this command in the background. Use BashOutput to read the output later.
    #[serde(default)]
    run_in_background: bool,
}

/// The `Bash` tool.
struct Bash;

impl Tool for Bash {
    const NAME: &'static str = "Bash";
    const DESCRIPTION: &'static str = "\
Executes a bash command in the session's persistent shell, inside an OS sandbox, with an optional timeout.

- The working directory and exported environment variables persist between commands: `cd src` \
or `export FOO=1` in one call still hold in the next.
- Commands can write only inside the workspace, the added directories and a private temporary \
directory ($TMPDIR); other files outside the system directories are invisible. Network access \
is off unless the operator granted it.
- Quote paths that contain spaces: cd \"path with spaces/file.txt\".
- timeout is in milliseconds (default 120000, at most 600000). A command that runs longer is \
killed together with every process it started, and the output so far is returned.
- Output (stdout and stderr together, in order) is cut at 30000 characters with a note.
- A non-zero exit status is reported with the output.
- Set run_in_background to true for long-running commands (servers, watchers, long builds): the \
call returns a job id at once; read the job's output with BashOutput and stop it with KillShell. \
Processes left running with `&` in a normal command end when that command returns.
- Prefer the dedicated tools for files: Glob to find files, Grep to search contents, Read to \
read, Edit and Write to change them. Use Bash for builds, tests, git and other programs.
- Chain dependent commands with `&&`; use `;` only when later commands should run even if \
earlier ones fail.";
    const READ_ONLY: bool = false;
    const DANGER: Danger = Danger::Dangerous;
    type Input = BashInput;

    fn call(_ctx: &CallContext, input: BashInput) -> Result<Output, ToolError> {
        if input.command.trim().is_empty() {
            return Err(ToolError::invalid_input(
                "command is empty: give the bash command to run",
            ));
        }
        if input.run_in_background {
            let id = process::spawn(SHELL, &input.command).map_err(process_error)?;
            return Ok(background_started(&id).into());
        }
        let timeout_ms = input.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        let output =
            process::shell_run(SHELL, &input.command, Some(timeout_ms)).map_err(process_error)?;
        Ok(command_result(&output, timeout_ms).into())
    }
}

/// Input of `BashOutput`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct BashOutputInput {
    /// The ID of the background shell to retrieve output from.
    bash_id: String,
    /// Optional regular expression to filter the output lines. Only lines matching this regex are included in the result; other lines are no longer available to read.
    filter: Option<String>,
}

/// The `BashOutput` tool.
struct BashOutput;

impl Tool for BashOutput {
    const NAME: &'static str = "BashOutput";
    const DESCRIPTION: &'static str = "\
Retrieves output from a running or completed background bash command (started with Bash and \
run_in_background).
- Returns only the output produced since the last read, with the job's status: running, \
completed (with its exit code) or killed.
- filter: an optional regular expression; only matching lines are returned (the rest of this \
batch is discarded).";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = BashOutputInput;

    fn call(_ctx: &CallContext, input: BashOutputInput) -> Result<Output, ToolError> {
        let filter = match input.filter.as_deref().filter(|f| !f.is_empty()) {
            Some(pattern) => Some(regex::Regex::new(pattern).map_err(|err| {
                ToolError::invalid_input(format!(
                    "filter `{pattern}` is not a valid regular expression: {err}"
                ))
            })?),
            None => None,
        };
        let output = process::read_job(&input.bash_id).map_err(process_error)?;
        Ok(job_report(&input.bash_id, &output, filter.as_ref()).into())
    }
}

/// Input of `KillShell`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct KillShellInput {
    /// The ID of the background shell to kill.
    shell_id: String,
}

/// The `KillShell` tool.
struct KillShell;

impl Tool for KillShell {
    const NAME: &'static str = "KillShell";
    const DESCRIPTION: &'static str = "\
Kills a running background bash command by its id, together with every process it started.
- Use it to stop servers, watchers or long commands started with run_in_background.
- The ids are the ones Bash returned.";
    const READ_ONLY: bool = false;
    const DANGER: Danger = Danger::Moderate;
    type Input = KillShellInput;

    fn call(_ctx: &CallContext, input: KillShellInput) -> Result<Output, ToolError> {
        process::kill_job(&input.shell_id).map_err(process_error)?;
        Ok(format!("Killed background shell {}.", input.shell_id).into())
    }
}

export_tools!(Bash, BashOutput, KillShell);

/// The tool error for a failure of the `process` import.
fn process_error(error: ProcessError) -> ToolError {
    match error {
        ProcessError::NotAllowed(why) => {
            ToolError::permission_denied(format!("the shell is not allowed to run: {why}"))
        }
        ProcessError::NotFound(why) => ToolError::not_found(why),
        ProcessError::Sandbox(why) => ToolError::failed(format!(
            "the command could not run because the OS sandbox is unavailable: {why}. \
             Nothing was executed; tell the user (`kaizen sandbox check` shows what the machine supports)."
        )),
        ProcessError::UnknownId(why) => ToolError::not_found(why),
        ProcessError::Failed(why) => ToolError::failed(why),
    }
}
