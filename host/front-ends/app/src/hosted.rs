//! A run that a cluster's worker makes for a submitter elsewhere: nobody
//! is at the worker's terminal, the engine journals the loop's steps and
//! waits on people's answers (tool calls to approve, plugins' and
//! `AskUserQuestion`'s choices, all asked through the engine), and the
//! events go to the session's stream.

use anyhow::Context as _;
use kaizen_cluster::asks::Choices;
use kaizen_cluster::{Answer, Asker, EventStream, Question};
use kaizen_loop::StepExecutor;
use kaizen_plugin_host::interaction::{
    self as plugin, AskFuture, Choice, Interaction, InteractionError, NoUser,
};
use kaizen_protocol::{Approver, Observer};
use kaizen_session_store::SessionStore;
use std::sync::Arc;

/// How a run differs when a cluster's worker runs it.
pub struct Hosted {
    /// The session's id: a new session is made with it.
    pub session_id: String,
    /// An earlier run of this turn made the session, and the worker took
    /// it back to its start: it is not made again.
    pub made_before: bool,
    /// The loop's step executor.
    pub steps: Arc<dyn StepExecutor>,
    /// Asks the submitter (or `kaizen approve`) through the engine.
    pub asker: Arc<Asker>,
    /// The submitter's name for the turn, which tags its events.
    pub turn: String,
    /// The cluster's ingress as the submitter reached it.
    pub cluster: Option<String>,
}

impl Hosted {
    /// Who answers plugins' questions: the submitter, through the engine.
    pub fn interaction(&self) -> Arc<dyn Interaction> {
        Arc::new(AskThroughCluster(self.asker.clone()))
    }

    /// Who approves tool calls: the submitter, through the engine.
    pub fn approver(&self) -> Arc<dyn Approver> {
        self.asker.clone()
    }

    /// The session's event stream for this turn, where its questions are
    /// asked too; the session is marked as the cluster's.
    pub fn open_stream(&self, store: &SessionStore, id: &str) -> anyhow::Result<Arc<dyn Observer>> {
        let stream = Arc::new(
            EventStream::open(store, id, &self.turn)
                .context("opening the session's event stream")?,
        );
        self.asker.publish_to(stream.clone());
        if let Some(cluster) = &self.cluster {
            store.update_meta(id, |meta| meta.cluster = Some(cluster.clone()))?;
        }
        Ok(stream)
    }
}

/// Plugins' questions, asked through the engine from a worker's turn.
struct AskThroughCluster(Arc<Asker>);

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

/// A plugin's question as the engine carries it.
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

/// A question the engine carries, as plugins' questions are put to a
/// person (the inverse of the worker's side).
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
