//! Command and name patterns of rule specifiers (`npm run test:*`,
//! `git * main`, `Explore`), and `domain:` patterns over URLs' hosts.

/// A command or name pattern.
#[derive(Debug, Clone)]
pub(super) enum TextPattern {
    /// No wildcard: the whole text.
    Exact(String),
    /// Legacy `prefix:*`: the prefix alone or followed by a space.
    Prefix(String),
    /// `*` anywhere; the literal pieces between them. A single trailing ` *`
    /// also matches the text without it (`ls *` matches `ls`).
    Wildcard {
        pieces: Vec<String>,
        optional_tail: bool,
    },
}

impl TextPattern {
    pub(super) fn parse(spec: &str) -> Result<Self, String> {
        if let Some(prefix) = spec.strip_suffix(":*").filter(|p| !p.contains(":*")) {
            if prefix.trim().is_empty() {
                return Err("`:*` needs a command before it, as in `Bash(npm run test:*)`".into());
            }
            return Ok(TextPattern::Prefix(prefix.to_owned()));
        }
        if spec.contains(":*") {
            return Err(
                "`:*` (prefix match) works only at the end, as in `Bash(npm run test:*)`; for \
                        a wildcard elsewhere use `*`, as in `Bash(git * main)`"
                    .into(),
            );
        }
        let (mut pieces, mut current, mut chars) = (Vec::new(), String::new(), spec.chars());
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(next @ ('*' | '\\')) => current.push(next),
                    Some(next) => current.extend(['\\', next]),
                    None => current.push('\\'),
                },
                '*' => pieces.push(std::mem::take(&mut current)),
                _ => current.push(c),
            }
        }
        pieces.push(current);
        if pieces.len() == 1 {
            return Ok(TextPattern::Exact(pieces.remove(0)));
        }
        let optional_tail = pieces.len() == 2 && pieces[1].is_empty() && pieces[0].ends_with(' ');
        Ok(TextPattern::Wildcard {
            pieces,
            optional_tail,
        })
    }

    pub(super) fn matches_any(&self, texts: &[String]) -> bool {
        texts.iter().any(|t| self.matches_command(t))
    }

    pub(super) fn matches_command(&self, text: &str) -> bool {
        match self {
            TextPattern::Prefix(prefix) => text
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' ')),
            _ => self.matches_whole(text),
        }
    }

    /// The program this pattern matches whatever its arguments: `rm:*`
    /// and `rm *` name `rm`; anything else (`rm -rf:*`, `rm`) none.
    pub(super) fn whole_program(&self) -> Option<&str> {
        let name = match self {
            TextPattern::Prefix(name) => name.as_str(),
            TextPattern::Wildcard {
                pieces,
                optional_tail: true,
            } => pieces[0].strip_suffix(' ')?,
            _ => return None,
        };
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
        plain.then_some(name)
    }

    /// Whether this allow pattern covers `part`: it matches one of its
    /// texts, and when not every word of the command is known before it
    /// runs, the pattern's literal beginning lies within the words that
    /// are (`git status:*` allows `git status $X`, nothing allows `$X`).
    pub(super) fn allows(&self, part: &super::shell_words::Part) -> bool {
        if !self.matches_any(&part.forms) {
            return false;
        }
        let Some(start) = &part.open else {
            return true;
        };
        let literal = match self {
            TextPattern::Exact(text) => return text == start,
            TextPattern::Prefix(text) => text.as_str(),
            TextPattern::Wildcard { pieces, .. } => pieces[0].trim_end(),
        };
        !literal.is_empty() && (start == literal || start.starts_with(&format!("{literal} ")))
    }

    /// Whether some command whose text starts with `start` (its words
    /// known before it runs; the rest comes from expansions) could match:
    /// the pattern's literal beginning and `start` agree as far as both go.
    pub(super) fn could_match_start(&self, start: &str) -> bool {
        let literal = match self {
            TextPattern::Exact(text) | TextPattern::Prefix(text) => text.as_str(),
            TextPattern::Wildcard { pieces, .. } => pieces[0].as_str(),
        };
        if start.is_empty() {
            return true;
        }
        literal == start || literal.starts_with(&format!("{start} ")) || start.starts_with(literal)
    }

    pub(super) fn matches_name(&self, name: &str) -> bool {
        match self {
            TextPattern::Prefix(prefix) => name
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', ' '])),
            _ => self.matches_whole(name),
        }
    }

    pub(super) fn matches_whole(&self, text: &str) -> bool {
        match self {
            TextPattern::Exact(exact) | TextPattern::Prefix(exact) => text == exact,
            TextPattern::Wildcard {
                pieces,
                optional_tail,
            } => {
                wildcard(pieces, text)
                    || (*optional_tail && text == &pieces[0][..pieces[0].len() - 1])
            }
        }
    }
}

/// Matches literal pieces separated by `*`s (which match anything,
/// newlines included). Taking each middle piece at its first occurrence is
/// enough when `*` is the only wildcard.
fn wildcard(pieces: &[String], text: &str) -> bool {
    let [first, middle @ .., last] = pieces else {
        return false;
    };
    let Some(mut text) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    for piece in middle {
        let Some(at) = text.find(piece.as_str()) else {
            return false;
        };
        text = &text[at + piece.len()..];
    }
    text.ends_with(last.as_str())
}

/// `domain:HOST`: the host exactly, `*.HOST` for its subdomains (not HOST
/// itself), `*` for any host.
pub(super) fn parse_domain(host: &str) -> Result<TextPattern, String> {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    let name = host.strip_prefix("*.").unwrap_or(&host);
    let ipv6 = name.starts_with('[') && name.ends_with(']');
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
    if host != "*" && (name.is_empty() || !(valid || ipv6)) {
        return Err(format!(
            "`domain:{host}` needs a host name alone, as in `WebFetch(domain:example.com)` or \
             `WebFetch(domain:*.example.com)`: no scheme, port, path or other wildcard"
        ));
    }
    TextPattern::parse(&host)
}

/// The host a URL is fetched from, read with the WHATWG parser the WebFetch
/// tool uses (so `http://a.test@b.test/` is a fetch from `b.test`).
pub(super) fn url_host(url: &str) -> Option<String> {
    let url = url::Url::parse(url.trim()).ok()?;
    Some(url.host_str()?.trim_end_matches('.').to_ascii_lowercase())
}
