//! `[models]` (which model plays each role) and `[plugin-llm]` (the
//! operator's caps on plugins' completions) in the config files.

use crate::section::{Scope, Section};
use kaizen_loop::{ModelRoles, PluginLlmCaps, PluginLlmPolicy};
use kaizen_tools::MODEL_ROLES;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A table of model names, checked by `$check`, that a trusted
/// workspace's file extends: `[models]` and `[sub-agent-models]`.
macro_rules! model_table {
    ($(#[$doc:meta])* $name:ident, $key:literal, $check:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub BTreeMap<String, String>);

        impl Section for $name {
            const KEY: &'static str = $key;
            const SCOPE: Scope = Scope::Trusted;

            fn is_set(&self) -> bool {
                !self.0.is_empty()
            }

            fn merge(&mut self, over: Self) {
                self.0.extend(over.0);
            }

            fn check(&self, file: &Path) -> anyhow::Result<()> {
                $check(file, &self.0)
            }
        }
    };
}

model_table!(
    /// The `[models]` table: a model name by role (`planner = "gpt-4o-mini"`).
    ModelsSection,
    "[models]",
    check_models
);

model_table!(
    /// The `[sub-agent-models]` table: a model name by sub-agent type
    /// (`Explore = "gpt-4o-mini"`), over the `sub-agent` role's.
    SubAgentModelsSection,
    "[sub-agent-models]",
    check_sub_agent_models
);

/// Refuses `[models]` entries for `main` (the session's model) or for a
/// role that does not exist, and empty model names.
fn check_models(file: &Path, models: &BTreeMap<String, String>) -> anyhow::Result<()> {
    for (role, model) in models {
        if role == "main" {
            anyhow::bail!(
                "{}: [models] main: the main model is the session's; choose it with --model",
                file.display()
            );
        }
        check_role(file, "[models]", role)?;
        if model.trim().is_empty() {
            anyhow::bail!("{}: [models] {role} is empty; name a model", file.display());
        }
    }
    Ok(())
}

/// Refuses empty model names in `[sub-agent-models]`.
fn check_sub_agent_models(file: &Path, models: &BTreeMap<String, String>) -> anyhow::Result<()> {
    match models.iter().find(|(_, model)| model.trim().is_empty()) {
        Some((kind, _)) => anyhow::bail!(
            "{}: [sub-agent-models] {kind} is empty; name a model",
            file.display()
        ),
        None => Ok(()),
    }
}

/// The roles `[models]` and `[sub-agent-models]` give models.
pub fn model_roles(models: &ModelsSection, sub_agents: &SubAgentModelsSection) -> ModelRoles {
    ModelRoles {
        roles: models.0.clone(),
        sub_agents: sub_agents.0.clone(),
    }
}

/// The `[fallbacks]` table: by role (`main` included), the models to try
/// in order when the role's model keeps failing.
pub type FallbacksSection = BTreeMap<String, Vec<String>>;

/// A trusted workspace's chain for a role replaces the user's.
impl Section for FallbacksSection {
    const KEY: &'static str = "[fallbacks]";
    const SCOPE: Scope = Scope::Trusted;

    fn is_set(&self) -> bool {
        !self.is_empty()
    }

    fn merge(&mut self, over: Self) {
        self.extend(over);
    }

    fn check(&self, file: &Path) -> anyhow::Result<()> {
        check_fallbacks(file, self)
    }
}

/// Checks `[fallbacks]` of `file`.
fn check_fallbacks(file: &Path, fallbacks: &FallbacksSection) -> anyhow::Result<()> {
    for (role, chain) in fallbacks {
        check_role(file, "[fallbacks]", role)?;
        if chain.is_empty() || chain.iter().any(|model| model.trim().is_empty()) {
            anyhow::bail!(
                "{}: [fallbacks] {role}: list the models to try, e.g. [\"gpt-4o-mini\"]",
                file.display()
            );
        }
    }
    Ok(())
}

/// Fallback chains by model: each role's chain under the model that plays
/// the role (`main_model` for `main`).
pub fn chains(
    fallbacks: &FallbacksSection,
    roles: &ModelRoles,
    main_model: &str,
) -> std::collections::HashMap<String, Vec<String>> {
    let mut chains = std::collections::HashMap::new();
    for (role, chain) in fallbacks {
        let model = roles.model_for(role, main_model);
        chains
            .entry(model.to_string())
            .or_insert_with(|| chain.clone());
    }
    chains
}

/// The `[plugin-llm]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PluginLlmSection {
    /// The roles any plugin may ask for (default: every role).
    pub roles: Option<Vec<String>>,
    /// The fraction of a run's budget one plugin's completions may spend.
    pub budget_share: Option<f64>,
    /// How many completions one plugin may ask for in a run.
    pub max_calls: Option<u32>,
    /// Caps of single plugins, over the ones above.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginLlmEntry>,
}

