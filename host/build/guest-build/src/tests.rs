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
                contract: None,
            },
            Plugin {
                name: "py".into(),
                dir: root.join("py"),
                component: "py.wasm".into(),
                cdylib: None,
                kinds: vec!["hook".into()],
                contract: None,
            },
            Plugin {
                name: "renamed".into(),
                dir: root.join("renamed"),
                component: "r.wasm".into(),
                cdylib: Some("lib_name.wasm".into()),
                kinds: Vec::new(),
                contract: None,
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

#[test]
fn contract_versions_come_from_the_wit_directories_in_version_order() {
    let wit = tempfile::tempdir().unwrap();
    for dir in ["v0.1.10", "v0.1.9", "v0.2.0", "notes", "v1.0"] {
        fs::create_dir(wit.path().join(dir)).unwrap();
    }
    write(&wit.path().join("v9.9.9"), "a file, not a version");
    assert_eq!(contract_versions(wit.path()), ["0.1.9", "0.1.10", "0.2.0"]);
    assert_eq!(newest_contract(wit.path()), "0.2.0");
}

#[test]
fn a_manifest_without_a_contract_is_stamped_with_the_newest() {
    let repo = tempfile::tempdir().unwrap();
    let repo = repo.path();
    fs::create_dir_all(repo.join("wit/v0.1.0")).unwrap();
    fs::create_dir_all(repo.join("wit/v0.2.0")).unwrap();
    let src = repo.join("plugins");
    write(
        &src.join("new/plugin.toml"),
        "[plugin]\nname = \"new\"\nversion = \"1.0.0\"\nkinds = [\"tool\"]\n\n[capabilities]\nllm = true\n",
    );
    write(
        &src.join("old/plugin.toml"),
        "[plugin]\nname = \"old\"\ncontract = \"0.1.0\"\n",
    );
    write(&src.join("x.wasm"), "x");
    let plugins = discover(&src);
    assert_eq!(plugins[0].contract.as_deref(), Some("0.2.0"));
    assert_eq!(plugins[1].contract, None);

    let out = repo.join("out");
    assemble(&out, &plugins, &[src.join("x.wasm"), src.join("x.wasm")]);
    assert_eq!(
        fs::read_to_string(out.join("new/plugin.toml")).unwrap(),
        "[plugin]\nname = \"new\"\nversion = \"1.0.0\"\ncontract = \"0.2.0\"\nkinds = [\"tool\"]\n\n[capabilities]\nllm = true\n"
    );
    assert_eq!(
        fs::read_to_string(out.join("old/plugin.toml")).unwrap(),
        "[plugin]\nname = \"old\"\ncontract = \"0.1.0\"\n"
    );
}

#[test]
fn a_stamp_goes_into_the_plugin_table_whatever_its_shape() {
    assert_eq!(
        stamp_contract("[plugin]\nname = \"a\"", "1.2.3"),
        "[plugin]\ncontract = \"1.2.3\"\nname = \"a\""
    );
    let text = "[capabilities]\nversion = 1\n[plugin]\nname = \"a\"\n[limits]\nversion = 2\n";
    assert_eq!(
        stamp_contract(text, "1.2.3"),
        "[capabilities]\nversion = 1\n[plugin]\ncontract = \"1.2.3\"\nname = \"a\"\n[limits]\nversion = 2\n"
    );
    let stamped = stamp_contract(text, "1.2.3");
    assert_eq!(stamp_contract(&stamped, "9.9.9"), stamped);
}

/// Writes `text` as `wit/v{version}/{name}` under `wit`.
fn wit_file(wit: &Path, version: &str, name: &str, text: &str) {
    write(&wit.join(format!("v{version}/{name}")), text);
}

#[test]
fn a_version_is_its_own_files_over_the_versions_before_it() {
    let wit = tempfile::tempdir().unwrap();
    let wit = wit.path();
    wit_file(
        wit,
        "0.1.0",
        "a.wit",
        "// a\npackage kaizen:plugin@0.1.0;\n\ninterface a {}\n",
    );
    wit_file(
        wit,
        "0.1.0",
        "b.wit",
        "package kaizen:plugin@0.1.0;\r\ninterface b {}\r\n",
    );
    wit_file(
        wit,
        "0.1.1",
        "b.wit",
        "package kaizen:plugin@0.1.1;\ninterface b { f: func(); }\n",
    );
    wit_file(wit, "0.1.1", "notes.md", "not WIT");
    wit_file(
        wit,
        "0.2.0",
        "c.wit",
        "package kaizen:plugin@0.2.0;\ninterface c {}",
    );

    let out = tempfile::tempdir().unwrap();
    let dir = assemble_contract(wit, "0.2.0", out.path());
    assert_eq!(dir, out.path().join("v0.2.0"));
    let read = |name: &str| fs::read_to_string(dir.join(name)).unwrap();
    // Inherited files name the new version; every other byte is kept.
    assert_eq!(
        read("a.wit"),
        "// a\npackage kaizen:plugin@0.2.0;\n\ninterface a {}\n"
    );
    assert_eq!(
        read("b.wit"),
        "package kaizen:plugin@0.2.0;\ninterface b { f: func(); }\n"
    );
    assert_eq!(
        read("c.wit"),
        "package kaizen:plugin@0.2.0;\ninterface c {}"
    );
    let mut names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["a.wit", "b.wit", "c.wit"]);

    // An older version leaves out what came after it, and a stale file
    // from an earlier assembly is gone.
    write(&out.path().join("v0.1.0/stale.wit"), "x");
    let old = assemble_contract(wit, "0.1.0", out.path());
    assert_eq!(
        fs::read_to_string(old.join("b.wit")).unwrap(),
        "package kaizen:plugin@0.1.0;\r\ninterface b {}\r\n"
    );
    assert!(!old.join("stale.wit").exists() && !old.join("c.wit").exists());
}

#[test]
fn a_file_copied_without_its_new_version_is_refused() {
    let wit = tempfile::tempdir().unwrap();
    let wit = wit.path();
    wit_file(wit, "0.1.0", "a.wit", "package kaizen:plugin@0.1.0;\n");
    wit_file(wit, "0.1.1", "a.wit", "package kaizen:plugin@0.1.0;\n");
    let err = crate::wit_versions::assemble(wit, "0.1.1").unwrap_err();
    assert!(
        err.contains("v0.1.1/a.wit declares kaizen:plugin@0.1.0"),
        "{err}"
    );
    assert!(
        err.contains("must declare `package kaizen:plugin@0.1.1;`"),
        "{err}"
    );
    let err = crate::wit_versions::assemble(wit, "0.3.0").unwrap_err();
    assert!(
        err.contains("has no contract version 0.3.0 (it has 0.1.0, 0.1.1)"),
        "{err}"
    );
}
