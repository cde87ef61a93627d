//! The built-in `Grep` tool, embedded in the binary and called the way the
//! model would call it (through `kaizen tools call`).

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use std::time::{Duration, SystemTime};
use tempfile::TempDir;

mod common;

use common::kaizen;

/// A workspace with files of known contents and ages (`age` seconds in the
/// past).
fn workspace(files: &[(&str, &str, u64)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, contents, age) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(*age))
            .unwrap();
    }
    dir
}

/// Calls `Grep` with `input` (JSON); success, stdout with the workspace's
/// path shown as `.`, and stderr.
fn grep(ws: &TempDir, input: serde_json::Value) -> (bool, String, String) {
    let home = tempfile::tempdir().unwrap();
    let input = input.to_string();
    let out = kaizen(home.path(), ws.path(), &["tools", "call", "Grep", &input]);
    let root = ws.path().canonicalize().unwrap().display().to_string();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout)
            .replace(&root, ".")
            .trim_end()
            .to_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A workspace for most tests: three files, `b.rs` the newest.
fn sources() -> TempDir {
    workspace(&[
        ("a.rs", "fn main() {\n    println!(\"Hello\");\n}\n", 300),
        ("b.rs", "// hello\nfn helper() {}\n", 10),
        ("docs/c.md", "# Hello world\n\nSay hello.\n", 100),
    ])
}

#[test]
fn files_with_matches_lists_absolute_paths_newest_first() {
    let ws = sources();
    let (ok, out, err) = grep(&ws, serde_json::json!({"pattern": "(?i)hello"}));
    assert!(ok, "{err}");
    assert_eq!(out, "Found 3 files\n./b.rs\n./docs/c.md\n./a.rs");
    let (ok, out, _) = grep(&ws, serde_json::json!({"pattern": "goodbye"}));
    assert!(ok);
    assert_eq!(out, "No files found");
}

#[test]
fn content_mode_with_line_numbers_case_and_context() {
    let ws = sources();
    let input = serde_json::json!({"pattern": "hello", "output_mode": "content"});
    let (ok, out, err) = grep(&ws, input);
    assert!(ok, "{err}");
    assert_eq!(out, "./b.rs:1:// hello\n./docs/c.md:3:Say hello.");

    let input = serde_json::json!({
        "pattern": "hello", "output_mode": "content", "-i": true, "-n": false
    });
    let (_, out, _) = grep(&ws, input);
    assert_eq!(
        out,
        "./a.rs:    println!(\"Hello\");\n./b.rs:// hello\n./docs/c.md:# Hello world\n\
         ./docs/c.md:Say hello."
    );

    let input = serde_json::json!({
        "pattern": "println", "output_mode": "content", "-C": 1
    });
    let (_, out, _) = grep(&ws, input);
    assert_eq!(
        out,
        "./a.rs-1-fn main() {\n./a.rs:2:    println!(\"Hello\");\n./a.rs-3-}"
    );
    let input = serde_json::json!({
        "pattern": "^fn", "output_mode": "content", "-A": 1, "-B": 0
    });
    let (_, out, _) = grep(&ws, input);
    assert_eq!(
        out,
        "./a.rs:1:fn main() {\n./a.rs-2-    println!(\"Hello\");\n--\n./b.rs:2:fn helper() {}"
    );
}

#[test]
fn count_mode_gives_counts_and_a_total() {
    let ws = sources();
    let input = serde_json::json!({"pattern": "hello", "output_mode": "count", "-i": true});
    let (ok, out, err) = grep(&ws, input);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "./a.rs:1\n./b.rs:1\n./docs/c.md:2\nFound 4 matching lines in 3 files."
    );
}

