//! Which model plays each role of a run: the session's model by default,
//! another where the operator names one (the `compaction` summary, a
//! sub-agent, the roles plugins' completions ask for).

use std::collections::BTreeMap;

/// Which model plays each role; a role without one is played by the
/// session's model. Sub-agents may have a model by type, over the
/// `sub-agent` role's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRoles {
    /// By role.
    pub roles: BTreeMap<String, String>,
    /// By sub-agent type (`Explore`, `general-purpose`).
    pub sub_agents: BTreeMap<String, String>,
}

impl ModelRoles {
    /// The model for `role`, or `main_model`.
    pub fn model_for<'a>(&'a self, role: &str, main_model: &'a str) -> &'a str {
        self.roles.get(role).map_or(main_model, String::as_str)
    }

    /// The model a sub-agent of type `kind` runs on.
    pub fn sub_agent_model<'a>(&'a self, kind: &str, main_model: &'a str) -> &'a str {
        match self.sub_agents.get(kind) {
            Some(model) => model,
            None => self.model_for("sub-agent", main_model),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_without_a_model_is_played_by_the_main_model() {
        let roles = ModelRoles {
            roles: BTreeMap::from([("evaluator".into(), "small".into())]),
            sub_agents: BTreeMap::from([("Explore".into(), "tiny".into())]),
        };
        assert_eq!(roles.model_for("evaluator", "big"), "small");
        assert_eq!(roles.model_for("planner", "big"), "big");
        assert_eq!(roles.sub_agent_model("Explore", "big"), "tiny");
        assert_eq!(roles.sub_agent_model("general-purpose", "big"), "big");
    }
}
