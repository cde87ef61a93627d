//! Who answers a plugin's `interaction` calls. The embedder (the CLI, an
//! IDE bridge) supplies an implementation; [`NoUser`] serves scripts and CI.

pub use crate::bindings::interaction::{Answer, Choice, InteractionError, Question};
use std::future::Future;
use std::pin::Pin;

/// The future an [`Interaction::ask`] returns.
pub type AskFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<Answer>, InteractionError>> + Send + 'a>>;

/// Talks to the person running the session.
pub trait Interaction: Send + Sync {
    /// Asks `questions` on behalf of `plugin` and waits for the answers.
    fn ask<'a>(&'a self, plugin: &'a str, questions: Vec<Question>) -> AskFuture<'a>;

    /// Shows progress reported by `plugin`.
    fn progress(&self, plugin: &str, message: &str, fraction: Option<f32>);
}

/// No one is there: questions get `no-user`, progress goes to the log.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoUser;

impl Interaction for NoUser {
    fn ask<'a>(&'a self, _plugin: &'a str, _questions: Vec<Question>) -> AskFuture<'a> {
        Box::pin(async { Err(InteractionError::NoUser) })
    }

    fn progress(&self, plugin: &str, message: &str, fraction: Option<f32>) {
        match fraction {
            Some(fraction) => tracing::info!(plugin, "{message} ({:.0}%)", fraction * 100.0),
            None => tracing::info!(plugin, "{message}"),
        }
    }
}