#[test]
fn glob_type_and_multiline() {
    let ws = sources();
    let (_, out, _) = grep(
        &ws,
        serde_json::json!({"pattern": "(?i)hello", "glob": "*.md"}),
    );
    assert_eq!(out, "Found 1 file\n./docs/c.md");
    let (_, out, _) = grep(
        &ws,
        serde_json::json!({"pattern": "(?i)hello", "type": "rust"}),
    );
    assert_eq!(out, "Found 2 files\n./b.rs\n./a.rs");
    let (_, out, _) = grep(
        &ws,
        serde_json::json!({"pattern": "(?i)hello", "type": "md"}),
    );
    assert_eq!(out, "Found 1 file\n./docs/c.md");

    let input = serde_json::json!({
        "pattern": "main\\(\\) \\{\\s+println", "output_mode": "content", "multiline": true
    });
    let (ok, out, err) = grep(&ws, input);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "./a.rs:1:fn main() {\n./a.rs:2:    println!(\"Hello\");"
    );
    let input = serde_json::json!({
        "pattern": "main\\(\\) \\{\\s+println", "output_mode": "content"
    });
    let (_, out, _) = grep(&ws, input);
    assert_eq!(out, "No matches found");
}

#[test]
fn head_limit_and_offset() {
    let text: String = (1..=50).map(|i| format!("item {i}\n")).collect();
    let ws = workspace(&[("list.txt", &text, 1)]);
    let input = serde_json::json!({
        "pattern": "item", "output_mode": "content", "head_limit": 2, "offset": 10
    });
    let (ok, out, err) = grep(&ws, input);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..2],
        ["./list.txt:11:item 11", "./list.txt:12:item 12"]
    );
    assert!(lines[2].contains("11-12 of 50"), "{out}");
    assert!(lines[2].contains("offset: 12"), "{out}");
}

#[test]
fn gitignore_is_respected_inside_a_repository() {
    let ws = workspace(&[
        (".gitignore", "target/\n", 1),
        ("src/lib.rs", "needle\n", 1),
        ("target/gen.rs", "needle\n", 1),
        (".hidden/notes.txt", "needle\n", 1),
        (".git/HEAD", "needle\n", 1),
    ]);
    let (ok, out, err) = grep(&ws, serde_json::json!({"pattern": "needle"}));
    assert!(ok, "{err}");
    let mut found: Vec<&str> = out.lines().skip(1).collect();
    found.sort();
    assert_eq!(found, ["./.hidden/notes.txt", "./src/lib.rs"]);
}

#[test]
fn binary_files_are_skipped() {
    let ws = workspace(&[
        ("text.txt", "needle\n", 1),
        ("blob.bin", "needle\0\u{1}", 1),
    ]);
    let (ok, out, err) = grep(&ws, serde_json::json!({"pattern": "needle"}));
    assert!(ok, "{err}");
    assert_eq!(out, "Found 1 file\n./text.txt");
}

#[test]
fn a_pattern_starting_with_a_dash_is_just_a_regex() {
    let ws = workspace(&[("args.txt", "cmd --force\ncmd -n 3\n", 1)]);
    let input = serde_json::json!({"pattern": "--force", "output_mode": "content"});
    let (ok, out, err) = grep(&ws, input);
    assert!(ok, "{err}");
    assert_eq!(out, "./args.txt:1:cmd --force");
    let input = serde_json::json!({"pattern": "-n \\d", "output_mode": "content"});
    let (_, out, _) = grep(&ws, input);
    assert_eq!(out, "./args.txt:2:cmd -n 3");
}

#[test]
fn bad_input_gets_errors_that_say_what_to_do() {
    let ws = sources();
    let (ok, _, err) = grep(&ws, serde_json::json!({"pattern": "fn main("}));
    assert!(!ok);
    assert!(err.contains("Grep failed"), "{err}");
    assert!(err.contains("unclosed group"), "{err}");
    assert!(err.contains("escape"), "{err}");

    let (ok, _, err) = grep(&ws, serde_json::json!({"pattern": "x", "path": "nope"}));
    assert!(!ok);
    assert!(
        err.contains("nope") && err.contains("does not exist"),
        "{err}"
    );

    let (ok, _, err) = grep(&ws, serde_json::json!({"pattern": "x", "type": "nosuch"}));
    assert!(!ok);
    assert!(err.contains("Unknown file type"), "{err}");
}

