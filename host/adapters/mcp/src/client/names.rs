//! Tool names: `mcp__<server>__<tool>`, as Claude Code spells them, in the
//! characters model APIs accept.

/// The longest tool name model APIs accept.
pub const MAX_TOOL_NAME: usize = 64;

/// The name the model calls `tool` of `server` by: each character outside
/// `[A-Za-z0-9_-]` becomes `_`. `None` when the result is longer than
/// [`MAX_TOOL_NAME`].
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("mcp__{}__{}", clean(server), clean(tool));
    (name.len() <= MAX_TOOL_NAME).then_some(name)
}

fn clean(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_cleaned() {
        assert_eq!(
            tool_name("everything", "echo").as_deref(),
            Some("mcp__everything__echo")
        );
        assert_eq!(
            tool_name("my server", "read.file/v2").as_deref(),
            Some("mcp__my_server__read_file_v2")
        );
        assert_eq!(tool_name("s", &"x".repeat(60)), None);
    }
}
