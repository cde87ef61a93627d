//! Preopens: the workspace at its own path, and nothing else. Escapes by
//! `..`, absolute paths and symlinks fail; a read-only grant refuses writes.

mod common;

use common::{Harness, error, manifest, registry_of, text};
use kaizen_tools::ToolRegistry;
use serde_json::json;

async fn probe(h: &Harness, access: &str) -> ToolRegistry {
    let extra = format!(
        "[capabilities]\nfilesystem = [{{ path = \"$WORKSPACE\", access = \"{access}\" }}]"
    );
    let dir = h.custom_plugin("fs-probe", "fs-probe", &manifest("fs-probe", &extra));
    registry_of(&h.load_dir(&dir).await.unwrap())
}

fn args(op: &str, path: &str) -> String {
    json!({"op": op, "path": path, "content": "data"}).to_string()
}

#[tokio::test]
async fn workspace_is_mounted_at_its_own_absolute_path() {
    let h = Harness::new();
    let registry = probe(&h, "read-write").await;
    let ws = h.workspace();
    std::fs::write(ws.join("notes.txt"), "hello").unwrap();
    let ctx = h.ctx("s");
    let path = ws.join("notes.txt").display().to_string();
    assert_eq!(
        text(registry.call(&ctx, "FsProbe", &args("read", &path)).await),
        "hello"
    );
    // Relative paths resolve against the workspace.
    assert_eq!(
        text(
            registry
                .call(&ctx, "FsProbe", &args("read", "notes.txt"))
                .await
        ),
        "hello"
    );
    let new_file = ws.join("sub").display().to_string();
    text(
        registry
            .call(&ctx, "FsProbe", &args("mkdir", &new_file))
            .await,
    );
    let inner = ws.join("sub/out.txt").display().to_string();
    text(registry.call(&ctx, "FsProbe", &args("write", &inner)).await);
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/out.txt")).unwrap(),
        "data"
    );
}

#[tokio::test]
async fn escapes_out_of_the_preopen_fail() {
    let h = Harness::new();
    let registry = probe(&h, "read-write").await;
    let ws = h.workspace();
    let outside = h.scratch.path().join("secret.txt");
    std::fs::write(&outside, "top secret").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    std::os::unix::fs::symlink(h.scratch.path(), ws.join("dirlink")).unwrap();
    let ctx = h.ctx("s");
    let attempts = [
        args("read", "../secret.txt"),
        args("read", &outside.display().to_string()),
        args("read", &format!("{}/../secret.txt", ws.display())),
        args("read", "link"),
        args("read", "dirlink/secret.txt"),
        args("read", "/etc/passwd"),
        args("write", "../planted.txt"),
        args("write", "dirlink/planted.txt"),
    ];
    for attempt in attempts {
        let result = registry.call(&ctx, "FsProbe", &attempt).await;
        match result {
            Ok(out) => panic!("escape succeeded for {attempt}: {}", out.joined_text()),
            Err(err) => assert!(!err.message.contains("top secret"), "{}", err.message),
        }
    }
    assert!(!h.scratch.path().join("planted.txt").exists());
    // The host's root is not visible: whatever `/` shows, it is not it.
    if let Ok(listing) = registry.call(&ctx, "FsProbe", &args("list", "/")).await {
        let names = listing.joined_text();
        for host_dir in ["etc", "usr", "proc", "root"] {
            assert!(
                !names.lines().any(|n| n == host_dir),
                "host / leaked: {names}"
            );
        }
    }
    // The instance is still healthy.
    std::fs::write(ws.join("ok.txt"), "fine").unwrap();
    assert_eq!(
        text(
            registry
                .call(&ctx, "FsProbe", &args("read", "ok.txt"))
                .await
        ),
        "fine"
    );
}

#[tokio::test]
async fn read_only_grant_refuses_writes() {
    let h = Harness::new();
    let registry = probe(&h, "read-only").await;
    let ws = h.workspace();
    std::fs::write(ws.join("keep.txt"), "original").unwrap();
    let ctx = h.ctx("s");
    for attempt in [
        args("write", "keep.txt"),
        args("write", "new.txt"),
        args("mkdir", "newdir"),
        args("remove", "keep.txt"),
    ] {
        let err = error(registry.call(&ctx, "FsProbe", &attempt).await);
        assert!(!err.message.is_empty());
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("keep.txt")).unwrap(),
        "original"
    );
    assert!(!ws.join("new.txt").exists() && !ws.join("newdir").exists());
    assert_eq!(
        text(
            registry
                .call(&ctx, "FsProbe", &args("read", "keep.txt"))
                .await
        ),
        "original"
    );
}

#[tokio::test]
async fn nothing_is_visible_without_a_filesystem_grant() {
    let h = Harness::new();
    let dir = h.custom_plugin("fs-probe", "fs-probe", &manifest("fs-probe", ""));
    let plugin = h.load_dir(&dir).await.unwrap();
    assert!(plugin.grant.filesystem.is_empty());
    let registry = registry_of(&plugin);
    std::fs::write(h.workspace().join("a.txt"), "x").unwrap();
    let path = h.workspace().join("a.txt").display().to_string();
    error(
        registry
            .call(&h.ctx("s"), "FsProbe", &args("read", &path))
            .await,
    );
}
