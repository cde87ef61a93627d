//! Prompts a served session offers an MCP client (`prompts/list`,
//! `prompts/get`): its skills and slash commands, each rendered with its
//! arguments as the session would load it, so a skill written once is
//! used by Kaizen, by Claude Code (as files) and by any MCP client.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};

/// One prompt on offer.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptInfo {
    /// Its name (the skill's or command's).
    pub name: String,
    /// What it is for.
    pub description: String,
    /// What its arguments are (a command's `argument-hint`), if it says.
    pub argument_hint: Option<String>,
}

/// Where a served session's prompts come from.
pub trait Prompts: Send + Sync {
    /// Every prompt on offer.
    fn list(&self) -> Vec<PromptInfo>;

    /// The prompt `name` rendered with `args` (the text after `/name`),
    /// or why it cannot be.
    fn render(&self, name: &str, args: &str) -> Result<String, String>;
}

/// The name of each prompt's one argument: the text after `/name`, as
/// Claude Code passes it (`$ARGUMENTS`).
pub const ARGUMENTS: &str = "arguments";

/// A prompt as MCP lists it.
pub(crate) fn listed(info: PromptInfo) -> Prompt {
    let mut argument = PromptArgument::new(ARGUMENTS).with_required(false);
    argument = argument.with_description(
        info.argument_hint
            .unwrap_or_else(|| "the text after the command, as `$ARGUMENTS`".into()),
    );
    Prompt::new(info.name, Some(info.description), Some(vec![argument]))
}

/// The text of a `prompts/get`'s arguments: the one named
/// [`ARGUMENTS`], or else every value given, in order.
pub(crate) fn arguments(given: Option<&serde_json::Map<String, serde_json::Value>>) -> String {
    let Some(given) = given else {
        return String::new();
    };
    let text = |value: &serde_json::Value| match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    match given.get(ARGUMENTS) {
        Some(value) => text(value),
        None => given.values().map(text).collect::<Vec<_>>().join(" "),
    }
}

/// The rendered prompt as MCP returns it: one user message.
pub(crate) fn rendered(description: Option<String>, text: String) -> GetPromptResult {
    let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    match description {
        Some(description) => result.with_description(description),
        None => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_the_named_one_or_every_value() {
        let map = |value: serde_json::Value| value.as_object().cloned();
        assert_eq!(arguments(None), "");
        assert_eq!(
            arguments(map(json!({"arguments": "src/lib.rs"})).as_ref()),
            "src/lib.rs"
        );
        assert_eq!(
            arguments(map(json!({"file": "a.rs", "n": 3})).as_ref()),
            "a.rs 3"
        );
    }

    #[test]
    fn a_prompt_is_listed_with_its_one_argument() {
        let prompt = listed(PromptInfo {
            name: "review".into(),
            description: "Reviews a file.".into(),
            argument_hint: Some("[file]".into()),
        });
        let value = serde_json::to_value(&prompt).unwrap();
        assert_eq!(value["name"], "review");
        assert_eq!(value["arguments"][0]["name"], ARGUMENTS);
        assert_eq!(value["arguments"][0]["description"], "[file]");
        assert_eq!(value["arguments"][0]["required"], false);
    }
}
