//! What a session's turn on a cluster waits on (a tool call to approve, a
//! plugin's or `AskUserQuestion`'s choices), and the answer a person's
//! reply gives it, from any machine that shares the session store, whether
//! or not its submitter is still there. The answer goes through the
//! engine, so it holds even when the worker that asked is lost before it
//! comes.

use crate::hosted::to_plugin;
use crate::session::open_store;
use crate::typed_answer;
use anyhow::Context as _;
use kaizen_cluster::stream::{stream_path, waiting};
use kaizen_cluster::{Answer, Cluster, Question};

/// What a session waits on.
pub struct Pending {
    /// The session's id.
    pub id: String,
    /// The ingress of the cluster the session was sent to, if it was.
    pub cluster: Option<String>,
    /// The questions, oldest first, each with the id its answer is sent
    /// to.
    pub waiting: Vec<(String, Question)>,
}

/// What the session `name` names (its id, or `last`) waits on.
pub fn pending(name: &str) -> anyhow::Result<Pending> {
    let store = open_store()?;
    let id = store.resolve(name)?;
    let meta = store.meta(&id)?;
    let waiting = waiting(&stream_path(&store, &id))
        .with_context(|| format!("reading session {id}'s stream"))?;
    Ok(Pending {
        id,
        cluster: meta.cluster,
        waiting,
    })
}

/// A session that did not run on a cluster, with no cluster named.
#[derive(Debug, thiserror::Error)]
#[error("session {0} did not run on a cluster; give --cluster URL")]
pub struct NotOnCluster(pub String);

impl Pending {
    /// The cluster answers go through: `ingress`, or else the one the
    /// session was sent to.
    pub fn cluster(&self, ingress: Option<String>) -> anyhow::Result<Cluster> {
        let ingress = ingress
            .or_else(|| self.cluster.clone())
            .ok_or_else(|| NotOnCluster(self.id.clone()))?;
        Cluster::new(&ingress, &Cluster::default_admin(&ingress)).map_err(anyhow::Error::msg)
    }
}

/// A reply given before the question is seen (the command line's flags),
/// to be matched to what the session waits on.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// Let the tool call run, once.
    pub allow: bool,
    /// Let it run, and the calls its rule matches for the rest of the turn.
    pub always: bool,
    /// Refuse the call (the text tells the model what to do instead), or
    /// decline the questions.
    pub deny: Option<String>,
    /// The answers to questions with choices, one each in order, as typed.
    pub answers: Vec<String>,
}

/// Why a reply is no answer to the question asked. The wording names the
/// command line's flags, which [`Reply`]'s fields are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    /// Answers given to a tool call's approval.
    #[error("the session waits on a tool call's approval: answer with --allow, --always or --deny")]
    NotAChoice,
    /// An approval given to questions.
    #[error(
        "the session waits on answers to questions: give --answer CHOICE for each, or --deny to decline"
    )]
    NotAnApproval,
    /// Not one answer for each question asked together.
    #[error("{asked} questions were asked together: give --answer once for each, in order")]
    Count {
        /// How many were asked.
        asked: usize,
    },
    /// An answer that is no choice of its question.
    #[error("{question}: {why}")]
    Choice {
        /// The question.
        question: String,
        /// Why the answer is none of its choices.
        why: String,
    },
}

impl Reply {
    /// The answer this reply gives `question`, if it gives one; a typed
    /// answer is read as the terminal's prompt reads it
    /// ([`typed_answer::parse`]).
    pub fn answer(&self, question: &Question) -> Result<Option<Answer>, ReplyError> {
        match question {
            Question::Approval { .. } if !self.answers.is_empty() => Err(ReplyError::NotAChoice),
            Question::Approval { .. } if self.always => Ok(Some(Answer::Always)),
            Question::Approval { .. } if self.allow => Ok(Some(Answer::Once)),
            Question::Approval { .. } => {
                Ok(self.deny.clone().map(|message| Answer::Deny { message }))
            }
            Question::Choices { .. } if self.allow || self.always => Err(ReplyError::NotAnApproval),
            Question::Choices { .. } if self.deny.is_some() => Ok(Some(Answer::Declined)),
            Question::Choices { .. } if self.answers.is_empty() => Ok(None),
            Question::Choices { questions, .. } => {
                if self.answers.len() != questions.len() {
                    return Err(ReplyError::Count {
                        asked: questions.len(),
                    });
                }
                let selected = questions
                    .iter()
                    .zip(&self.answers)
                    .map(|(question, line)| {
                        typed_answer::parse(&to_plugin(question), line).map_err(|why| {
                            ReplyError::Choice {
                                question: question.question.clone(),
                                why,
                            }
                        })
                    })
                    .collect::<Result<_, _>>()?;
                Ok(Some(Answer::Chosen { selected }))
            }
        }
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
