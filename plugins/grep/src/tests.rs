//! Native tests of the search: real directories in a temporary dir, the
//! input given as the model would give it (JSON).

use super::*;
use kaizen_sdk::{Content, ErrorKind, serde_json};
use std::fs;
use std::time::{Duration, SystemTime};

/// A temporary directory; files are created with increasing modification
/// times.
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

    /// Writes `relative` (and its parents), modified after every file
    /// written before it.
    fn write(&mut self, relative: &str, contents: impl AsRef<[u8]>) -> &mut Self {
        let path = self.dir.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        self.clock += 10;
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(self.clock))
            .unwrap();
        self
    }

    fn dir(&mut self, relative: &str) -> &mut Self {
        fs::create_dir_all(self.dir.path().join(relative)).unwrap();
        self
    }

    /// Runs the tool with the tree as cwd.
    fn run(&self, input: serde_json::Value) -> Result<Output, ToolError> {
        let input: GrepInput = serde_json::from_value(input).unwrap();
        grep(&self.root(), &input)
    }

    /// The text of a successful run, with the tree's root shown as `.`.
    fn text(&self, input: serde_json::Value) -> String {
        let output = self.run(input).unwrap();
        let [Content::Text(text)] = output.content.as_slice() else {
            panic!("one text part expected: {:?}", output.content);
        };
        text.replace(&self.root().display().to_string(), ".")
    }

    fn error(&self, input: serde_json::Value) -> ToolError {
        self.run(input).unwrap_err()
    }
}

#[test]
fn files_with_matches_is_the_default_newest_first() {
    let mut tree = Tree::new();
    tree.write("old.rs", "fn main() {}\n")
        .write("src/mid.rs", "fn main() {}\n")
        .write("src/none.rs", "nothing here\n")
        .write("new.txt", "fn main\n");
    assert_eq!(
        tree.text(json!({"pattern": "fn main"})),
        "Found 3 files\n./new.txt\n./src/mid.rs\n./old.rs"
    );
    assert_eq!(tree.text(json!({"pattern": "absent"})), "No files found");
}

#[test]
fn content_mode_prints_path_line_text() {
    let mut tree = Tree::new();
    tree.write("a.txt", "one\ntwo\nthree two\n")
        .write("b.txt", "two\n");
    assert_eq!(
        tree.text(json!({"pattern": "two", "output_mode": "content"})),
        "./a.txt:2:two\n./a.txt:3:three two\n./b.txt:1:two"
    );
    assert_eq!(
        tree.text(json!({"pattern": "two", "output_mode": "content", "-n": false})),
        "./a.txt:two\n./a.txt:three two\n./b.txt:two"
    );
    assert_eq!(
        tree.text(json!({"pattern": "absent", "output_mode": "content"})),
        "No matches found"
    );
}

#[test]
fn case_insensitive_search() {
    let mut tree = Tree::new();
    tree.write("a.txt", "Hello\nhello\nHELLO\nbye\n");
    let input = json!({"pattern": "hello", "output_mode": "count"});
    assert!(tree.text(input).starts_with("./a.txt:1\n"));
    let input = json!({"pattern": "hello", "output_mode": "count", "-i": true});
    assert!(tree.text(input).starts_with("./a.txt:3\n"));
}

#[test]
fn context_lines_and_separators() {
    let mut tree = Tree::new();
    let lines: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    tree.write("a.txt", &lines).write("b.txt", "x\nline 5\n");
    let text = tree.text(json!({
        "pattern": "^line (5|15)$", "output_mode": "content", "-C": 1
    }));
    assert_eq!(
        text,
        "./a.txt-4-line 4\n./a.txt:5:line 5\n./a.txt-6-line 6\n--\n\
         ./a.txt-14-line 14\n./a.txt:15:line 15\n./a.txt-16-line 16\n--\n\
         ./b.txt-1-x\n./b.txt:2:line 5"
    );
    let text = tree.text(json!({
        "pattern": "line 5$", "output_mode": "content", "-A": 2, "-B": 0, "path": "a.txt"
    }));
    assert_eq!(text, "./a.txt:5:line 5\n./a.txt-6-line 6\n./a.txt-7-line 7");
    let text = tree.text(json!({
        "pattern": "line 5$", "output_mode": "content", "-B": 1, "path": "a.txt"
    }));
    assert_eq!(text, "./a.txt-4-line 4\n./a.txt:5:line 5");
}

