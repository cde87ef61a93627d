//! `kaizen approve SESSION`: answers what a session's turn on a cluster
//! waits on ([`kaizen_app::approvals`]) from the flags, or asks at the
//! terminal as a local run would.

use crate::cluster_asks::{self, TerminalAnswers};
use crate::output::{OutputFormat, Printer};
use kaizen_app::approvals::{self, Reply};
use kaizen_cluster::Question;
use kaizen_protocol::CancellationToken;
use std::io::IsTerminal;
use std::sync::Arc;

/// `kaizen approve`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ApproveArgs {
    /// The session (its id, or `last`).
    pub session: String,
    /// Let the tool call run, once.
    #[arg(long, conflicts_with_all = ["always", "deny", "answer"])]
    pub allow: bool,
    /// Let it run, and the calls its rule matches for the rest of the turn.
    #[arg(long, conflicts_with_all = ["deny", "answer"])]
    pub always: bool,
    /// Refuse it; the REASON, if any, tells the model what to do instead.
    #[arg(long, value_name = "REASON", num_args = 0..=1, default_missing_value = "")]
    pub deny: Option<String>,
    /// The answer to a question with choices: an option's number (several
    /// separated by commas where it takes several) or your own text. Give
    /// one for each of the questions asked together, in order.
    #[arg(long, value_name = "CHOICE", conflicts_with = "deny")]
    pub answer: Vec<String>,
    /// Only show what the session waits on.
    #[arg(long)]
    pub list: bool,
    /// With --list: one JSON array.
    #[arg(long, requires = "list")]
    pub json: bool,
    /// The cluster's ingress (the one the session was sent to by default).
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
}

impl ApproveArgs {
    /// The reply the flags give.
    fn reply(&self) -> Reply {
        Reply {
            allow: self.allow,
            always: self.always,
            deny: self.deny.clone(),
            answers: self.answer.clone(),
        }
    }
}

/// Answers the oldest question the session waits on from the flags, or
/// each in turn at the terminal; returns the exit code.
pub async fn approve(args: ApproveArgs) -> anyhow::Result<u8> {
    let pending = approvals::pending(&args.session)?;
    let (id, waiting) = (&pending.id, &pending.waiting);
    if args.list {
        show(id, waiting, args.json)?;
        return Ok(0);
    }
    let Some((first, question)) = waiting.first() else {
        eprintln!("kaizen: session {id} waits for no answer");
        return Ok(1);
    };
    let cluster = pending.cluster(args.cluster.clone())?;
    if let Some(answer) = args.reply().answer(question)? {
        cluster
            .answer(first, &answer)
            .await
            .map_err(anyhow::Error::msg)?;
        eprintln!(
            "kaizen: answered session {id}: {}",
            cluster_asks::describe(question)
        );
        return Ok(0);
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        show(id, waiting, false)?;
        eprintln!(
            "kaizen: nobody is at a terminal to ask: answer with --allow, --always, --deny \
             [REASON] or --answer CHOICE"
        );
        return Ok(2);
    }
    let answers = TerminalAnswers::new(
        Arc::new(Printer::new(OutputFormat::Text)),
        CancellationToken::new(),
    );
    for (question_id, question) in waiting {
        let answer = answers.answer(question).await;
        cluster
            .answer(question_id, &answer)
            .await
            .map_err(anyhow::Error::msg)?;
    }
    Ok(0)
}

/// Lists what the session waits on.
fn show(id: &str, waiting: &[(String, Question)], json: bool) -> anyhow::Result<()> {
    if json {
        let list: Vec<_> = waiting
            .iter()
            .map(|(id, question)| serde_json::json!({"id": id, "question": question}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if waiting.is_empty() {
        println!("session {id} waits for no answer");
    }
    for (_, question) in waiting {
        println!("session {id} waits: {}", cluster_asks::describe(question));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The reply `kaizen approve` parsed from `args` gives.
    fn reply(args: &[&str]) -> Reply {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            approve: ApproveArgs,
        }
        let line = ["approve", "s1"].into_iter().chain(args.iter().copied());
        Cli::try_parse_from(line).unwrap().approve.reply()
    }

    #[test]
    fn the_flags_are_the_reply_deny_without_a_reason_included() {
        assert_eq!(reply(&["--deny"]).deny.as_deref(), Some(""));
        assert_eq!(reply(&["--deny", "no"]).deny.as_deref(), Some("no"));
        let both = reply(&["--answer", "2", "--answer", "1,2"]).answers;
        assert_eq!(both, ["2", "1,2"]);
        assert!(reply(&["--always"]).always && reply(&["--allow"]).allow);
    }
}
