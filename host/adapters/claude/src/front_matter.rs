//! The front matter of Claude Code's Markdown files (skills, commands,
//! agents): `---` lines around `key: value` fields, the subset of YAML
//! those files use.

/// A file's fields: each key with its values and the text after its
/// colon as written.
pub(crate) type Fields = Vec<(String, Vec<String>, String)>;

/// Splits `text` into its front matter's fields and its body (all of
/// `text` when it has none), a byte-order mark dropped.
pub(crate) fn read(text: &str) -> (Fields, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = split_front_matter(text);
    (front.map(front_matter).unwrap_or_default(), body)
}

/// The longest description kept, as Claude Code's limit for a skill's: a
/// description goes in every request's system prompt.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 1024;

/// `text` on one line (runs of whitespace made one space), cut to `max`
/// characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(max)
        .collect()
}

/// The values of field `key`, if it is there.
pub(crate) fn field(fields: &Fields, key: &str) -> Option<Vec<String>> {
    fields
        .iter()
        .find(|(k, _, _)| k == key)
        .map(|(_, v, _)| v.clone())
}

/// Field `key` as written on its line, unquoted (an `argument-hint` such
/// as `[pr] [priority]` is not a list).
pub(crate) fn raw(fields: &Fields, key: &str) -> Option<String> {
    fields
        .iter()
        .find(|(k, _, _)| k == key)
        .map(|(_, _, raw)| unquote(raw))
}

/// Splits `---` front matter from the body.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..at]), &rest[at + line.len()..]);
        }
        at += line.len();
    }
    // No closing line: it was not front matter.
    (None, text)
}

/// The front matter's top-level fields, each with its values: a scalar
/// (plain, quoted, or a `|`/`>` block) is one value, a list (`[a, b]` or
/// `- a` lines) one per item. The subset of YAML these files use; what
/// else there is is skipped.
fn front_matter(front: &str) -> Fields {
    let mut fields: Fields = Vec::new();
    let mut lines = front.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with([' ', '\t', '#']) || line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let mut values = Vec::new();
        let indented = |l: &&str| l.starts_with([' ', '\t']) || l.trim().is_empty();
        if value.starts_with('|') || value.starts_with('>') {
            let mut block = Vec::new();
            while let Some(next) = lines.next_if(indented) {
                block.push(next.trim());
            }
            let sep = if value.starts_with('|') { "\n" } else { " " };
            values.push(block.join(sep).trim().to_string());
        } else if let Some(inner) = value
            .strip_prefix('[')
            .and_then(|v| v.strip_suffix(']'))
            .filter(|inner| !inner.contains(['[', ']']))
        {
            values.extend(inner.split(',').map(unquote).filter(|v| !v.is_empty()));
        } else if value.is_empty() {
            while let Some(next) = lines.next_if(indented) {
                if let Some(item) = next.trim().strip_prefix("- ") {
                    values.push(unquote(item));
                } else if !next.trim().is_empty() {
                    values.push(next.trim().to_string());
                }
            }
        } else {
            values.push(unquote(value));
        }
        fields.push((key.trim().to_string(), values, value.to_string()));
    }
    fields
}

/// A scalar without its quotes.
fn unquote(value: &str) -> String {
    let value = value.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner.to_string();
        }
    }
    value.to_string()
}

/// `allowed-tools` as Claude Code writes it: names separated by commas or
/// spaces, where a rule's parentheses may hold either (`Bash(git add:*)`).
pub(crate) fn split_tools(value: &str) -> Vec<String> {
    let mut tools = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ' ' if depth == 0 => {
                if !current.trim().is_empty() {
                    tools.push(current.trim().to_string());
                }
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        tools.push(current.trim().to_string());
    }
    tools
}

/// The body's first paragraph that is not a heading.
pub(crate) fn first_paragraph(body: &str) -> String {
    body.split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with('#'))
        .unwrap_or("")
        .to_string()
}

/// `text` cut to at most `max` bytes at a character boundary, with a note.
pub(crate) fn cut(text: &str, max: usize, what: &str) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n\n[kaizen: {what} goes on for {} more bytes, not shown: read it with Read]",
        &text[..end],
        text.len() - end
    )
}

/// The `*.md` files in `dir`, and in its folders down to `depth` levels,
/// in order. Links are followed, as a user's `~/.claude` often holds
/// links into a dotfiles repository.
fn markdown_files(dir: &std::path::Path, depth: usize) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for path in entries.flatten().map(|entry| entry.path()) {
        if path.is_dir() && depth > 0 {
            files.extend(markdown_files(&path, depth - 1));
        } else if path.is_file() && path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// [`markdown_files`] with what each holds (or why it cannot be read).
pub(crate) fn read_markdown_files(
    dir: &std::path::Path,
    depth: usize,
) -> Vec<(std::path::PathBuf, std::io::Result<Vec<u8>>)> {
    markdown_files(dir, depth)
        .into_iter()
        .map(|path| {
            let text = std::fs::read(&path);
            (path, text)
        })
        .collect()
}

/// Reads each of `files` (`(path, its bytes or why not)`) with `parse`,
/// keeping the first of each name; a note for each one that cannot be
/// used (`kind` names what they are: "command", "agent").
pub(crate) fn read_each<T>(
    files: impl IntoIterator<Item = (std::path::PathBuf, std::io::Result<Vec<u8>>)>,
    kind: &str,
    parse: impl Fn(&[u8], &std::path::Path) -> Result<T, String>,
    name: impl Fn(&T) -> &str,
) -> (Vec<T>, Vec<String>) {
    let mut found: Vec<T> = Vec::new();
    let mut notes = Vec::new();
    for (path, text) in files {
        match text
            .map_err(|e| e.to_string())
            .and_then(|text| parse(&text, &path))
        {
            Ok(item) if found.iter().any(|f| name(f) == name(&item)) => notes.push(format!(
                "{}: another {kind} is named {} already",
                path.display(),
                name(&item)
            )),
            Ok(item) => found.push(item),
            Err(why) => notes.push(format!("{}: not used: {why}", path.display())),
        }
    }
    (found, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_cut_of_a_file_reads_without_panicking() {
        let text = "\u{feff}---\r\nname: \"x\"\ndescription: >\n  one\n  two\nallowed-tools:\n  - Read\n  - \
                    Bash(git add:*)\nlist: [a, 'b', \"c\"]\nhint: [a] [b]\n# comment\n---\nbody é 日本\n";
        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
            let (fields, body) = read(&text[..end]);
            assert!(fields.len() <= 6 && body.len() <= end);
        }
        let (fields, body) = read(text);
        assert_eq!(field(&fields, "name"), Some(vec!["x".to_string()]));
        assert_eq!(
            field(&fields, "description"),
            Some(vec!["one two".to_string()])
        );
        assert_eq!(
            field(&fields, "allowed-tools"),
            Some(vec!["Read".to_string(), "Bash(git add:*)".to_string()])
        );
        assert_eq!(
            field(&fields, "list"),
            Some(vec!["a".to_string(), "b".to_string(), "c".to_string()])
        );
        assert_eq!(raw(&fields, "hint").as_deref(), Some("[a] [b]"));
        assert_eq!(body, "body é 日本\n");
    }
}
