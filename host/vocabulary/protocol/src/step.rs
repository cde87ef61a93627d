//! Steps' names: a durable-execution engine journals each step of a
//! session's run (a model call, a tool call) under its [`StepKey`], so a run
//! that starts over hands back what finished steps returned.

use std::fmt;

/// What kind of step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// A model call (with its candidates, when a planner asks for several).
    Model,
    /// A tool call.
    Tool,
}

/// A step's name, the same each time a session's run reaches it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepKey {
    /// The session (a sub-agent's is its own, under its parent's).
    pub session: String,
    /// The model call the step belongs to, counted from 1 in the session.
    pub cycle: u32,
    /// What kind of step.
    pub kind: StepKind,
    /// Which one of its kind in the cycle: a tool call's id; for a model
    /// call, how many candidates it asks for.
    pub id: String,
}

impl fmt::Display for StepKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            StepKind::Model => "model",
            StepKind::Tool => "tool",
        };
        write!(f, "{}/{}/{kind}/{}", self.session, self.cycle, self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_session_cycle_kind_and_call() {
        let key = StepKey {
            session: "s/call_1".into(),
            cycle: 3,
            kind: StepKind::Tool,
            id: "call_9".into(),
        };
        assert_eq!(key.to_string(), "s/call_1/3/tool/call_9");
    }
}