#[test]
fn count_mode_gives_per_file_counts_and_a_total() {
    let mut tree = Tree::new();
    tree.write("b.rs", "x\nx x\n")
        .write("a.rs", "x\n")
        .write("c.rs", "y\n");
    assert_eq!(
        tree.text(json!({"pattern": "x", "output_mode": "count"})),
        "./a.rs:1\n./b.rs:2\nFound 3 matching lines in 2 files."
    );
    assert_eq!(
        tree.text(json!({"pattern": "z", "output_mode": "count"})),
        "No matches found"
    );
}

#[test]
fn glob_and_type_filters() {
    let mut tree = Tree::new();
    tree.write("a.rs", "needle")
        .write("b.ts", "needle")
        .write("c.tsx", "needle")
        .write("d.py", "needle")
        .write("sub/e.rs", "needle");
    let found = |input| {
        let mut lines: Vec<String> = tree
            .text(input)
            .lines()
            .skip(1)
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(
        found(json!({"pattern": "needle", "glob": "*.{ts,tsx}"})),
        ["./b.ts", "./c.tsx"]
    );
    assert_eq!(
        found(json!({"pattern": "needle", "glob": "*.rs *.py"})),
        ["./a.rs", "./d.py", "./sub/e.rs"]
    );
    assert_eq!(
        found(json!({"pattern": "needle", "glob": "*.rs,*.py"})),
        ["./a.rs", "./d.py", "./sub/e.rs"]
    );
    assert_eq!(
        found(json!({"pattern": "needle", "glob": "!*.rs"})),
        ["./b.ts", "./c.tsx", "./d.py"]
    );
    assert_eq!(
        found(json!({"pattern": "needle", "type": "rust"})),
        ["./a.rs", "./sub/e.rs"]
    );
    assert_eq!(
        found(json!({"pattern": "needle", "type": "rs"})),
        ["./a.rs", "./sub/e.rs"]
    );
    assert_eq!(
        found(json!({"pattern": "needle", "type": "py"})),
        ["./d.py"]
    );
    let err = tree.error(json!({"pattern": "needle", "type": "nosuchtype"}));
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("glob"), "{}", err.message());
    let err = tree.error(json!({"pattern": "needle", "glob": "a[b"}));
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn multiline_patterns_span_lines() {
    let mut tree = Tree::new();
    tree.write("a.rs", "struct A {\n    field: u8,\n}\nstruct B {}\n");
    let input = json!({
        "pattern": "struct A \\{.*?field", "output_mode": "content", "multiline": true
    });
    assert_eq!(
        tree.text(input),
        "./a.rs:1:struct A {\n./a.rs:2:    field: u8,"
    );
    // Counting, a multi-line search counts matches (as `rg -U -c`).
    tree.write("b.txt", "ab ab\nab\n");
    let input =
        json!({"pattern": "a.", "output_mode": "count", "multiline": true, "path": "b.txt"});
    assert_eq!(tree.text(input), "./b.txt:3\nFound 3 matches in 1 file.");
    // Without multiline the same pattern finds nothing.
    let input = json!({"pattern": "struct A \\{.*?field", "output_mode": "content"});
    assert_eq!(tree.text(input), "No matches found");
    // A literal newline needs multiline, and the error says so.
    let err = tree.error(json!({"pattern": "A \\{\\n", "output_mode": "content"}));
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("multiline"), "{}", err.message());
}

