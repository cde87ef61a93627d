//! How a rule's text reads: `Tool(specifier)` taken apart, and which tools
//! the name names.

use super::call::Subject;
use kaizen_protocol::{Danger, UnknownDanger};

/// Which tools a rule names.
#[derive(Debug, Clone)]
pub(super) enum Tools {
    /// The tool of that name.
    Named,
    /// The tool of that name, and every call with a path of the family.
    Family(Family),
    /// Every tool of an MCP server: the name prefix `mcp__server__`.
    McpServer(String),
    /// Every tool whose danger level is in the range: `danger:high`,
    /// `danger:>=high`, `danger:<=low`.
    Danger(DangerRange),
}

/// The danger levels a `danger:` rule covers, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DangerRange {
    lowest: Danger,
    highest: Danger,
}

impl DangerRange {
    /// Whether `level` is in the range.
    pub(super) fn contains(self, level: Danger) -> bool {
        (self.lowest..=self.highest).contains(&level)
    }
}

/// The prefix of a rule that names tools by their danger level.
pub(super) const DANGER_PREFIX: &str = "danger:";

/// Reads what follows `danger:`: a level alone (that level), `>=level` (it
/// and above) or `<=level` (it and below).
pub(super) fn parse_danger(text: &str) -> Result<DangerRange, String> {
    let usage = "a danger rule is `danger:LEVEL`, `danger:>=LEVEL` or `danger:<=LEVEL`, with \
                 no specifier, as in `danger:critical` or `danger:>=high`";
    let (level, above, below) = match (text.strip_prefix(">="), text.strip_prefix("<=")) {
        (Some(level), _) => (level, true, false),
        (_, Some(level)) => (level, false, true),
        _ => (text, false, false),
    };
    let level: Danger = level
        .parse()
        .map_err(|err: UnknownDanger| format!("{err}; {usage}"))?;
    Ok(DangerRange {
        lowest: if below { Danger::Safe } else { level },
        highest: if above { Danger::Critical } else { level },
    })
}

/// The two path-rule families of Claude Code's syntax: `Read(…)` covers
/// every call reading a path, `Edit(…)` every call changing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    Read,
    Edit,
}

impl Family {
    /// Whether the family covers a call exposing `subject`.
    pub(super) fn covers(self, subject: &Subject) -> bool {
        matches!(
            (self, subject),
            (Family::Read, Subject::ReadPath(_)) | (Family::Edit, Subject::EditPath(_))
        )
    }
}

/// Takes `Tool(specifier)` apart, unescaping `\(` and `\)` in the specifier.
pub(super) fn split_rule(text: &str) -> Result<(&str, Option<String>), String> {
    let Some(open) = text.find('(') else {
        if text.contains(')') {
            return Err(
                "unbalanced parentheses: a `)` without `(`; write `Tool(specifier)`".into(),
            );
        }
        return Ok((text, None));
    };
    let inner = &text[open + 1..];
    let (mut depth, mut escaped, mut close) = (1usize, false, None);
    for (i, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else {
        return Err(format!(
            "unbalanced parentheses: the `(` is never closed; write `{}(specifier)`, escaping a \
             literal parenthesis as `\\(` or `\\)`",
            &text[..open]
        ));
    };
    if close + 1 != inner.len() {
        return Err(
            "text follows the closing `)`; a rule is `Tool(specifier)` with nothing after it, \
                    and a literal parenthesis is written `\\)`"
                .into(),
        );
    }
    let spec = inner[..close].replace("\\(", "(").replace("\\)", ")");
    Ok((&text[..open], Some(spec)))
}

/// Checks a tool name and says which tools it names.
pub(super) fn parse_tool(name: &str) -> Result<(Tools, String), String> {
    if name.is_empty() {
        return Err(
            "the tool name is missing; a rule is `Tool` or `Tool(specifier)`, as in \
                    `Bash(ls)`"
                .into(),
        );
    }
    let (bare, server_wide) = match name.strip_suffix("__*") {
        Some(bare) if bare.starts_with("mcp__") => (bare, true),
        _ => (name, false),
    };
    if let Some(bad) = bare
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "_-.".contains(*c)))
    {
        let hint = if bad == '*' {
            "tool names take no wildcards, except `mcp__server__*` for a whole MCP server"
                .to_owned()
        } else {
            format!("tool names are letters, digits, `_`, `-` and `.`, found `{bad}`")
        };
        return Err(format!(
            "`{name}` is not a tool name: {hint}; a specifier goes in parentheses right \
                            after the name, as in `Bash(npm test)`"
        ));
    }
    match bare.strip_prefix("mcp__") {
        Some("") => {
            Err("`mcp__` names no server; write `mcp__server` or `mcp__server__tool`".into())
        }
        Some(server) if server_wide || !server.contains("__") => Ok((
            Tools::McpServer(format!("mcp__{server}__")),
            bare.to_owned(),
        )),
        Some(_) => Ok((Tools::Named, bare.to_owned())),
        None => match bare {
            "Read" => Ok((Tools::Family(Family::Read), bare.to_owned())),
            "Edit" => Ok((Tools::Family(Family::Edit), bare.to_owned())),
            _ => Ok((Tools::Named, bare.to_owned())),
        },
    }
}
