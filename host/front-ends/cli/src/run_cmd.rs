//! `kaizen run`: one task, start to finish, on Kaizen's loop
//! ([`kaizen_app::run`]). This front end reads the task, sets up who
//! answers (the terminal, or stream-json input) and shows the run.

use crate::answerers;
use crate::output::Printer;
use crate::run_options::RunOptions;
use crate::sdk_hooks::CallbackHook;
use crate::stream_input::StreamInput;
use kaizen_app::run::{Built, Compacted, NextTasks, Opened};
use kaizen_app::session_builder::{SetupError, usage};
use kaizen_loop::Inbox;
use kaizen_protocol::{CancellationToken, RunResult, Status};
use std::future::Future;
use std::sync::Arc;

/// Runs the task, or compacts the session (`kaizen sessions compact`);
/// returns the process exit code.
pub async fn run(mut options: RunOptions) -> Result<u8, SetupError> {
    let printer =
        Arc::new(Printer::new(options.format).with_partial_messages(options.partial_messages));
    let interrupt = CancellationToken::new();
    let signals = tokio::spawn(crate::signals::watch(interrupt.clone()));
    let code = match options.compact_only.take() {
        Some(json) => compact(options, &printer, &interrupt)
            .await
            .and_then(|done| {
                crate::sessions_cmd::compacted_report(&done.session_id, done.outcome, json)
            }),
        None => run_with(options, printer, interrupt)
            .await
            .map(|result| result.status.exit_code()),
    };
    signals.abort();
    code
}

/// Runs the task on Kaizen's loop, reporting to `printer`, until the
/// session's last run ends or `interrupt` stops it (the caller watches
/// for Ctrl-C: see [`crate::signals::watch`]); that run's result.
pub async fn run_with(
    mut options: RunOptions,
    printer: Arc<Printer>,
    interrupt: CancellationToken,
) -> Result<RunResult, SetupError> {
    let mut prompt = (
        options.system_prompt.take(),
        options.append_system_prompt.take(),
    );
    let (request, from) = options.into_request();
    let mut opened = Opened::open(request)?;
    let (mut input, first) = crate::task_input::stream_input(&from, &printer, &interrupt).await?;
    let own_hooks = match &mut input {
        Some(input) => from_the_program(input, &mut opened, &mut prompt)?,
        None => Vec::new(),
    };
    let task_given = from.argument.is_some();
    let task = crate::task_input::task_for(&opened, first, from.argument)?;
    let terminal = answerers::terminal_for(task_given, &printer, &interrupt);
    // Messages while the run works: from stream-json input, or typed at
    // the terminal.
    let inbox = match &input {
        Some(input) => Some(input.inbox()),
        None => terminal.is_some().then(Inbox::default),
    };
    let mut collaborators = answerers::collaborators(&input, terminal.clone(), inbox.clone())?;
    collaborators.hooks = own_hooks;
    let mut built = opened.build(task, collaborators).await?;
    built.set_system_prompt(prompt.0, prompt.1);
    printer.set_session(session_of(&built));
    // Typed lines go to the run only once the session is built: until
    // then the terminal may be asked whether to trust the workspace.
    if let (Some(terminal), Some(inbox)) = (&terminal, &inbox) {
        terminal.queue_into(inbox.clone());
    }
    printer.set_warnings(built.warnings().to_vec());
    let mut shown = Shown {
        printer: printer.clone(),
        input,
    };
    let result = built.run(&*printer, &mut shown, &interrupt).await;
    if result.status != Status::Complete {
        eprintln!(
            "kaizen: session {id} stopped ({status}); continue it with: kaizen run --resume {id}",
            id = result.session_id,
            status = result.status.as_str()
        );
    }
    Ok(result)
}

/// What the program driving the session serves and asked for: its MCP
/// servers (`"type": "sdk"`) are reached through its input; its
/// handshake may name them, set the system prompt where no flag did, and
/// bring hooks of its own (returned).
fn from_the_program(
    input: &mut StreamInput,
    opened: &mut Opened,
    prompt: &mut (Option<String>, Option<String>),
) -> Result<Vec<Arc<dyn kaizen_hooks::Hook>>, SetupError> {
    let mcp = opened.mcp();
    mcp.embedder = Some(Arc::new(input.channel()));
    let Some(handshake) = input.take_handshake() else {
        return Ok(Vec::new());
    };
    mcp.embedded.extend(handshake.sdk_mcp_servers);
    mcp.configs.extend(handshake.mcp_config);
    prompt.0 = prompt.0.take().or(handshake.system_prompt);
    prompt.1 = prompt.1.take().or(handshake.append_system_prompt);
    let mut hooks = Vec::new();
    for spec in handshake.hooks {
        let hook =
            CallbackHook::new(spec, input.channel()).map_err(|why| usage(anyhow::anyhow!(why)))?;
        hooks.push(Arc::new(hook) as Arc<dyn kaizen_hooks::Hook>);
    }
    Ok(hooks)
}

/// What stream-json's `init` message says of the session beyond the run's
/// start: the mode, and the skills, commands and agents it offers.
fn session_of(built: &Built) -> crate::claude_stream::Session {
    let catalogue = built.catalogue();
    let skills: Vec<String> = catalogue.skills.iter().map(|s| s.name.clone()).collect();
    let mut slash_commands = skills.clone();
    slash_commands.extend(catalogue.commands.iter().map(|c| c.name.clone()));
    crate::claude_stream::Session {
        permission_mode: built.permission_mode().as_str().to_string(),
        slash_commands,
        skills,
        agents: catalogue.agents.iter().map(|a| a.name.clone()).collect(),
    }
}

/// Compacts the resumed session's conversation, reporting to `printer`.
async fn compact(
    options: RunOptions,
    printer: &Arc<Printer>,
    interrupt: &CancellationToken,
) -> Result<Compacted, SetupError> {
    let (request, _) = options.into_request();
    let opened = Opened::open(request)?;
    let collaborators = answerers::collaborators(&None, None, None)?;
    opened.compact(collaborators, &**printer, interrupt).await
}

/// Each run shown to its end on the printer; the next tasks come from
/// stream-json input, when the task came that way.
struct Shown {
    printer: Arc<Printer>,
    input: Option<StreamInput>,
}

impl NextTasks for Shown {
    async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        inbox: Option<&Inbox>,
        interrupt: &CancellationToken,
    ) -> RunResult {
        let result = self.input.drive(run, inbox, interrupt).await;
        self.printer.finish(&result);
        result
    }

    async fn next(&mut self) -> Option<String> {
        self.input.next().await
    }
}
