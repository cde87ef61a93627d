use super::*;
use std::fs;
use std::os::unix::fs::symlink;

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

#[test]
fn a_link_inside_the_workspace_is_read_through_and_its_target_is_configuration() {
    let (_dir, root) = workspace();
    fs::create_dir_all(root.join("conf/claude")).unwrap();
    fs::write(root.join("conf/kaizen.toml"), "[sandbox]\n").unwrap();
    fs::write(root.join("conf/claude/settings.json"), "{}").unwrap();
    symlink("conf/kaizen.toml", root.join("kaizen.toml")).unwrap();
    symlink("conf/claude", root.join(".claude")).unwrap();
    let before = ConfigSnapshot::read(&root).unwrap();
    assert_eq!(before.file("kaizen.toml"), Some(&b"[sandbox]\n"[..]));
    assert_eq!(before.file(".claude/settings.json"), Some(&b"{}"[..]));
    let targets = before.link_targets();
    assert!(
        targets.contains(&root.join("conf/kaizen.toml")),
        "{targets:?}"
    );
    assert!(targets.contains(&root.join("conf/claude")), "{targets:?}");
    // Editing the target is a change of the configuration.
    fs::write(root.join("conf/claude/settings.json"), r#"{"hooks": {}}"#).unwrap();
    assert_ne!(
        ConfigSnapshot::read(&root).unwrap().digest(),
        before.digest()
    );
}

#[test]
fn a_link_out_of_the_workspace_or_to_nothing_is_refused_not_read() {
    let (_dir, root) = workspace();
    let (_elsewhere, outside) = workspace();
    fs::write(outside.join("secret.toml"), "key = 'x'\n").unwrap();
    symlink(outside.join("secret.toml"), root.join("kaizen.toml")).unwrap();
    symlink(&outside, root.join(".kaizen")).unwrap();
    symlink("missing.json", root.join(".mcp.json")).unwrap();
    let snapshot = ConfigSnapshot::read(&root).unwrap();
    assert_eq!(snapshot.file("kaizen.toml"), None);
    assert_eq!(snapshot.file(".kaizen/secret.toml"), None);
    let refused: BTreeMap<&str, &str> = snapshot.refused().collect();
    assert!(
        refused["kaizen.toml"].contains("out of the workspace"),
        "{refused:?}"
    );
    assert!(
        refused[".kaizen"].contains("out of the workspace"),
        "{refused:?}"
    );
    assert!(refused[".mcp.json"].contains("nowhere"), "{refused:?}");
    assert!(snapshot.link_targets().is_empty());
    // Refused is not absent: trust records it.
    assert!(!snapshot.is_empty());
}

#[test]
fn a_fifo_is_refused_without_waiting_on_it() {
    let (_dir, root) = workspace();
    let path =
        std::ffi::CString::new(root.join(".mcp.json").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo on a path of this test's own directory.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let snapshot = ConfigSnapshot::read(&root).unwrap();
    let refused: Vec<_> = snapshot.refused().collect();
    assert_eq!(refused, [(".mcp.json", "not a regular file")]);
}

#[test]
fn plugin_directories_named_inside_the_workspace_are_part_of_it() {
    let (_dir, root) = workspace();
    fs::write(
        root.join("kaizen.toml"),
        "[plugins]\ndirs = [\"./tools/plugins\", \"/elsewhere\", \"../up\"]\n",
    )
    .unwrap();
    fs::create_dir_all(root.join("tools/plugins/p")).unwrap();
    fs::write(root.join("tools/plugins/p/plugin.toml"), "x").unwrap();
    let snapshot = ConfigSnapshot::read(&root).unwrap();
    assert_eq!(
        snapshot.file("tools/plugins/p/plugin.toml"),
        Some(&b"x"[..])
    );
    assert_eq!(snapshot.listing().lines().count(), 2);
}

#[test]
fn a_materialized_copy_holds_what_was_read_not_what_is_there_now() {
    let (_dir, root) = workspace();
    fs::create_dir_all(root.join(".kaizen/plugins/p")).unwrap();
    fs::write(root.join(".kaizen/plugins/p/plugin.toml"), "trusted").unwrap();
    let snapshot = ConfigSnapshot::read(&root).unwrap();
    assert!(snapshot.has_dir(".kaizen/plugins"));
    fs::write(root.join(".kaizen/plugins/p/plugin.toml"), "swapped").unwrap();
    let copy = tempfile::tempdir().unwrap();
    let into = copy.path().join("plugins");
    snapshot.materialize(".kaizen/plugins", &into).unwrap();
    assert_eq!(
        fs::read_to_string(into.join("p/plugin.toml")).unwrap(),
        "trusted"
    );
}
