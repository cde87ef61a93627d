//! How a question looks on the terminal and how a typed line becomes an
//! answer. Pure text in, text out, so it is tested without a terminal.

pub use kaizen_app::typed_answer::parse;
use kaizen_plugin_host::interaction::Question;
use std::fmt::Write as _;

/// The question, its numbered options and how to answer, for question
/// `index` (0-based) of `total`.
pub fn render(question: &Question, index: usize, total: usize) -> String {
    let mut out = String::from("\n");
    if total > 1 {
        let _ = write!(out, "[{}/{total}] ", index + 1);
    }
    let header = one_line(&question.header);
    if !header.is_empty() {
        let _ = write!(out, "\x1b[2m{header}\x1b[0m  ");
    }
    let _ = writeln!(out, "\x1b[1m{}\x1b[0m", clean(question.question.trim()));
    for (n, option) in question.options.iter().enumerate() {
        let _ = write!(out, "  {}. {}", n + 1, one_line(&option.label));
        let description = one_line(&option.description);
        if !description.is_empty() {
            let _ = write!(out, " \x1b[2m— {description}\x1b[0m");
        }
        out.push('\n');
    }
    out.push_str(&hint(question));
    out.push('\n');
    out
}

/// How to answer `question`.
fn hint(question: &Question) -> String {
    let n = question.options.len();
    if question.multi_select {
        format!(
            "Choose any: type their numbers separated by commas (e.g. 1,{n}), or type your own answer. Ctrl-D declines."
        )
    } else {
        format!("Choose one: type its number (1-{n}), or type your own answer. Ctrl-D declines.")
    }
}

/// [`clean`] `text`, cut to `max` characters with an ellipsis when it is
/// longer.
pub fn clipped(text: &str, max: usize) -> String {
    let text = clean(text);
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// `text` without control characters, for a prompt: it comes from the
/// model, and an escape sequence in it could rewrite what the user sees
/// on the terminal; bidirectional overrides and zero-width characters,
/// which make a prompt read otherwise than it says, go too. Newlines and
/// tabs stay.
pub fn clean(text: &str) -> String {
    text.chars()
        .filter(|&c| (!c.is_control() || c == '\n' || c == '\t') && !misleads(c))
        .collect()
}

/// Characters that change how text around them reads without showing:
/// bidirectional embeddings, overrides, isolates and marks, and
/// zero-width characters.
fn misleads(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{061C}'
            | '\u{FEFF}'
    )
}

/// `text` as it may reach a terminal: without control characters (escape
/// sequences that set the clipboard, clear the screen or retitle the
/// window), but newlines and tabs. For everything the model or a program
/// wrote that Kaizen prints.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let keep = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(keep) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.chars().filter(|&c| keep(c)).collect())
}

/// [`clean`], on one line.
fn one_line(text: &str) -> String {
    clean(text.trim()).replace(['\n', '\t'], " ")
}
