//! Questions a turn on a cluster waits on (tool calls to approve, plugins'
//! and `AskUserQuestion`'s choices): on the worker, plugins' questions go
//! through the engine like approvals do; at the submitting terminal and in
//! `kaizen approve`, they are shown and answered as a local run would ask
//! them.

use crate::output::Printer;
use crate::terminal::{self, TerminalApprover, TerminalInteraction};
use kaizen_cluster::asks::Choices;
use kaizen_cluster::{Answer, Asker, Question};
use kaizen_plugins::interaction::{
    self as plugin, AskFuture, Choice, Interaction, InteractionError, NoUser,
};
use kaizen_protocol::{Approver, CancellationToken};
use std::sync::Arc;

/// Plugins' questions, asked through the engine from a worker's turn.
pub struct AskThroughCluster(pub Arc<Asker>);

impl Interaction for AskThroughCluster {
    fn ask<'a>(&'a self, plugin: &'a str, questions: Vec<plugin::Question>) -> AskFuture<'a> {
        Box::pin(async move {
            let asked = Question::Choices {
                plugin: plugin.to_string(),
                questions: questions.iter().map(to_choices).collect(),
            };
            match self.0.ask(asked).await {
                Ok(Answer::Chosen { selected }) if selected.len() == questions.len() => {
                    Ok(questions
                        .into_iter()
                        .zip(selected)
                        .map(|(question, selected)| plugin::Answer {
                            question: question.question,
                            selected,
                        })
                        .collect())
                }
                Ok(Answer::Chosen { selected }) => Err(InteractionError::Invalid(format!(
                    "{} answers came for {} questions",
                    selected.len(),
                    questions.len()
                ))),
                Ok(_) => Err(InteractionError::Declined),
                Err(why) => {
                    tracing::warn!("plugin {plugin}'s questions got no answer: {why}");
                    Err(InteractionError::NoUser)
                }
            }
        })
    }

    fn progress(&self, plugin: &str, message: &str, fraction: Option<f32>) {
        NoUser.progress(plugin, message, fraction);
    }
}

fn to_choices(question: &plugin::Question) -> Choices {
    Choices {
        question: question.question.clone(),
        header: question.header.clone(),
        options: question
            .options
            .iter()
            .map(|choice| (choice.label.clone(), choice.description.clone()))
            .collect(),
        multi_select: question.multi_select,
    }
}

/// A question as the terminal's prompts take it.
pub fn to_plugin(choices: &Choices) -> plugin::Question {
    plugin::Question {
        question: choices.question.clone(),
        header: choices.header.clone(),
        options: choices
            .options
            .iter()
            .map(|(label, description)| Choice {
                label: label.clone(),
                description: description.clone(),
            })
            .collect(),
        multi_select: choices.multi_select,
    }
}

/// Answers questions at this process's terminal, one at a time.
pub struct TerminalAnswers {
    terminal: Arc<TerminalInteraction>,
    approver: TerminalApprover,
}

impl TerminalAnswers {
    /// Prompts on the terminal (progress on `status`); `interrupt`
    /// declines an open prompt.
    pub fn new(status: Arc<Printer>, interrupt: CancellationToken) -> Self {
        let terminal = Arc::new(TerminalInteraction::new(status, interrupt));
        Self {
            approver: TerminalApprover::for_elsewhere(terminal.clone()),
            terminal,
        }
    }

    /// The person's answer to `question`.
    pub async fn answer(&self, question: &Question) -> Answer {
        let (plugin, questions) = match question {
            Question::Approval(request) => return self.approver.approve(request).await.into(),
            Question::Choices { plugin, questions } => (plugin, questions),
        };
        let asked = questions.iter().map(to_plugin).collect();
        match self.terminal.ask(plugin, asked).await {
            Ok(answers) => Answer::Chosen {
                selected: answers.into_iter().map(|answer| answer.selected).collect(),
            },
            Err(_) => Answer::Declined,
        }
    }
}

/// One line saying what `question` asks, safe for a terminal.
pub fn describe(question: &Question) -> String {
    match question {
        Question::Approval(request) => format!(
            "may {} run {}? ({})",
            terminal::clean(&request.tool),
            terminal::clipped(&request.input.to_string(), 200),
            terminal::clean(&request.reason)
        ),
        Question::Choices { plugin, questions } => {
            let asked: Vec<String> = questions
                .iter()
                .map(|q| terminal::clean(&q.question))
                .collect();
            format!("{} asks: {}", terminal::clean(plugin), asked.join(" / "))
        }
    }
}