#[test]
fn nothing_outside_the_granted_directories_is_readable() {
    let ws = sources();
    let input = serde_json::json!({"pattern": "root", "path": "/etc"});
    let (ok, out, err) = grep(&ws, input);
    assert!(!ok, "/etc must not be readable: {out}");
    assert!(!err.contains("passwd"), "{err}");
    let input =
        serde_json::json!({"pattern": "root", "path": "/etc/passwd", "output_mode": "content"});
    let (ok, out, _) = grep(&ws, input);
    assert!(!ok, "/etc/passwd must not be readable: {out}");
    assert!(!out.contains("root:"), "{out}");
    let input = serde_json::json!({"pattern": "root", "path": "../../../../../etc"});
    let (ok, out, _) = grep(&ws, input);
    assert!(!ok || !out.contains("passwd"), "{out}");
}

#[test]
fn an_absolute_path_outside_the_grant_is_refused_not_searched_in_the_workspace() {
    // The same path below the workspace: what the WASI libc would search
    // instead, if the tool did not refuse.
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::fs::write(outside.join("real.txt"), "needle outside\n").unwrap();
    let shadow = outside.strip_prefix("/").unwrap();
    let ws = workspace(&[
        (shadow.join("shadow.txt").to_str().unwrap(), "needle\n", 1),
        (shadow.join("real.txt").to_str().unwrap(), "needle\n", 1),
    ]);
    let root = ws.path().canonicalize().unwrap();
    for path in [outside.clone(), outside.join("real.txt")] {
        let input =
            serde_json::json!({"pattern": "needle", "path": path, "output_mode": "content"});
        let (ok, out, err) = grep(&ws, input);
        assert!(!ok, "{}: {out}", path.display());
        common::assert_outside_grant(&err, &path, &root);
        assert!(!out.contains("needle"), "{out}");
    }
}

#[test]
fn grep_is_listed_as_a_read_only_builtin() {
    let ws = sources();
    let home = tempfile::tempdir().unwrap();
    let out = kaizen(home.path(), ws.path(), &["plugins", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let grep = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "grep")
        .expect("grep is built in");
    assert_eq!(grep["origin"], "builtin");
    assert_eq!(grep["tools"], serde_json::json!(["Grep"]));
    assert_eq!(grep["granted"]["filesystem"][0]["access"], "read-only");

    let out = kaizen(home.path(), ws.path(), &["tools", "list", "--json"]);
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tool = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Grep")
        .expect("Grep is listed");
    let schema = tool.to_string();
    for key in [
        "\"-i\"",
        "\"-n\"",
        "\"-A\"",
        "\"-B\"",
        "\"-C\"",
        "head_limit",
        "multiline",
    ] {
        assert!(schema.contains(key), "{key} missing: {schema}");
    }
}

#[test]
fn a_search_over_many_files_is_split_across_instances_and_merged_in_order() {
    // Enough files for the plugin to split the search (`parallel`).
    let files: Vec<(String, String, u64)> = (0..700u64)
        .map(|i| {
            let body = if i % 7 == 0 {
                "needle\nhay\nneedle\n".to_owned()
            } else {
                "hay\n".to_owned()
            };
            (format!("d{:02}/f{i:03}.txt", i % 13), body, 10_000 - i)
        })
        .collect();
    let refs: Vec<(&str, &str, u64)> = files
        .iter()
        .map(|(name, body, age)| (name.as_str(), body.as_str(), *age))
        .collect();
    let ws = workspace(&refs);
    let (ok, out, err) = grep(&ws, serde_json::json!({"pattern": "needle"}));
    assert!(ok, "{err}");
    assert!(!err.contains("shard"), "every shard ran: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Found 100 files");
    // Newest first, across every shard: f693 was written last.
    assert_eq!(lines[1], "./d04/f693.txt");
    assert_eq!(lines[100], "./d00/f000.txt");
    let (ok, out, err) = grep(
        &ws,
        serde_json::json!({"pattern": "needle", "output_mode": "count"}),
    );
    assert!(ok, "{err}");
    assert!(
        out.ends_with("Found 200 matching lines in 100 files."),
        "{out}"
    );
    // In walk order (by directory, then name), as one search gives it.
    let counted: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(
        counted,
        ["./d00/f000.txt:2", "./d00/f091.txt:2", "./d00/f182.txt:2"]
    );
}
