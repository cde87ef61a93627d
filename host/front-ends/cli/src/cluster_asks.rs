//! Questions a turn on a cluster waits on (tool calls to approve, plugins'
//! and `AskUserQuestion`'s choices), at the submitting terminal and in
//! `kaizen approve`: shown and answered as a local run would ask them. (On
//! the worker, they go through the engine: [`kaizen_app::hosted`].)

use crate::output::Printer;
use crate::terminal::{self, TerminalApprover, TerminalInteraction};
use futures::future::BoxFuture;
use kaizen_app::hosted::to_plugin;
use kaizen_cluster::{Answer, Answerer, Question};
use kaizen_plugin_host::interaction::Interaction;
use kaizen_protocol::{Approver, CancellationToken};
use std::sync::Arc;

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

impl Answerer for TerminalAnswers {
    fn answer<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(TerminalAnswers::answer(self, question))
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
