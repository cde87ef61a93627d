//! Kaizen embedded in another program: a session started in process, its
//! events streamed as they come, and its tool calls that ask approved by
//! code instead of a person.
//!
//! ```sh
//! cargo run -p kaizen-app --example embed -- \
//!     --replay examples/list-sources.jsonl --cwd examples/sample-project \
//!     "List the Rust source files in this project."
//! ```
//!
//! Without `--replay`, the provider comes from the environment
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `OLLAMA_HOST`), as for
//! `kaizen run`. The session is kept under `$KAIZEN_HOME/sessions` like any
//! other: `kaizen sessions list` shows it.

use kaizen_app::notices::Notices;
use kaizen_app::permission_flags::PermissionArgs;
use kaizen_app::plugin_loading::Selection;
use kaizen_app::session_builder::{Collaborators, Ready, SessionBuilder, SessionRequest, Start};
use kaizen_protocol::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, Event, Observer,
};
use std::path::PathBuf;
use std::sync::Arc;

/// Prints each event as one JSON line, as `--output-format events`
/// does.
struct PrintEvents;

impl Observer for PrintEvents {
    fn on_event(&self, event: &Event) {
        if let Ok(line) = serde_json::to_string(event) {
            println!("{line}");
        }
    }
}

/// Approves what only reads, and refuses the rest with a reason the
/// model sees.
struct ReadsOnly;

impl Approver for ReadsOnly {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            match request.tool.as_str() {
                "Read" | "Glob" | "Grep" => Approval::Once,
                tool => Approval::Deny(format!("this program only allows reading, not {tool}")),
            }
        })
    }
}

/// `--replay FILE`, `--cwd DIR` and the task, from the command line.
fn arguments() -> anyhow::Result<(Option<PathBuf>, Option<PathBuf>, String)> {
    let (mut replay, mut cwd, mut task) = (None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--replay" => replay = args.next().map(PathBuf::from),
            "--cwd" => cwd = args.next().map(PathBuf::from),
            _ => task = Some(arg),
        }
    }
    let task =
        task.ok_or_else(|| anyhow::anyhow!("usage: embed [--replay FILE] [--cwd DIR] TASK"))?;
    Ok((replay, cwd, task))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (replay, cwd, task) = arguments()?;
    let request = SessionRequest {
        selection: Selection {
            cwd,
            ..Selection::default()
        },
        permissions: PermissionArgs::default(),
        model: None,
        provider: None,
        replay,
        record: None,
        planner: None,
        max_cycles: 20,
        budget_usd: 1.0,
        timeout: Some(300.0),
        start: Start::New {
            id: None,
            made_before: false,
            task: task.clone(),
        },
        recall_for: Some(task.clone()),
    };
    let collaborators = Collaborators {
        approver: Some(Arc::new(ReadsOnly)),
        // What the set-up has to say (configuration left out, a server
        // that did not start): here, on stderr.
        notices: Notices::new(|notice| eprintln!("{notice}")),
        ..Collaborators::nobody()
    };
    let Ready {
        session,
        mut state,
        config,
    } = SessionBuilder::new(request, collaborators)
        .build()
        .await
        .map_err(|failure| failure.error)?;
    let agent = session.agent(config, &PrintEvents);
    let result = agent
        .run(&mut state, &task, &CancellationToken::new())
        .await;
    for problem in session.end(&state.session_id) {
        eprintln!("the session could not be kept in full: {problem}");
    }
    eprintln!(
        "session {} ended {}: {}",
        state.session_id,
        result.status.as_str(),
        result.output
    );
    Ok(())
}