#[test]
fn head_limit_and_offset_page_through_results() {
    let mut tree = Tree::new();
    let lines: String = (1..=10).map(|i| format!("match {i}\n")).collect();
    tree.write("a.txt", &lines);
    let text = tree.text(json!({
        "pattern": "match", "output_mode": "content", "head_limit": 3
    }));
    assert!(text.starts_with("./a.txt:1:match 1\n./a.txt:2:match 2\n./a.txt:3:match 3\n["));
    assert!(text.contains("1-3 of 10"), "{text}");
    assert!(text.contains("7 more"), "{text}");
    assert!(text.contains("offset: 3"), "{text}");
    let text = tree.text(json!({
        "pattern": "match", "output_mode": "content", "head_limit": 2, "offset": 8
    }));
    assert_eq!(
        text,
        "./a.txt:9:match 9\n./a.txt:10:match 10\n[Showing lines 9-10 of 10.]"
    );
    let text = tree.text(json!({"pattern": "match", "output_mode": "content", "offset": 20}));
    assert!(text.contains("skips all 10"), "{text}");
    // Files mode pages over paths.
    for i in 0..5 {
        tree.write(&format!("f{i}.txt"), "match");
    }
    let text = tree.text(json!({"pattern": "match", "head_limit": 2, "offset": 1}));
    assert!(
        text.starts_with("Found 6 files\n./f3.txt\n./f2.txt\n["),
        "{text}"
    );
}

#[test]
fn long_output_is_capped_with_a_note() {
    let mut tree = Tree::new();
    let line = format!("{}\n", "needle ".repeat(60));
    tree.write("big.txt", line.repeat(200));
    let text = tree.text(json!({"pattern": "needle", "output_mode": "content"}));
    assert!(text.len() <= output::MAX_CHARS + 400, "{}", text.len());
    assert!(text.contains("of 200"), "{}", &text[text.len() - 300..]);
    assert!(text.contains("30000 characters"));
}

#[test]
fn long_lines_are_shortened_around_the_match() {
    let mut tree = Tree::new();
    let line = format!("{}needle{}\n", "a".repeat(2000), "b".repeat(2000));
    tree.write("min.js", line);
    let text = tree.text(json!({"pattern": "needle", "output_mode": "content"}));
    assert!(text.contains("needle"), "{text}");
    assert!(text.contains("shortened"), "{text}");
    assert!(text.len() < 700, "{}", text.len());
}

#[test]
fn ignore_files_are_respected_like_rg() {
    let mut tree = Tree::new();
    tree.dir(".git")
        .write(".gitignore", "target/\n*.log\n!keep.log\n")
        .write("src/a.rs", "needle")
        .write("target/gen.rs", "needle")
        .write("debug.log", "needle")
        .write("keep.log", "needle")
        .write(".ignore", "vendor/\n")
        .write("vendor/v.rs", "needle")
        .write("sub/.rgignore", "secret.txt\n")
        .write("sub/secret.txt", "needle")
        .write("sub/.gitignore", "local.txt\n")
        .write("sub/local.txt", "needle")
        .write(".hidden/h.txt", "needle")
        .write(".git/config", "needle");
    let mut found: Vec<String> = tree
        .text(json!({"pattern": "needle"}))
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect();
    found.sort();
    assert_eq!(found, ["./.hidden/h.txt", "./keep.log", "./src/a.rs"]);
    // A parent's .gitignore applies when searching a subdirectory; a
    // directory named explicitly is searched even if ignored, as by rg.
    tree.write("logs/app.log", "needle")
        .write("logs/app.txt", "needle");
    assert_eq!(
        tree.text(json!({"pattern": "needle", "path": "logs"})),
        "Found 1 file\n./logs/app.txt"
    );
    assert_eq!(
        tree.text(json!({"pattern": "needle", "path": "target"})),
        "Found 1 file\n./target/gen.rs"
    );
    // An ignored file named explicitly is searched.
    assert_eq!(
        tree.text(json!({"pattern": "needle", "path": "debug.log"})),
        "Found 1 file\n./debug.log"
    );
}

