//! Who answers a run: a person at the terminal, or the program driving
//! stream-json input. (On a cluster's worker the turn's submitter does:
//! `kaizen_app::worker` sets that up.)

use crate::output::Printer;
use crate::stream_input::StreamInput;
use crate::terminal::{TerminalApprover, TerminalInteraction};
use kaizen_app::notices::{Notice, Notices};
use kaizen_app::session_builder::{Collaborators, SetupError};
use kaizen_app::trust::AskTrust;
use kaizen_loop::Inbox;
use kaizen_plugin_host::interaction::{Interaction, NoUser};
use kaizen_protocol::{Approver, CancellationToken};
use std::io::IsTerminal;
use std::sync::Arc;

/// Who answers plugins' questions and approves tool calls: the terminal
/// when a person is at it (stdin and stderr are terminals, and stdin is
/// not where the task came from: it was an argument, `task_given`), else
/// nobody: plugins are told no user is available, and calls that ask are
/// refused.
pub fn terminal_for(
    task_given: bool,
    printer: &Arc<Printer>,
    interrupt: &CancellationToken,
) -> Option<Arc<TerminalInteraction>> {
    let interactive =
        task_given && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    interactive.then(|| Arc::new(TerminalInteraction::new(printer.clone(), interrupt.clone())))
}

/// Who the session works with: over stream-json input the embedding
/// program approves; else a person at the terminal, if one is there. Only
/// a person at a terminal is asked to trust a workspace.
pub fn collaborators(
    input: &Option<StreamInput>,
    terminal: Option<Arc<TerminalInteraction>>,
    inbox: Option<Inbox>,
) -> Result<Collaborators<'static>, SetupError> {
    let approver = match (input, terminal.clone()) {
        (Some(input), _) => Some(Arc::new(input.approver()) as Arc<dyn Approver>),
        (None, Some(terminal)) => {
            let config = kaizen_app::config::kaizen_home()?.join(kaizen_app::config::USER_CONFIG);
            Some(Arc::new(TerminalApprover::new(terminal.clone(), config)) as Arc<dyn Approver>)
        }
        (None, None) => None,
    };
    let interaction: Arc<dyn Interaction> = match terminal {
        Some(terminal) => terminal,
        None => Arc::new(NoUser),
    };
    let at_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    Ok(Collaborators {
        interaction,
        ask_trust: at_terminal.then_some(&crate::terminal::ask_trust as AskTrust<'static>),
        approver,
        steps: None,
        inbox,
        hooks: Vec::new(),
        notices: to_stderr(),
    })
}

/// Notices for the person running `kaizen`: on stderr, each line after
/// `kaizen: `; a program's output as it wrote it.
pub fn to_stderr() -> Notices {
    Notices::new(|notice| match notice {
        Notice::Output(text) => eprint!("{text}"),
        other => eprintln!("kaizen: {other}"),
    })
}
