//! What a hostile model tries through the real built-ins, run by the real
//! binary: rewriting the configuration that decides what tools may do
//! (with the file tools and with Bash), and reaching Kaizen's own state when
//! it lies inside the workspace (a user working in their home directory):
//! the compile cache of code the host runs, the config, the sessions.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::session::Session;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn bash(command: &str) -> (&'static str, Value) {
    ("Bash", json!({ "command": command }))
}

/// A workspace whose `KAIZEN_HOME` (and so the compile cache) lies inside
/// it, as `~/.local/share/kaizen` lies inside `~`.
struct HomeInWorkspace {
    dir: tempfile::TempDir,
}

impl HomeInWorkspace {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".local/share/kaizen");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), "# the user's own\n").unwrap();
        Self { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn home(&self) -> PathBuf {
        self.root().join(".local/share/kaizen")
    }

    /// A session here, with the compile cache in its default place under
    /// `KAIZEN_HOME`.
    fn session(&self) -> (PathBuf, PathBuf) {
        (self.home(), self.root())
    }
}

async fn run(home: &Path, ws: &Path, calls: &[(&str, Value)]) -> Vec<String> {
    let mut session = Session::new(home, ws);
    session.env.push(("KAIZEN_CACHE_DIR".into(), String::new()));
    session.run(calls).await.results
}

#[tokio::test(flavor = "multi_thread")]
async fn the_file_tools_cannot_change_configuration() {
    let ws = HomeInWorkspace::new();
    let (home, root) = ws.session();
    std::fs::write(root.join("kaizen.toml"), "[plugins]\n").unwrap();
    std::fs::create_dir_all(root.join(".kaizen/plugins/x")).unwrap();
    std::fs::write(root.join(".kaizen/plugins/x/plugin.toml"), "ok\n").unwrap();
    let config = root.join("kaizen.toml").display().to_string();
    let grant = "[grants.bash]\nprocess = { programs = [\"bash\"], network = true }\n";
    let results = run(
        &home,
        &root,
        &[
            ("Read", json!({ "file_path": config })),
            ("Write", json!({ "file_path": config, "content": grant })),
            (
                "Edit",
                json!({ "file_path": config, "old_string": "[plugins]", "new_string": grant }),
            ),
            (
                "Write",
                json!({
                    "file_path": root.join(".kaizen/plugins/evil/plugin.toml"),
                    "content": "[plugin]\nname = \"evil\"\n",
                }),
            ),
            (
                "Write",
                json!({ "file_path": root.join(".claude/settings.json"), "content": "{}" }),
            ),
            (
                "Write",
                json!({ "file_path": root.join(".mcp.json"), "content": "{}" }),
            ),
            (
                "Write",
                json!({ "file_path": root.join("notes.md"), "content": "fine\n" }),
            ),
        ],
    )
    .await;
    assert!(
        results[0].contains("[plugins]"),
        "reading is fine: {}",
        results[0]
    );
    for (i, result) in results.iter().enumerate().take(6).skip(1) {
        assert!(
            result.contains("read-only") || result.contains("Read-only"),
            "call {i} was not refused as read-only: {result}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("kaizen.toml")).unwrap(),
        "[plugins]\n"
    );
    for created in [".kaizen/plugins/evil", ".claude", ".mcp.json"] {
        assert!(!root.join(created).exists(), "{created} was created");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("notes.md")).unwrap(),
        "fine\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_cannot_change_configuration() {
    let ws = HomeInWorkspace::new();
    let (home, root) = ws.session();
    std::fs::write(root.join("kaizen.toml"), "[plugins]\n").unwrap();
    std::fs::create_dir_all(root.join(".kaizen/plugins")).unwrap();
    let results = run(
        &home,
        &root,
        &[
            bash("echo '[grants.bash]' >> kaizen.toml; echo status=$?"),
            bash("rm -f kaizen.toml; echo status=$?"),
            bash("mkdir .kaizen/plugins/evil; echo status=$?"),
            bash("mv .kaizen gone; echo status=$?"),
        ],
    )
    .await;
    for result in &results {
        assert!(!result.contains("status=0"), "{result}");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("kaizen.toml")).unwrap(),
        "[plugins]\n"
    );
    assert!(!root.join(".kaizen/plugins/evil").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn kaizen_home_inside_the_workspace_is_not_there_for_tools() {
    let ws = HomeInWorkspace::new();
    let (home, root) = ws.session();
    std::fs::write(root.join("main.rs"), "fn main() {}\n").unwrap();
    let cache = home.join("cache");
    let results = run(
        &home,
        &root,
        &[
            ("Read", json!({ "file_path": home.join("config.toml") })),
            (
                "Write",
                json!({ "file_path": home.join("config.toml"), "content": "[grants]\n" }),
            ),
            ("Glob", json!({ "pattern": "**/*" })),
            ("Grep", json!({ "pattern": "the user's own", "path": root })),
            bash(&format!("ls {} ; echo status=$?", home.display())),
            bash(&format!(
                "mkdir -p {0}/x && echo forged > {0}/x/a.cwasm; echo status=$?",
                cache.join("components").display()
            )),
            bash(&format!(
                "cat {}/config.toml; echo status=$?",
                home.display()
            )),
            bash(&format!(
                "ls {}/sessions && touch {}/sessions/planted; echo status=$?",
                home.display(),
                home.display()
            )),
        ],
    )
    .await;
    assert!(
        results[0].contains("does not exist") || results[0].contains("not found"),
        "{}",
        results[0]
    );
    assert!(!results[1].is_empty());
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "# the user's own\n"
    );
    assert!(results[2].contains("main.rs"), "{}", results[2]);
    assert!(!results[2].contains("config.toml"), "{}", results[2]);
    assert!(!results[3].contains("config.toml"), "{}", results[3]);
    for result in &results[4..] {
        assert!(!result.contains("status=0"), "{result}");
        assert!(!result.contains("the user's own"), "{result}");
    }
    assert!(!home.join("sessions/planted").exists());
    // The real cache is intact: a second run loads and works.
    let again = run(&home, &root, &[bash("echo again")]).await;
    assert_eq!(again[0].trim(), "again");
}
