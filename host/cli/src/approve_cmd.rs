//! `kaizen approve SESSION`: answers what a session's turn on a cluster
//! waits on (a tool call to approve, a plugin's or `AskUserQuestion`'s
//! choices) from any machine that shares the session store, whether or
//! not its submitter is still there. The answer goes through the engine,
//! so it holds even when the worker that asked is lost before it comes.

use crate::cluster_asks::{self, TerminalAnswers, to_plugin};
use crate::output::{OutputFormat, Printer};
use crate::terminal::parse_choice;
use anyhow::{Context as _, bail};
use kaizen_app::session;
use kaizen_cluster::stream::{stream_path, waiting};
use kaizen_cluster::{Answer, Cluster, Question};
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

/// Answers the oldest question the session waits on from the flags, or
/// each in turn at the terminal; returns the exit code.
pub async fn approve(args: ApproveArgs) -> anyhow::Result<u8> {
    let store = session::open_store()?;
    let id = store.resolve(&args.session)?;
    let meta = store.meta(&id)?;
    let waiting = waiting(&stream_path(&store, &id))
        .with_context(|| format!("reading session {id}'s stream"))?;
    if args.list {
        show(&id, &waiting, args.json)?;
        return Ok(0);
    }
    if waiting.is_empty() {
        eprintln!("kaizen: session {id} waits for no answer");
        return Ok(1);
    }
    let ingress =
        args.cluster.clone().or(meta.cluster).with_context(|| {
            format!("session {id} did not run on a cluster; give --cluster URL")
        })?;
    let cluster = Cluster::new(&ingress, &Cluster::default_admin(&ingress));
    let (first, question) = &waiting[0];
    if let Some(answer) = given(&args, question)? {
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
        show(&id, &waiting, false)?;
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
    for (question_id, question) in &waiting {
        let answer = answers.answer(question).await;
        cluster
            .answer(question_id, &answer)
            .await
            .map_err(anyhow::Error::msg)?;
    }
    Ok(0)
}

/// The answer the flags give to `question`, if they give one.
fn given(args: &ApproveArgs, question: &Question) -> anyhow::Result<Option<Answer>> {
    match question {
        Question::Approval { .. } if !args.answer.is_empty() => {
            bail!(
                "the session waits on a tool call's approval: answer with --allow, --always or --deny"
            )
        }
        Question::Approval { .. } if args.always => Ok(Some(Answer::Always)),
        Question::Approval { .. } if args.allow => Ok(Some(Answer::Once)),
        Question::Approval { .. } => Ok(args.deny.clone().map(|message| Answer::Deny { message })),
        Question::Choices { .. } if args.allow || args.always => {
            bail!(
                "the session waits on answers to questions: give --answer CHOICE for each, or --deny to decline"
            )
        }
        Question::Choices { .. } if args.deny.is_some() => Ok(Some(Answer::Declined)),
        Question::Choices { .. } if args.answer.is_empty() => Ok(None),
        Question::Choices { questions, .. } => {
            if args.answer.len() != questions.len() {
                bail!(
                    "{} questions were asked together: give --answer once for each, in order",
                    questions.len()
                );
            }
            let selected = questions
                .iter()
                .zip(&args.answer)
                .map(|(question, line)| {
                    parse_choice(&to_plugin(question), line)
                        .map_err(|why| anyhow::anyhow!("{}: {why}", question.question))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(Some(Answer::Chosen { selected }))
        }
    }
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
    use kaizen_cluster::asks::Choices;
    use kaizen_protocol::ApprovalRequest;

    /// `kaizen approve` parsed from `args`.
    fn args(args: &[&str]) -> ApproveArgs {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            approve: ApproveArgs,
        }
        let line = std::iter::once("approve").chain(args.iter().copied());
        Cli::try_parse_from(line).unwrap().approve
    }

    fn approval() -> Question {
        Question::Approval(ApprovalRequest {
            tool: "Bash".into(),
            input: serde_json::json!({"command": "make"}),
            reason: "it asks".into(),
            always_rule: "Bash(make)".into(),
            agent: None,
        })
    }

    fn choices() -> Question {
        Question::Choices {
            plugin: "ask".into(),
            questions: vec![
                Choices {
                    question: "Which database?".into(),
                    header: "Database".into(),
                    options: vec![
                        ("PostgreSQL".into(), "a server".into()),
                        ("SQLite".into(), "a file".into()),
                    ],
                    multi_select: false,
                },
                Choices {
                    question: "Which checks?".into(),
                    header: "Checks".into(),
                    options: vec![
                        ("lint".into(), String::new()),
                        ("test".into(), String::new()),
                    ],
                    multi_select: true,
                },
            ],
        }
    }

    #[test]
    fn approvals_take_allow_always_or_deny_and_nothing_else() {
        let given = |flags: &[&str]| given(&args(&[&["s1"], flags].concat()), &approval());
        assert_eq!(given(&["--allow"]).unwrap(), Some(Answer::Once));
        assert_eq!(given(&["--always"]).unwrap(), Some(Answer::Always));
        assert_eq!(
            given(&["--deny", "use make test"]).unwrap(),
            Some(Answer::Deny {
                message: "use make test".into()
            })
        );
        assert_eq!(
            given(&["--deny"]).unwrap(),
            Some(Answer::Deny {
                message: String::new()
            })
        );
        assert_eq!(given(&[]).unwrap(), None);
        let wrong = given(&["--answer", "1"]).unwrap_err().to_string();
        assert!(wrong.contains("--allow"), "{wrong}");
    }

    #[test]
    fn questions_take_one_answer_each_by_number_or_text() {
        let given = |flags: &[&str]| given(&args(&[&["s1"], flags].concat()), &choices());
        assert_eq!(
            given(&["--answer", "2", "--answer", "1,2"]).unwrap(),
            Some(Answer::Chosen {
                selected: vec![vec!["SQLite".into()], vec!["lint".into(), "test".into()]]
            })
        );
        assert_eq!(
            given(&["--answer", "DuckDB", "--answer", "2"]).unwrap(),
            Some(Answer::Chosen {
                selected: vec![vec!["DuckDB".into()], vec!["test".into()]]
            })
        );
        assert_eq!(given(&["--deny"]).unwrap(), Some(Answer::Declined));
        let short = given(&["--answer", "1"]).unwrap_err().to_string();
        assert!(short.contains("2 questions"), "{short}");
        let bad = given(&["--answer", "1,2", "--answer", "1"])
            .unwrap_err()
            .to_string();
        assert!(bad.contains("Which database?"), "{bad}");
        let wrong = given(&["--allow"]).unwrap_err().to_string();
        assert!(wrong.contains("--answer"), "{wrong}");
    }
}
