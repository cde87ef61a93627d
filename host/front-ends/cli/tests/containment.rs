//! Containment by construction: programs Kaizen starts on its own account
//! (a toolchain installed for a built-in planner, say) run in the same OS
//! sandbox as a tool's, never as the user in the repository Kaizen was
//! started in. Each test reproduces an attack of a hostile repository.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{bash, result_of, run_command, scripted_run};
use common::terminal::Terminal;
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use kaizen_test_support::netns;
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::Path;

/// The first run with a built-in planner written in Python installs its
/// toolchain (`python3 -m venv`, then pip). A `venv.py` in the repository
/// the run starts in would stand in for the standard module if that ran
/// in the repository, as the user, with the environment's keys: it must
/// never run. The install itself fails here (the namespace has no way to
/// the package index), after the venv step.
#[tokio::test(flavor = "multi_thread")]
async fn a_toolchain_install_never_runs_the_repositorys_code() {
    if !netns::isolated(
        env!("CARGO_TARGET_TMPDIR"),
        "a_toolchain_install_never_runs_the_repositorys_code",
    ) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let toolchains = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran-as-the-user");
    let planted = format!(
        "import os, pathlib\npathlib.Path({marker:?}).write_text(repr(dict(os.environ)))\n"
    );
    std::fs::write(ws.path().join("venv.py"), &planted).unwrap();
    std::fs::create_dir(ws.path().join("ensurepip")).unwrap();
    std::fs::write(ws.path().join("ensurepip/__init__.py"), &planted).unwrap();
    let server = ModelServer::start(Script::new().reply(Reply::text("Done.")))
        .await
        .unwrap();
    let mut cmd = run_command(
        home.path(),
        ws.path(),
        Some((&server, Wire::OpenAi)),
        &[
            "--model",
            "gpt-4o-mini",
            "--planner",
            "self-consistency",
            "Do the task.",
        ],
    );
    cmd.current_dir(ws.path())
        .env("KAIZEN_TOOLCHAINS_DIR", toolchains.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-must-not-leak");
    let out = tokio::process::Command::from(cmd).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !marker.exists(),
        "the repository's venv.py ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    assert!(!out.status.success(), "the install cannot succeed offline");
    assert!(stderr.contains("built on first use"), "{stderr}");
    // The venv step itself ran, with the standard library's module.
    let venv = std::fs::read_dir(toolchains.path())
        .unwrap()
        .filter_map(Result::ok)
        .find(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("componentize-py-")
        })
        .map(|entry| entry.path());
    assert!(
        venv.is_some_and(|dir| dir.join("pyvenv.cfg").is_file()),
        "{stderr}"
    );
}

/// A `KAIZEN_HOME`, a workspace, and the workspace's canonical path.
fn dirs() -> (tempfile::TempDir, tempfile::TempDir, std::path::PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    (home, ws, root)
}

/// `kaizen run` in `root` (its working directory too) against a model
/// that answers `text`; the server lives as long as the caller keeps it.
async fn answering(home: &Path, root: &Path, text: &str) -> (ModelServer, std::process::Command) {
    let server = ModelServer::start(Script::new().reply(Reply::text(text)))
        .await
        .unwrap();
    let mut cmd = run_command(
        home,
        root,
        Some((&server, Wire::OpenAi)),
        &["--model", "gpt-4o-mini", "Do the task."],
    );
    cmd.current_dir(root);
    (server, cmd)
}

/// `kaizen trust WS` with `home` as `KAIZEN_HOME`.
fn trust(home: &Path, ws: &Path, extra: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .arg("trust")
        .args(extra)
        .arg(ws)
        .env("KAIZEN_HOME", home)
        .output()
        .unwrap();
    common::succeeded(&out)
}

/// A hook that leaves `marker` behind when it runs at the session's start.
fn marking_hook(marker: &Path) -> String {
    serde_json::json!({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": format!("touch {}", marker.display())}
    ]}]}})
    .to_string()
}

/// A trusted workspace whose configuration files are links into `conf/`:
/// what the links lead to is configuration as much as the names are. The
/// model cannot change it (Bash and the file tools are refused), and a
/// change made any other way is a change of what was trusted: it is
/// reported so, and the new hook does not run.
#[tokio::test(flavor = "multi_thread")]
async fn configuration_behind_links_is_protected_and_its_changes_ask_again() {
    let (home, _ws, root) = dirs();
    std::fs::create_dir_all(root.join("conf")).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join("conf/kaizen.toml"), "# benign\n").unwrap();
    std::fs::write(root.join("conf/settings.json"), "{}").unwrap();
    symlink("conf/kaizen.toml", root.join("kaizen.toml")).unwrap();
    symlink("../conf/settings.json", root.join(".claude/settings.json")).unwrap();
    trust(home.path(), &root, &[]);
    let marker = root.join("hook-ran");
    let hook = marking_hook(&marker);
    // The model tries to rewrite the targets.
    let rewrite = format!("printf '%s' '{hook}' > conf/settings.json; echo done");
    let read = json!({"file_path": root.join("conf/kaizen.toml")}).to_string();
    let replies = vec![
        bash(&rewrite),
        Reply::tool("Read", &read),
        Reply::tool(
            "Write",
            &json!({"file_path": root.join("conf/kaizen.toml"), "content": "[sandbox]\n"})
                .to_string(),
        ),
        Reply::text("Finished."),
    ];
    let (out, _) = scripted_run(home.path(), &root, replies, &[], &[]).await;
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(
        std::fs::read_to_string(root.join("conf/settings.json")).unwrap(),
        "{}",
        "Bash rewrote a configuration link's target"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("conf/kaizen.toml")).unwrap(),
        "# benign\n",
        "Write rewrote a configuration link's target"
    );
    assert!(!marker.exists());
    // Changed some other way: trust says so, and the hook does not run.
    std::fs::write(root.join("conf/settings.json"), &hook).unwrap();
    let listed = trust(home.path(), &root, &["--list"]);
    assert!(listed.contains("changed since: asks again"), "{listed}");
    let (out, _) = scripted_run(home.path(), &root, vec![Reply::text("Hi.")], &[], &[]).await;
    assert_eq!(result_of(&out)["status"], "complete");
    assert!(!marker.exists(), "a hook that was never trusted ran");
}

