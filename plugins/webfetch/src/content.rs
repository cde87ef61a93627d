//! What a response body is and how it becomes text for the model: HTML
//! converted to Markdown with `htmd`, other text as it is, binary refused.

/// What a body holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// HTML (or XHTML), converted to Markdown.
    Html,
    /// Text of another kind (plain, Markdown, JSON, XML, CSS, ...),
    /// returned as it is.
    Text,
    /// Anything else; the media type, for the message.
    Binary(String),
}

/// Media types outside `text/*` that are text.
const TEXT_TYPES: &[&str] = &[
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/x-toml",
    "application/x-sh",
    "application/x-httpd-php",
    "application/sql",
    "application/graphql",
    "application/x-ndjson",
    "application/csv",
    "application/x-tex",
    "application/x-latex",
    "application/rtf",
    "image/svg+xml",
];

/// Media types that say nothing about the content: the body is sniffed.
const VAGUE_TYPES: &[&str] = &["application/octet-stream", "binary/octet-stream", ""];

/// Classifies a body by its `Content-Type` (the media type, parameters
/// aside), sniffing the bytes when the type is missing or vague.
pub fn classify(content_type: Option<&str>, body: &[u8]) -> Kind {
    let media = media_type(content_type.unwrap_or_default());
    if media == "text/html" || media == "application/xhtml+xml" {
        return Kind::Html;
    }
    if media.starts_with("text/")
        || TEXT_TYPES.contains(&media.as_str())
        || media.ends_with("+json")
        || media.ends_with("+xml")
    {
        return Kind::Text;
    }
    if !VAGUE_TYPES.contains(&media.as_str()) {
        return Kind::Binary(media);
    }
    let head = &body[..body.len().min(8192)];
    if looks_binary(head) {
        return Kind::Binary(if media.is_empty() {
            "of unknown type".into()
        } else {
            media
        });
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(512)]).to_ascii_lowercase();
    let start = start.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Kind::Html
    } else {
        Kind::Text
    }
}

/// The media type of a `Content-Type` value, lower-case, parameters
/// dropped.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// True when `head` holds a NUL byte or is not UTF-8 (a character cut at
/// the end of the sample aside).
fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(err) => err.error_len().is_some(),
    }
}

/// The text of a body: Markdown for HTML, the text itself otherwise
/// (invalid UTF-8 replaced).
pub fn to_text(kind: &Kind, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    match kind {
        Kind::Html => html_to_markdown(&text),
        _ => text.into_owned(),
    }
}

/// Converts HTML to Markdown, leaving out what a reader never sees
/// (scripts, styles, forms' machinery, embedded frames and graphics).
pub fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "iframe", "svg", "canvas", "object",
            "embed", "form", "button", "input", "select", "textarea",
        ])
        .build();
    match converter.convert(html) {
        Ok(markdown) => tidy(&markdown),
        // htmd fails only on I/O errors of its own writer; keep the text.
        Err(_) => html.to_owned(),
    }
}

/// Collapses runs of blank lines and trims trailing spaces that are not
/// a Markdown line break.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    for line in markdown.lines() {
        let kept = if line.ends_with("  ") && !line.trim().is_empty() {
            line
        } else {
            line.trim_end()
        };
        if kept.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(kept);
        out.push('\n');
    }
    out.trim().to_owned()
}

/// Cuts `text` to at most `max` characters, at a line break when one is
/// near; the second value is the full length in characters when it was
/// cut.
pub fn truncate(text: &str, max: usize) -> (&str, Option<usize>) {
    let Some((cut, _)) = text.char_indices().nth(max) else {
        return (text, None);
    };
    let total = text.chars().count();
    let head = &text[..cut];
    let at_line = head
        .rfind('\n')
        .filter(|&i| i > cut.saturating_sub(2000))
        .unwrap_or(cut);
    (&text[..at_line], Some(total))
}
