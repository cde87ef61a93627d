//! The built-in `Glob` tool, embedded in the binary and called the way the
//! model would call it (through `kaizen tools call`).

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use std::process::Command;
use std::time::{Duration, SystemTime};
use tempfile::TempDir;

mod common;

use common::kaizen;

/// A workspace with files of known ages (`age` seconds in the past).
fn workspace(files: &[(&str, u64)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, age) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, name).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(*age))
            .unwrap();
    }
    dir
}

fn glob(ws: &TempDir, input: &str) -> (bool, String, String) {
    let home = tempfile::tempdir().unwrap();
    let out = kaizen(home.path(), ws.path(), &["tools", "call", "Glob", input]);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn matches_files_newest_first_as_absolute_paths() {
    let ws = workspace(&[
        ("src/old.rs", 300),
        ("src/new.rs", 10),
        ("src/deep/mid.rs", 100),
        ("README.md", 5),
    ]);
    let root = ws.path().canonicalize().unwrap();
    let (ok, out, err) = glob(&ws, r#"{"pattern": "**/*.rs"}"#);
    assert!(ok, "{err}");
    let expected: Vec<String> = ["src/new.rs", "src/deep/mid.rs", "src/old.rs"]
        .iter()
        .map(|p| root.join(p).display().to_string())
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn no_match_says_so_and_gitignore_is_respected() {
    let ws = workspace(&[("a.txt", 1), ("target/gen.rs", 1), (".gitignore", 1)]);
    std::fs::write(ws.path().join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    let (ok, out, _) = glob(&ws, r#"{"pattern": "**/*.rs"}"#);
    assert!(ok);
    assert_eq!(out.trim(), "No files found");
}

#[test]
fn more_than_a_hundred_results_are_cut_with_a_note() {
    let files: Vec<(String, u64)> = (0..105).map(|i| (format!("f{i:03}.txt"), i)).collect();
    let refs: Vec<(&str, u64)> = files.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let ws = workspace(&refs);
    let (ok, out, err) = glob(&ws, r#"{"pattern": "*.txt"}"#);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("f000.txt"), "newest first: {}", lines[0]);
    assert_eq!(lines.iter().filter(|l| l.ends_with(".txt")).count(), 100);
    assert!(out.contains("5 more files matched"), "{out}");
}

#[test]
fn bad_input_gets_errors_that_say_what_to_do() {
    let ws = workspace(&[("a.txt", 1)]);
    let (ok, _, err) = glob(&ws, r#"{"pattern": "a[", "path": null}"#);
    assert!(!ok);
    assert!(err.contains("Glob failed"), "{err}");

    let missing = ws.path().join("nope").display().to_string();
    let input = serde_json::json!({"pattern": "*", "path": missing}).to_string();
    let (ok, _, err) = glob(&ws, &input);
    assert!(!ok);
    assert!(err.contains("nope"), "{err}");

    // Outside the granted directories the sandbox shows nothing.
    let input = serde_json::json!({"pattern": "*", "path": "/etc"}).to_string();
    let (ok, out, err) = glob(&ws, &input);
    assert!(!ok, "/etc must not be readable: {out}");
    assert!(!err.contains("passwd"), "{err}");
}

#[test]
fn an_absolute_path_outside_the_grant_is_refused_not_searched_in_the_workspace() {
    // The same path below the workspace: what the WASI libc would search
    // instead, if the tool did not refuse.
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::fs::write(outside.join("real.txt"), "outside").unwrap();
    let shadow = outside.strip_prefix("/").unwrap().join("shadow.txt");
    let ws = workspace(&[(shadow.to_str().unwrap(), 1)]);
    let root = ws.path().canonicalize().unwrap();
    for input in [
        serde_json::json!({"pattern": "*", "path": outside}),
        serde_json::json!({"pattern": format!("{}/*", outside.display())}),
    ] {
        let (ok, out, err) = glob(&ws, &input.to_string());
        assert!(!ok, "{input}: {out}");
        common::assert_outside_grant(&err, &outside, &root);
        assert!(!out.contains("shadow") && !err.contains("shadow"), "{out}");
        assert!(!out.contains("real.txt"), "{out}");
    }
}

#[test]
fn glob_is_listed_as_a_read_only_builtin() {
    let ws = workspace(&[]);
    let home = tempfile::tempdir().unwrap();
    let out = kaizen(home.path(), ws.path(), &["plugins", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let glob = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "glob")
        .expect("glob is built in");
    assert_eq!(glob["origin"], "builtin");
    assert_eq!(glob["tools"], serde_json::json!(["Glob"]));
    let root = ws.path().canonicalize().unwrap();
    assert_eq!(
        glob["granted"]["filesystem"][0]["path"],
        root.to_str().unwrap()
    );
    assert_eq!(glob["granted"]["filesystem"][0]["access"], "read-only");
}

#[test]
fn runs_without_the_pooling_allocator_where_virtual_memory_is_limited() {
    let ws = workspace(&[("a.toml", 1)]);
    let home = tempfile::tempdir().unwrap();
    // 8 GiB of address space cannot hold the instance pool; the engine
    // must fall back to on-demand allocation and still serve the call.
    let script = format!(
        "ulimit -v 8388608 && exec {} tools call Glob '{{\"pattern\":\"*.toml\"}}' --cwd {}",
        env!("CARGO_BIN_EXE_kaizen"),
        ws.path().display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("KAIZEN_HOME", home.path())
        .env("KAIZEN_LOG", "info")
        .env("KAIZEN_CACHE_DIR", common::cache_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.trim_end().ends_with("a.toml"), "{stdout}");
    assert!(
        stderr.contains("falling back to on-demand allocation"),
        "{stderr}"
    );
}
