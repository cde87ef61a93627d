//! Native tests of the search: real directories in a temporary dir, with
//! modification times set by hand.

use super::*;
use kaizen_sdk::{Content, ErrorKind};
use std::fs;
use std::time::Duration;

/// A temporary directory; files are created with increasing modification
/// times unless given one.
struct Tree {
    dir: tempfile::TempDir,
    clock: u64,
}

impl Tree {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            clock: 1_000_000,
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Creates `relative` (and its parents), modified after every file
    /// created before it.
    fn file(&mut self, relative: &str) -> &mut Self {
        self.clock += 10;
        let at = self.clock;
        self.file_at(relative, at)
    }

    /// Creates `relative` with the given modification time (seconds after
    /// the epoch).
    fn file_at(&mut self, relative: &str, secs: u64) -> &mut Self {
        let path = self.dir.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = fs::File::create(&path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .unwrap();
        self
    }

    fn write(&mut self, relative: &str, text: &str) -> &mut Self {
        self.file(relative);
        fs::write(self.dir.path().join(relative), text).unwrap();
        self
    }

    fn dir(&mut self, relative: &str) -> &mut Self {
        fs::create_dir_all(self.dir.path().join(relative)).unwrap();
        self
    }

    /// Runs the tool with the tree as cwd; the paths listed, relative.
    fn glob(&self, pattern: &str, path: Option<&str>) -> Vec<String> {
        let text = self.text(pattern, path);
        if text == NO_FILES {
            return Vec::new();
        }
        let root = format!("{}/", self.root().display());
        text.lines()
            .map(|line| {
                line.strip_prefix(&root)
                    .unwrap_or_else(|| panic!("{line} is not below {root}"))
                    .to_owned()
            })
            .collect()
    }

    fn text(&self, pattern: &str, path: Option<&str>) -> String {
        text(&glob(&self.root(), pattern, path).unwrap())
    }

    fn error(&self, pattern: &str, path: Option<&str>) -> ToolError {
        glob(&self.root(), pattern, path).unwrap_err()
    }
}

fn text(output: &Output) -> String {
    match output.content.as_slice() {
        [Content::Text(text)] => text.clone(),
        other => panic!("expected one text part, got {other:?}"),
    }
}

fn found(path: &str, secs: u64) -> Found {
    Found {
        path: PathBuf::from(path),
        modified: SystemTime::UNIX_EPOCH + Duration::from_secs(secs),
    }
}

#[test]
fn sorts_newest_first_and_ties_by_path() {
    let mut list = vec![
        found("/w/b", 5),
        found("/w/old", 1),
        found("/w/a", 5),
        found("/w/new", 9),
    ];
    sort(&mut list);
    let paths: Vec<_> = list.iter().map(|f| f.path.to_str().unwrap()).collect();
    assert_eq!(paths, ["/w/new", "/w/a", "/w/b", "/w/old"]);
}

#[test]
fn renders_paths_one_per_line_and_nothing_as_no_files_found() {
    assert_eq!(render(&[], LIMIT), "No files found");
    let list = [found("/w/a.rs", 2), found("/w/b.rs", 1)];
    assert_eq!(render(&list, LIMIT), "/w/a.rs\n/w/b.rs");
}

#[test]
fn truncation_note_says_how_many_more_and_how_to_narrow() {
    let list: Vec<Found> = (0..103).map(|i| found(&format!("/w/{i:03}"), 1)).collect();
    let text = render(&list, 100);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[99], "/w/099");
    assert_eq!(
        lines[100],
        "(Results are truncated: 3 more files matched, 103 in all. Use a more specific pattern \
         or path to narrow the search.)"
    );
    let one_more: Vec<Found> = (0..101).map(|i| found(&format!("/w/{i:03}"), 1)).collect();
    assert!(render(&one_more, 100).contains(": 1 more file matched, 101 in all."));
    // Exactly the limit: no note.
    assert_eq!(render(&list[..100], 100).lines().count(), 100);
}

