//! Tests of the parts that do not run cargo.

use super::*;
use std::time::{Duration, SystemTime};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[test]
fn the_shared_dir_is_beside_the_profiles_whatever_the_target() {
    let out = Path::new("/t/debug/build/pkg-0123/out");
    assert_eq!(
        shared_dir(out, Some(OsStr::new("x86_64-unknown-linux-gnu"))),
        Some(PathBuf::from("/t/wasm-guests"))
    );
    let cross = Path::new("/t/x86_64-unknown-linux-gnu/release/build/pkg-0123/out");
    assert_eq!(
        shared_dir(cross, Some(OsStr::new("x86_64-unknown-linux-gnu"))),
        Some(PathBuf::from("/t/wasm-guests"))
    );
    assert_eq!(shared_dir(Path::new("/out"), None), None);
}

#[test]
fn discovers_plugin_dirs_with_their_artifact_and_component_names() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    write(
        &root.join("my-tool/plugin.toml"),
        "[plugin]\nname = \"my-tool\"\n",
    );
    write(
        &root.join("my-tool/Cargo.toml"),
        "[package]\nname = \"kaizen-builtin-my-tool\"\n",
    );
    write(
        &root.join("renamed/plugin.toml"),
        "[plugin]\nname = \"renamed\"\ncomponent = \"r.wasm\"\n",
    );
    write(
        &root.join("renamed/Cargo.toml"),
        "[package]\nname = \"x\"\n[lib]\nname = \"lib_name\"\n",
    );
    write(
        &root.join("py/plugin.toml"),
        "[plugin]\nname = \"py\"\nkinds = [\"hook\"]\n",
    );
    write(
        &root.join("not-a-plugin/Cargo.toml"),
        "[package]\nname = \"n\"\n",
    );
    write(&root.join("Cargo.toml"), "[workspace]\n");

    let plugins = discover(root);
    assert_eq!(
        plugins,
        [
            Plugin {
                name: "my-tool".into(),
                dir: root.join("my-tool"),
                component: "my-tool.wasm".into(),
                cdylib: Some("kaizen_builtin_my_tool.wasm".into()),
                kinds: Vec::new(),
            },
            Plugin {
                name: "py".into(),
                dir: root.join("py"),
                component: "py.wasm".into(),
                cdylib: None,
                kinds: vec!["hook".into()],
            },
            Plugin {
                name: "renamed".into(),
                dir: root.join("renamed"),
                component: "r.wasm".into(),
                cdylib: Some("lib_name.wasm".into()),
                kinds: Vec::new(),
            },
        ]
    );
    assert_eq!(plugins[0].manifest(), root.join("my-tool/plugin.toml"));
}

#[test]
fn assemble_syncs_changed_files_only_and_removes_stale_plugins() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    write(&src.join("a/plugin.toml"), "[plugin]\nname = \"a\"\n");
    write(&src.join("a.wasm"), "one");
    let out = tmp.path().join("out");
    write(&out.join("gone/plugin.toml"), "");
    let plugins = discover(&src);

    assemble(&out, &plugins, &[src.join("a.wasm")]);
    let wasm = out.join("a/a.wasm");
    assert_eq!(fs::read_to_string(&wasm).unwrap(), "one");
    assert!(out.join("a/plugin.toml").is_file());
    assert!(!out.join("gone").exists());

    // Unchanged bytes leave the file alone, modification time included.
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
    fs::File::options()
        .write(true)
        .open(&wasm)
        .unwrap()
        .set_modified(old)
        .unwrap();
    sync_file(&src.join("a.wasm"), &wasm);
    assert_eq!(fs::metadata(&wasm).unwrap().modified().unwrap(), old);

    write(&src.join("a.wasm"), "two");
    sync_file(&src.join("a.wasm"), &wasm);
    assert_eq!(fs::read_to_string(&wasm).unwrap(), "two");
    let names: Vec<_> = fs::read_dir(out.join("a"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
}