#[test]
fn gitignore_needs_a_repository() {
    let mut tree = Tree::new();
    tree.write(".gitignore", "*.log\n")
        .write("debug.log", "needle");
    assert_eq!(
        tree.text(json!({"pattern": "needle"})),
        "Found 1 file\n./debug.log"
    );
}

#[test]
fn binary_files_are_skipped_unless_named() {
    let mut tree = Tree::new();
    tree.write("bin.dat", b"needle\0\x01\x02")
        .write("text.txt", "needle\n");
    assert_eq!(
        tree.text(json!({"pattern": "needle"})),
        "Found 1 file\n./text.txt"
    );
    let text = tree.text(json!({"pattern": "needle", "output_mode": "content", "path": "bin.dat"}));
    assert!(text.contains("Binary file ./bin.dat matches"), "{text}");
    // A NUL byte past the first 64 KiB of a large file does not hide it.
    let mut big = "filler line\n".repeat(8000).into_bytes();
    big.extend_from_slice(b"needle\n\0");
    tree.write("big.txt", big);
    let text = tree.text(json!({"pattern": "needle", "output_mode": "count"}));
    assert!(text.contains("./big.txt:1"), "{text}");
    // A NUL byte early in a large file makes it binary.
    let mut big = b"\0".to_vec();
    big.extend_from_slice("needle\n".repeat(20_000).as_bytes());
    tree.write("big.bin", big);
    let text = tree.text(json!({"pattern": "needle", "output_mode": "count"}));
    assert!(!text.contains("big.bin"), "{text}");
}

#[test]
fn utf16_files_are_transcoded() {
    let mut tree = Tree::new();
    let mut bytes = vec![0xFF, 0xFE];
    for unit in "hello needle\n".encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    tree.write("utf16.txt", bytes);
    assert_eq!(
        tree.text(json!({"pattern": "needle", "output_mode": "content"})),
        "./utf16.txt:1:hello needle"
    );
}

#[test]
fn a_pattern_may_start_with_a_dash() {
    let mut tree = Tree::new();
    tree.write("a.txt", "run --verbose\nrun -q\n");
    assert_eq!(
        tree.text(json!({"pattern": "--verbose", "output_mode": "content"})),
        "./a.txt:1:run --verbose"
    );
    assert_eq!(
        tree.text(json!({"pattern": "-q", "output_mode": "content"})),
        "./a.txt:2:run -q"
    );
}

#[test]
fn invalid_regex_errors_quote_the_error_and_suggest_escaping() {
    let tree = Tree::new();
    let err = tree.error(json!({"pattern": "interface{}"}));
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("interface{}"), "{}", err.message());
    assert!(err.message().contains("escape"), "{}", err.message());
    let err = tree.error(json!({"pattern": "foo("}));
    assert!(
        err.message().contains("unclosed group"),
        "{}",
        err.message()
    );
}

#[test]
fn missing_paths_are_not_found_with_advice() {
    let tree = Tree::new();
    let err = tree.error(json!({"pattern": "x", "path": "nope"}));
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("nope"), "{}", err.message());
    assert!(err.message().contains("omit `path`"), "{}", err.message());
}