#[test]
fn the_tool_truncates_at_100_newest_first_with_metadata() {
    let mut tree = Tree::new();
    for i in 0..120 {
        tree.file(&format!("f{i:03}.txt"));
    }
    let output = glob(&tree.root(), "*.txt", None).unwrap();
    let text = text(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert!(lines[0].ends_with("/f119.txt"), "{}", lines[0]);
    assert!(lines[99].ends_with("/f020.txt"), "{}", lines[99]);
    assert!(lines[100].starts_with("(Results are truncated: 20 more files"));
    assert_eq!(
        output.metadata,
        Some(json!({"numFiles": 100, "totalFiles": 120, "truncated": true}))
    );
}

#[test]
fn patterns_match_paths_relative_to_the_search_dir() {
    let mut tree = Tree::new();
    tree.file("main.rs")
        .file("src/lib.rs")
        .file("src/deep/er/mod.rs")
        .file("src/app.ts")
        .file("src/ui/view.tsx")
        .file("src/ui/view.js")
        .file("README.md");
    // `*` does not cross `/`.
    assert_eq!(tree.glob("*.rs", None), ["main.rs"]);
    // `**/` matches zero or more directories.
    assert_eq!(
        tree.glob("**/*.rs", None),
        ["src/deep/er/mod.rs", "src/lib.rs", "main.rs"]
    );
    assert_eq!(
        tree.glob("src/**/*.{ts,tsx}", None),
        ["src/ui/view.tsx", "src/app.ts"]
    );
    assert_eq!(tree.glob("./src/*.rs", None), ["src/lib.rs"]);
    assert_eq!(tree.glob("src/?i?.rs", None), ["src/lib.rs"]);
    assert_eq!(tree.glob("README.md", None), ["README.md"]);
    // Relative to `path` when given.
    assert_eq!(tree.glob("*.rs", Some("src")), ["src/lib.rs"]);
    assert_eq!(
        tree.glob("**/mod.rs", Some("src/deep")),
        ["src/deep/er/mod.rs"]
    );
    // Absolute paths, and `..`, work as well.
    let abs = format!("{}/src", tree.root().display());
    assert_eq!(
        tree.glob("ui/*", Some(&abs)),
        ["src/ui/view.js", "src/ui/view.tsx"]
    );
    assert_eq!(tree.glob("*.md", Some("src/ui/../..")), ["README.md"]);
    assert_eq!(
        tree.glob(&format!("{abs}/**/*.rs"), None),
        ["src/deep/er/mod.rs", "src/lib.rs"]
    );
    // An empty path is the current directory.
    assert_eq!(tree.glob("*.md", Some("")), ["README.md"]);
}

#[test]
fn lists_files_only() {
    let mut tree = Tree::new();
    tree.dir("src.d/empty").file("src.d/file");
    assert_eq!(tree.glob("**/*", None), ["src.d/file"]);
    assert_eq!(tree.glob("src.d", None), Vec::<String>::new());
}

#[test]
fn no_match_says_no_files_found() {
    let mut tree = Tree::new();
    tree.file("a.rs");
    assert_eq!(tree.text("**/*.py", None), "No files found");
    // A literal directory in the pattern that does not exist: no files.
    assert_eq!(tree.text("nowhere/**/*.rs", None), "No files found");
    let output = glob(&tree.root(), "*.py", None).unwrap();
    assert_eq!(
        output.metadata,
        Some(json!({"numFiles": 0, "totalFiles": 0, "truncated": false}))
    );
}

#[test]
fn respects_gitignore_in_a_repository_and_skips_dot_git() {
    let mut tree = Tree::new();
    tree.dir(".git/objects")
        .file(".git/HEAD")
        .file(".git/objects/ab.rs")
        .write(".gitignore", "target/\n*.log\n")
        .file("target/debug/build.rs")
        .file("debug.log")
        .file("src/main.rs")
        .file("src/nested/.gitignore")
        .write("src/nested/.gitignore", "skip.rs\n")
        .file("src/nested/skip.rs")
        .file("src/nested/keep.rs");
    assert_eq!(
        tree.glob("**/*.rs", None),
        ["src/nested/keep.rs", "src/main.rs"]
    );
    assert_eq!(tree.glob("*.log", None), Vec::<String>::new());
    assert_eq!(tree.glob("**/HEAD", None), Vec::<String>::new());
    // Searching inside the repository still applies the rules above it.
    assert_eq!(
        tree.glob("*.rs", Some("src/nested")),
        ["src/nested/keep.rs"]
    );
}

#[test]
fn respects_dot_ignore_and_includes_hidden_files() {
    let mut tree = Tree::new();
    tree.write(".ignore", "generated/\n")
        .file("generated/out.txt")
        .file(".hidden/config.txt")
        .file(".env.txt")
        .file("plain.txt");
    assert_eq!(
        tree.glob("**/*.txt", None),
        ["plain.txt", ".env.txt", ".hidden/config.txt"]
    );
}

#[test]
fn gitignore_outside_a_repository_is_not_applied_like_ripgrep() {
    let mut tree = Tree::new();
    tree.write(".gitignore", "*.log\n").file("a.log");
    assert_eq!(tree.glob("*.log", None), ["a.log"]);
}

#[test]
fn ties_in_modification_time_sort_by_path() {
    let mut tree = Tree::new();
    tree.file_at("b.rs", 50)
        .file_at("a.rs", 50)
        .file_at("c.rs", 10)
        .file_at("z.rs", 90);
    assert_eq!(tree.glob("*.rs", None), ["z.rs", "a.rs", "b.rs", "c.rs"]);
}

#[test]
fn a_missing_directory_is_not_found_with_advice() {
    let tree = Tree::new();
    let err = tree.error("*.rs", Some("nope"));
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let message = err.message();
    assert!(
        message.contains(&format!("{}/nope does not exist", tree.root().display())),
        "{message}"
    );
    assert!(message.contains("omit `path`"), "{message}");
}

#[test]
fn a_file_as_path_is_invalid_input_with_advice() {
    let mut tree = Tree::new();
    tree.file("src/lib.rs");
    let err = tree.error("*.rs", Some("src/lib.rs"));
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(
        err.message().contains("is a file, not a directory"),
        "{}",
        err.message()
    );
    assert!(
        err.message()
            .contains(&format!("(e.g. {}/src)", tree.root().display())),
        "{}",
        err.message()
    );
}

#[test]
fn an_invalid_glob_is_invalid_input_with_advice() {
    let tree = Tree::new();
    for pattern in ["src/[abc.rs", "**/*.{rs,ts"] {
        let err = tree.error(pattern, None);
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{pattern}");
        assert!(
            err.message()
                .starts_with(&format!("Invalid glob pattern `{pattern}`: ")),
            "{}",
            err.message()
        );
        assert!(err.message().contains("`**/`"), "{}", err.message());
    }
    for pattern in ["", "src/"] {
        let err = tree.error(pattern, None);
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{pattern:?}");
        assert!(
            err.message().contains("names no files"),
            "{}",
            err.message()
        );
    }
}

#[test]
fn walks_only_as_deep_as_the_pattern_can_match() {
    assert_eq!(max_depth("*.rs"), Some(1));
    assert_eq!(max_depth("*/src/?.rs"), Some(3));
    assert_eq!(max_depth("**/*.rs"), None);
    assert_eq!(max_depth("a/**"), None);
    assert_eq!(max_depth("{a/b,c}/*.rs"), None);
    let mut tree = Tree::new();
    tree.file("x/y/z.rs").file("x/z.rs").file("z.rs");
    assert_eq!(tree.glob("*/*.rs", None), ["x/z.rs"]);
    assert_eq!(tree.glob("*/*/*.rs", None), ["x/y/z.rs"]);
    assert_eq!(tree.glob("{x/y,q}/*.rs", None), ["x/y/z.rs"]);
}

#[test]
fn splits_literal_directories_off_the_pattern() {
    let split = |pattern| split_pattern(Path::new("/w"), pattern).unwrap();
    assert_eq!(
        split("**/*.rs"),
        (PathBuf::from("/w"), "**/*.rs".to_owned())
    );
    assert_eq!(
        split("src/ui/**/*.tsx"),
        (PathBuf::from("/w/src/ui"), "**/*.tsx".to_owned())
    );
    assert_eq!(
        split("Cargo.toml"),
        (PathBuf::from("/w"), "Cargo.toml".to_owned())
    );
    assert_eq!(
        split("./a/b.rs"),
        (PathBuf::from("/w/a"), "b.rs".to_owned())
    );
    assert_eq!(split("../x/*.rs"), (PathBuf::from("/x"), "*.rs".to_owned()));
    assert_eq!(
        split("/etc/*.conf"),
        (PathBuf::from("/etc"), "*.conf".to_owned())
    );
    assert_eq!(
        split("a{b,c}/d"),
        (PathBuf::from("/w"), "a{b,c}/d".to_owned())
    );
}

#[test]
fn the_schema_describes_pattern_and_optional_path() {
    let spec = kaizen_sdk::raw::spec::<Glob>();
    let schema: kaizen_sdk::serde_json::Value =
        kaizen_sdk::serde_json::from_str(&spec.input_schema).unwrap();
    assert_eq!(schema["required"], json!(["pattern"]));
    let path = schema["properties"]["path"]["description"]
        .as_str()
        .unwrap();
    assert!(
        path.contains("omit it rather than passing null/undefined"),
        "{path}"
    );
    assert!(spec.read_only);
}