/// Trust is decided on the configuration as read once, and that is what
/// takes effect: a settings file changed while the user is asked (by a
/// background job of another session, say) is not read again, so the
/// hook added in between never runs.
#[tokio::test(flavor = "multi_thread")]
async fn what_takes_effect_is_what_was_trusted_not_what_is_there_later() {
    let (home, _ws, root) = dirs();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
    let marker = root.join("hook-ran");
    let (_server, cmd) = answering(home.path(), &root, "Hi.").await;
    let mut session = Terminal::spawn(cmd);
    session.expect("Trust this workspace? [y/N]");
    std::fs::write(root.join(".claude/settings.json"), marking_hook(&marker)).unwrap();
    session.type_line("y");
    let code = session.finish();
    assert_eq!(code, Some(0), "{}", session.transcript());
    assert!(
        !marker.exists(),
        "a hook written after the question ran: {}",
        session.transcript()
    );
    // What was trusted is the file as shown, so the new one asks again.
    let listed = trust(home.path(), &root, &["--list"]);
    assert!(listed.contains("changed since: asks again"), "{listed}");
}

/// A workspace file a program of a session can create must never make
/// Kaizen unusable: invalid settings in a workspace that is not trusted
/// are a note, and the run goes on.
#[tokio::test(flavor = "multi_thread")]
async fn invalid_settings_in_an_untrusted_workspace_are_a_note_not_a_failure() {
    let (home, _ws, root) = dirs();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), "{ not json").unwrap();
    std::fs::write(root.join("kaizen.toml"), "[[[ not toml").unwrap();
    let (out, _) = scripted_run(home.path(), &root, vec![Reply::text("Hi.")], &[], &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(result_of(&out)["status"], "complete", "{stderr}");
    assert!(stderr.contains("settings.json"), "{stderr}");
    assert!(stderr.contains("kaizen.toml"), "{stderr}");
}

/// A program a deny rule refuses whatever its arguments cannot run inside
/// the sandbox at all: not from a script file the rules cannot see into,
/// not under another name.
#[tokio::test(flavor = "multi_thread")]
async fn a_denied_program_cannot_run_however_it_is_reached() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    )
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    std::fs::write(root.join("victim"), "still here").unwrap();
    std::fs::write(root.join("build.sh"), "/bin/rm victim; echo rm said $?\n").unwrap();
    let replies = vec![
        bash("bash build.sh"),
        bash("cp /usr/bin/rm ./copy; ./copy victim; echo copy said $?"),
        Reply::text("Finished."),
    ];
    let (out, requests) = scripted_run(home.path(), &root, replies, &[], &[]).await;
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{result}");
    assert!(root.join("victim").exists(), "{result}");
    let sent = requests.last().unwrap().body.to_string();
    assert!(sent.contains("Permission denied"), "{sent}");
}

/// What the model writes reaches the user's terminal without its control
/// bytes: no clipboard write (OSC 52), no screen clear, no title, in the
/// answer as it streams and in `kaizen sessions show`.
#[tokio::test(flavor = "multi_thread")]
async fn the_models_text_sends_no_escape_sequence_to_the_terminal() {
    let (home, _ws, root) = dirs();
    let hostile = "Done.\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07";
    let (_server, cmd) = answering(home.path(), &root, hostile).await;
    let out = tokio::process::Command::from(cmd).output().await.unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("Done."), "{shown:?}");
    assert!(
        !shown.contains('\x1b') && !shown.contains('\x07'),
        "{shown:?}"
    );
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(["sessions", "show", "last"])
        .env("KAIZEN_HOME", home.path())
        .output()
        .unwrap();
    let listed = common::succeeded(&listed);
    assert!(listed.contains("Done."), "{listed:?}");
    assert!(
        !listed.contains('\x1b') && !listed.contains('\x07'),
        "{listed:?}"
    );
}

/// `Edit(dir/**)` holds for programs as a whole directory: nothing can be
/// added to it, changed in it, or taken out of the rule's reach by
/// renaming it.
#[tokio::test(flavor = "multi_thread")]
async fn an_edit_rule_on_a_directory_holds_against_renaming_it() {
    let (home, _ws, root) = dirs();
    std::fs::write(
        home.path().join("config.toml"),
        "[permissions]\ndeny = [\"Edit(docs/**)\"]\n",
    )
    .unwrap();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/a.md"), "kept\n").unwrap();
    let replies = vec![
        bash("mv docs moved; echo x > docs/new.md; echo y >> docs/a.md; echo tried"),
        Reply::text("Finished."),
    ];
    let (out, _) = scripted_run(home.path(), &root, replies, &[], &[]).await;
    assert_eq!(result_of(&out)["status"], "complete");
    assert!(root.join("docs").is_dir() && !root.join("moved").exists());
    assert!(!root.join("docs/new.md").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("docs/a.md")).unwrap(),
        "kept\n"
    );
}
