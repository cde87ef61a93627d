//! `{{name}}`: a Kaizen tool plugin.

use kaizen_sdk::prelude::*;

/// Input of `{{camel_name}}`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
pub struct CountInput {
    /// The text to count.
    pub text: String,
}

/// Counts words, lines and characters.
pub struct {{camel_name}};

impl Tool for {{camel_name}} {
    const NAME: &'static str = "{{camel_name}}";
    const DESCRIPTION: &'static str = "Counts the words, lines and characters of a text.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = CountInput;

    fn call(_ctx: &CallContext, input: CountInput) -> Result<Output, ToolError> {
        if input.text.is_empty() {
            return Err(ToolError::invalid_input("`text` is empty; give some text to count"));
        }
        let words = input.text.split_whitespace().count();
        let lines = input.text.lines().count();
        let characters = input.text.chars().count();
        Ok(Output::text(format!("{words} words, {lines} lines, {characters} characters"))
            .with_metadata(json!({ "words": words, "lines": lines, "characters": characters })))
    }
}

export_tools!({{camel_name}});

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> CallContext {
        CallContext {
            session_id: "test".into(),
            call_id: "call".into(),
            workspace: "/workspace".into(),
            cwd: "/workspace".into(),
        }
    }

    #[test]
    fn counts_words_lines_and_characters() {
        let input = CountInput { text: "one two\nthree".into() };
        let output = {{camel_name}}::call(&ctx(), input).unwrap();
        let text = kaizen_sdk::Content::Text("3 words, 2 lines, 13 characters".into());
        assert_eq!(output.content, vec![text]);
        assert_eq!(output.metadata, Some(json!({"words": 3, "lines": 2, "characters": 13})));
    }

    #[test]
    fn empty_text_is_invalid_input() {
        let err = {{camel_name}}::call(&ctx(), CountInput { text: String::new() }).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
    }
}
