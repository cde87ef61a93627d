//! Files' earlier contents: kept, planned, restored beneath their
//! directory and nowhere else.

use super::each_with_session;
use crate::Restore;
use std::fs;
use std::path::PathBuf;

/// A workspace, canonical so that paths beneath it compare equal.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    (ws, root)
}

#[test]
fn rewind_restores_files_byte_for_byte_and_removes_new_ones() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        let (_ws, root) = workspace();
        let text = root.join("a.txt");
        let binary = root.join("b.bin");
        let created = root.join("new/c.txt");
        let original_binary: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        fs::write(&text, "one\r\n").unwrap();
        fs::write(&binary, &original_binary).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&text, fs::Permissions::from_mode(0o751)).unwrap();
        }

        // Step 2 changes a.txt and creates c.txt; step 3 changes both files.
        store.backup_file("s", 2, &root, &text).unwrap();
        fs::write(&text, "two\n").unwrap();
        store.backup_file("s", 2, &root, &created).unwrap();
        fs::create_dir_all(created.parent().unwrap()).unwrap();
        fs::write(&created, "made").unwrap();
        store.backup_file("s", 3, &root, &text).unwrap();
        fs::write(&text, "three\n").unwrap();
        store.backup_file("s", 3, &root, &binary).unwrap();
        fs::write(&binary, b"changed").unwrap();

        // To before step 3: a.txt as step 2 left it, b.bin as it was.
        let plan = store.rewind_plan("s", 3).unwrap();
        assert_eq!(plan.len(), 2);
        store.restore("s", &plan, &root).unwrap();
        assert_eq!(fs::read_to_string(&text).unwrap(), "two\n");
        assert_eq!(fs::read(&binary).unwrap(), original_binary);
        assert!(created.exists());

        // To before step 1: everything as it was, c.txt gone.
        let plan = store.rewind_plan("s", 1).unwrap();
        store.restore("s", &plan, &root).unwrap();
        assert_eq!(fs::read(&text).unwrap(), b"one\r\n");
        assert!(!created.exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&text).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o751);
        }
    });
}

#[test]
fn a_torn_last_index_line_is_passed_over_and_a_damaged_one_before_is_an_error() {
    each_with_session("s", |fx| {
        let (_ws, root) = workspace();
        let file = root.join("a.txt");
        fs::write(&file, "before").unwrap();
        fx.store.backup_file("s", 1, &root, &file).unwrap();
        fx.storage
            .append_file_index("s", br#"{"step":2,"pa"#)
            .unwrap();
        assert_eq!(fx.store.rewind_plan("s", 1).unwrap().len(), 1);
        fx.storage.append_file_index("s", b"\n{}\n").unwrap();
        let err = fx.store.rewind_plan("s", 1).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    });
}

#[test]
fn a_damaged_kept_content_is_not_restored() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        let (_ws, root) = workspace();
        let file = root.join("a.txt");
        fs::write(&file, "before").unwrap();
        store.backup_file("s", 1, &root, &file).unwrap();
        fs::write(&file, "after").unwrap();
        let plan = store.rewind_plan("s", 1).unwrap();
        let object = plan[0].object.as_deref().unwrap();
        assert_eq!(fx.storage.read_object("s", object).unwrap(), b"before");
        fx.storage.write_object("s", object, b"tampered").unwrap();
        let err = store.restore("s", &plan, &root).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "after");
    });
}

/// The attack on rewind: a session replaces a directory it wrote in with
/// a link to somewhere else (`~/.ssh`, here a directory outside the
/// workspace), then asks the user to rewind. Nothing outside is written
/// or removed; the file outside keeps its content.
#[test]
fn a_rewind_through_a_swapped_directory_is_refused() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        let (_ws, root) = workspace();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(root.join("keys")).unwrap();
        let planted = root.join("keys/authorized_keys");
        fs::write(&planted, "ssh-ed25519 ATTACKER").unwrap();
        store.backup_file("s", 1, &root, &planted).unwrap();
        let created = root.join("keys/new");
        store.backup_file("s", 1, &root, &created).unwrap();

        fs::remove_dir_all(root.join("keys")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("keys")).unwrap();
        fs::write(outside.path().join("authorized_keys"), "ssh-ed25519 USER").unwrap();
        fs::write(outside.path().join("new"), "the user's").unwrap();
        let plan = store.rewind_plan("s", 1).unwrap();
        assert!(store.restore("s", &plan, &root).is_err());
        assert_eq!(
            fs::read_to_string(outside.path().join("authorized_keys")).unwrap(),
            "ssh-ed25519 USER"
        );
        assert_eq!(
            fs::read_to_string(outside.path().join("new")).unwrap(),
            "the user's"
        );
        // Keeping a file through the link is refused too.
        assert!(
            store
                .backup_file("s", 2, &root, &root.join("keys/authorized_keys"))
                .is_err()
        );
    });
}

/// A plan is the caller's: one naming a kept content by a path that leads
/// elsewhere in the storage finds nothing to restore.
#[test]
fn a_plan_naming_content_outside_the_kept_ones_restores_nothing() {
    each_with_session("s", |fx| {
        let (_ws, root) = workspace();
        let file = root.join("a.txt");
        fs::write(&file, "mine").unwrap();
        let plan = [Restore {
            root: Some(root.clone()),
            path: file.clone(),
            step: 1,
            object: Some("../../meta.json".into()),
        }];
        assert!(fx.store.restore("s", &plan, &root).is_err());
        assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
    });
}
