//! `interaction`: a plugin asks the person running the session
//! multiple-choice questions and reports progress, through the embedder's
//! [`Interaction`].

pub mod handler;

use super::{
    CapStore, CapView, GrantContext, HasCap, HostCapability, LoadContext, Slot, StoreContext, flag,
};
use crate::bindings::interaction;
use crate::origin::Origin;
use handler::Interaction;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::Linker;

/// Longest a question to the user may stay unanswered.
const ASK_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The `interaction` capability.
pub(crate) struct InteractionCap;

impl HostCapability for InteractionCap {
    const NAME: &'static str = "interaction";
    const IMPORTS: &'static [&'static str] = &["kaizen:plugin/interaction"];
    type Request = bool;
    type Grant = bool;
    /// Who answers.
    type Shared = Arc<dyn Interaction>;
    type State = Arc<dyn Interaction>;

    flag::flag_methods!();

    /// Every plugin but a workspace's own (which must be granted it by name
    /// or `*`) may ask.
    fn default_grant(cx: &GrantContext<'_>) -> bool {
        cx.origin != Origin::Workspace
    }

    fn link<T: CapStore>(linker: &mut Linker<T>) -> wasmtime::Result<()>
    where
        T::Caps: Slot<Self>,
    {
        interaction::add_to_linker::<T, HasCap<Self>>(linker, T::view::<Self>)
    }

    fn load(cx: &LoadContext<'_>) -> Arc<dyn Interaction> {
        cx.host.interaction.clone()
    }

    fn new_state(
        handler: &Arc<dyn Interaction>,
        _cx: &mut StoreContext<'_>,
    ) -> anyhow::Result<Arc<dyn Interaction>> {
        Ok(handler.clone())
    }
}

impl interaction::Host for CapView<'_, InteractionCap> {
    async fn ask(
        &mut self,
        questions: Vec<interaction::Question>,
    ) -> Result<Vec<interaction::Answer>, interaction::InteractionError> {
        if let Some(problem) = invalid_questions(&questions) {
            return Err(interaction::InteractionError::Invalid(problem));
        }
        let handler = self.state.clone();
        // Waiting for a person is not the plugin's time.
        self.clock.begin_wait();
        let answer = tokio::time::timeout(ASK_TIMEOUT, handler.ask(self.plugin, questions)).await;
        self.clock.end_wait();
        answer.unwrap_or(Err(interaction::InteractionError::NoUser))
    }

    async fn progress(&mut self, message: String, fraction: Option<f32>) {
        let fraction = fraction.map(|f| f.clamp(0.0, 1.0));
        self.state.progress(self.plugin, &message, fraction);
    }
}

fn invalid_questions(questions: &[interaction::Question]) -> Option<String> {
    if !(1..=4).contains(&questions.len()) {
        return Some(format!(
            "ask takes 1 to 4 questions, got {}",
            questions.len()
        ));
    }
    questions.iter().find_map(|q| {
        (!(2..=4).contains(&q.options.len())).then(|| {
            format!(
                "question `{}` has {} options; give 2 to 4",
                q.header,
                q.options.len()
            )
        })
    })
}