/// `[plugin-llm.plugins.NAME]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PluginLlmEntry {
    /// The roles this plugin may ask for.
    pub roles: Option<Vec<String>>,
    /// Its share of a run's budget.
    pub budget_share: Option<f64>,
    /// How many completions it may ask for in a run.
    pub max_calls: Option<u32>,
}

impl Section for PluginLlmSection {
    const KEY: &'static str = "[plugin-llm]";
    const SCOPE: Scope =
        Scope::User("what plugins' completions may use is set in the user's config only");

    fn is_set(&self) -> bool {
        self.roles.is_some()
            || self.budget_share.is_some()
            || self.max_calls.is_some()
            || !self.plugins.is_empty()
    }

    fn merge(&mut self, over: Self) {
        *self = over;
    }

    fn check(&self, file: &Path) -> anyhow::Result<()> {
        self.policy(file).map(drop)
    }
}

impl PluginLlmSection {
    /// The checked caps; `file` names the config file in errors.
    pub fn policy(&self, file: &Path) -> anyhow::Result<PluginLlmPolicy> {
        let default = caps(
            file,
            "[plugin-llm]",
            self.roles.as_ref(),
            self.budget_share,
            self.max_calls,
            &PluginLlmCaps::default(),
        )?;
        let mut plugins = BTreeMap::new();
        for (name, entry) in &self.plugins {
            let table = format!("[plugin-llm.plugins.{name}]");
            let own = caps(
                file,
                &table,
                entry.roles.as_ref(),
                entry.budget_share,
                entry.max_calls,
                &default,
            )?;
            plugins.insert(name.clone(), own);
        }
        Ok(PluginLlmPolicy { default, plugins })
    }
}

fn caps(
    file: &Path,
    table: &str,
    roles: Option<&Vec<String>>,
    share: Option<f64>,
    max_calls: Option<u32>,
    base: &PluginLlmCaps,
) -> anyhow::Result<PluginLlmCaps> {
    if let Some(roles) = roles {
        for role in roles {
            check_role(file, table, role)?;
        }
    }
    if let Some(share) = share
        && !(0.0..=1.0).contains(&share)
    {
        anyhow::bail!(
            "{}: {table} budget-share = {share}: give a fraction of the run's budget from 0 to 1",
            file.display()
        );
    }
    Ok(PluginLlmCaps {
        roles: roles.cloned().or_else(|| base.roles.clone()),
        budget_share: share.unwrap_or(base.budget_share),
        max_calls: max_calls.unwrap_or(base.max_calls),
    })
}

fn check_role(file: &Path, table: &str, role: &str) -> anyhow::Result<()> {
    if MODEL_ROLES.contains(&role) {
        return Ok(());
    }
    anyhow::bail!(
        "{}: {table}: there is no model role `{role}`; the roles are {}",
        file.display(),
        MODEL_ROLES.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> PluginLlmSection {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn plugins_take_the_defaults_unless_they_have_their_own() {
        let file = Path::new("config.toml");
        let policy = section(
            "roles = [\"planner\"]\nbudget-share = 0.1\n[plugins.judge]\nroles = [\"evaluator\"]\nmax-calls = 4\n",
        )
        .policy(file)
        .unwrap();
        assert_eq!(policy.default.roles, Some(vec!["planner".to_string()]));
        let judge = policy.caps_for("judge");
        assert_eq!(judge.roles, Some(vec!["evaluator".to_string()]));
        assert_eq!(judge.budget_share, 0.1);
        assert_eq!(judge.max_calls, 4);
        assert_eq!(policy.caps_for("other").budget_share, 0.1);
        let unset = PluginLlmSection::default().policy(file).unwrap();
        assert_eq!(unset.default.roles, None);
        assert_eq!(
            unset.default.budget_share,
            kaizen_loop::DEFAULT_BUDGET_SHARE
        );
        assert_eq!(unset.default.max_calls, kaizen_loop::DEFAULT_MAX_CALLS);
    }

    #[test]
    fn unknown_roles_and_odd_shares_are_refused() {
        let file = Path::new("config.toml");
        let err = section("roles = [\"oracle\"]").policy(file).unwrap_err();
        assert!(
            err.to_string().contains("no model role `oracle`"),
            "{err:#}"
        );
        let err = section("[plugins.x]\nbudget-share = 2.0")
            .policy(file)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("[plugin-llm.plugins.x] budget-share = 2"),
            "{err:#}"
        );
        let models = ModelsSection(BTreeMap::from([("main".to_string(), "m".to_string())]));
        let none = SubAgentModelsSection::default();
        let err = models.check(file).unwrap_err();
        assert!(err.to_string().contains("--model"), "{err:#}");
        let models = ModelsSection(BTreeMap::from([(
            "evaluator".to_string(),
            "small".to_string(),
        )]));
        models.check(file).unwrap();
        let roles = model_roles(&models, &none);
        assert_eq!(roles.model_for("evaluator", "big"), "small");
    }
}