#[test]
fn paths_may_be_relative_absolute_or_a_file() {
    let mut tree = Tree::new();
    tree.write("sub/a.txt", "needle\n")
        .write("b.txt", "needle\n");
    assert_eq!(
        tree.text(json!({"pattern": "needle", "path": "sub"})),
        "Found 1 file\n./sub/a.txt"
    );
    let absolute = tree.root().join("sub").display().to_string();
    assert_eq!(
        tree.text(json!({"pattern": "needle", "path": absolute})),
        "Found 1 file\n./sub/a.txt"
    );
    assert_eq!(
        tree.text(json!({"pattern": "needle", "path": "./sub/../b.txt", "output_mode": "content"})),
        "./b.txt:1:needle"
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_not_followed() {
    let mut tree = Tree::new();
    tree.write("real/a.txt", "needle\n");
    std::os::unix::fs::symlink(tree.root().join("real"), tree.root().join("link")).unwrap();
    std::os::unix::fs::symlink(tree.root().join("real/a.txt"), tree.root().join("b.txt")).unwrap();
    assert_eq!(
        tree.text(json!({"pattern": "needle"})),
        "Found 1 file\n./real/a.txt"
    );
}

#[test]
fn the_schema_uses_claude_codes_names() {
    let schema = kaizen_sdk::schemars::schema_for!(GrepInput);
    let properties = serde_json::to_value(&schema).unwrap()["properties"].clone();
    for key in [
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "multiline",
        "head_limit",
        "offset",
    ] {
        assert!(properties.get(key).is_some(), "missing {key}: {properties}");
    }
}

mod split {
    //! A search split across shards finds what one search finds, in the
    //! same order.

    use super::*;
    use crate::search::{self, Mode, Options};

    fn text(output: &Output) -> String {
        format!("{output:?}")
    }

    fn both_ways(tree: &Tree, options: Options) -> (String, String) {
        let target = Target::Dir(tree.root());
        let alone = Options {
            shard_min: usize::MAX,
            ..options.clone()
        };
        let split = Options {
            shard_min: 1,
            ..options
        };
        (
            text(&search::run(&target, "needle", &alone).unwrap()),
            text(&search::run(&target, "needle", &split).unwrap()),
        )
    }

    fn tree() -> Tree {
        let mut tree = Tree::new();
        for i in 0..40 {
            let body = match i % 3 {
                0 => "needle\nhay\nneedle again\n".to_owned(),
                1 => "hay only\n".to_owned(),
                _ => format!("NEEDLE {i}\n"),
            };
            tree.write(&format!("d{}/f{i}.txt", i % 7), body);
        }
        tree.write(".gitignore", "d3/\n").dir(".git");
        tree
    }

    #[test]
    fn files_mode_splits_the_same_as_one_search() {
        let tree = tree();
        let (alone, split) = both_ways(&tree, Options::default());
        assert_eq!(alone, split);
        assert!(alone.contains("Found 12 files"), "{alone}");
        let (alone, split) = both_ways(
            &tree,
            Options {
                case_insensitive: true,
                ..Options::default()
            },
        );
        assert_eq!(alone, split);
    }

    #[test]
    fn count_mode_splits_the_same_as_one_search() {
        let tree = tree();
        let options = Options {
            mode: Mode::Count,
            head_limit: Some(5),
            offset: 2,
            ..Options::default()
        };
        let (alone, split) = both_ways(&tree, options);
        assert_eq!(alone, split);
        assert!(
            alone.contains("Found 24 matching lines in 12 files."),
            "{alone}"
        );
    }

    #[test]
    fn runs_cover_every_unit_once_in_order_with_as_many_directories() {
        use crate::walk::Unit;
        let units: Vec<Unit> = (0..9)
            .map(|i| {
                if i % 3 == 0 {
                    Unit::File(format!("/f{i}"))
                } else {
                    Unit::Dir(format!("/d{i}"))
                }
            })
            .collect();
        let runs = crate::shard::runs(&units, 3);
        assert_eq!(runs.len(), 3);
        assert_eq!(runs.concat(), units);
        let dirs: Vec<usize> = runs.iter().map(|run| crate::shard::dirs(run)).collect();
        assert_eq!(dirs, [2, 2, 2]);
        assert_eq!(crate::shard::runs(&units[..1], 4).concat(), units[..1]);
    }

    #[test]
    fn the_top_of_the_walk_is_cut_where_there_are_directories_enough() {
        let tree = tree();
        let fs = crate::fs::Fs::new();
        let mut walker = crate::walk::Walker::new(&fs, None, None);
        let units = crate::shard::plan(&mut walker, &tree.root(), 2).unwrap();
        // d0..d6 but the ignored d3, and the top-level .gitignore file.
        assert_eq!(crate::shard::dirs(&units), 6, "{units:?}");
        assert_eq!(units.len(), 7, "{units:?}");
    }
}
