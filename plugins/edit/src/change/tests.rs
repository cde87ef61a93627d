use super::*;
use kaizen_sdk::session::fingerprint;
use kaizen_sdk::{Content, ErrorKind};
use std::fs;

/// A directory to change files in; notes are kept the way the session
/// keeps them: the tools' results are recorded, reads are fingerprints.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Self(tempfile::tempdir().unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn put(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, bytes).unwrap();
        path
    }

    /// What Read notes.
    fn read_note(&self, path: &Path) -> Option<FileRecord> {
        Some(fingerprint(path).unwrap())
    }
}

fn op(old: &str, new: &str) -> EditOp {
    EditOp {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    }
}

fn text_of(output: &Output) -> &str {
    match &output.content[0] {
        Content::Text(text) => text,
        Content::Image { .. } => panic!("an image"),
    }
}

#[test]
fn write_creates_files_and_parent_directories_without_a_read() {
    let dir = Dir::new();
    let path = dir.path("new/sub/a.txt");
    let done = write(&path, "one\ntwo\n", None).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "one\ntwo\n");
    assert_eq!(
        text_of(&done.output),
        format!("Created {} (2 lines).", path.display())
    );
    assert_eq!(done.record, fingerprint(&path).unwrap());
}

#[test]
fn write_over_an_existing_file_needs_a_fresh_read() {
    let dir = Dir::new();
    let path = dir.put("a.txt", b"old\n");
    let err = write(&path, "new\n", None).err().unwrap();
    assert!(err.message().contains("has not been read"), "{err}");
    let note = dir.read_note(&path);
    fs::write(&path, "changed by someone\n").unwrap();
    let err = write(&path, "new\n", note.as_ref()).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert_eq!(fs::read_to_string(&path).unwrap(), "changed by someone\n");
    let note = dir.read_note(&path);
    let done = write(&path, "new\n", note.as_ref()).unwrap();
    assert!(
        text_of(&done.output).contains("overwritten"),
        "{}",
        text_of(&done.output)
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
}

#[test]
fn edit_replaces_and_shows_a_numbered_snippet() {
    let dir = Dir::new();
    let path = dir.put("a.rs", b"fn main() {\n    println!(\"helo\");\n}\n");
    let note = dir.read_note(&path);
    let done = edit(&path, &[op("helo", "hello")], note.as_ref(), "Edit").unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    let text = text_of(&done.output);
    assert!(text.starts_with(&format!("The file {} has been updated.", path.display())));
    assert!(text.contains("     2\t    println!(\"hello\");"), "{text}");
    // The result's fingerprint lets the next edit go ahead without a read.
    edit(&path, &[op("hello", "hi")], Some(&done.record), "Edit").unwrap();
}

#[test]
fn crlf_files_match_lf_strings_and_keep_their_endings() {
    let dir = Dir::new();
    let path = dir.put("win.txt", b"one\r\ntwo\r\nthree\r\n");
    let note = dir.read_note(&path);
    edit(&path, &[op("one\ntwo", "1\n2\n2.5")], note.as_ref(), "Edit").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"1\r\n2\r\n2.5\r\nthree\r\n");
}

#[test]
fn an_empty_old_string_creates_a_file_or_fills_an_empty_one_only() {
    let dir = Dir::new();
    let path = dir.path("fresh/new.txt");
    let done = edit(&path, &[op("", "hello\n")], None, "Edit").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "hello\n");
    assert!(text_of(&done.output).starts_with("Created"));
    let empty = dir.put("empty.txt", b"");
    let note = dir.read_note(&empty);
    edit(&empty, &[op("", "x\r\ny\r\n")], note.as_ref(), "Edit").unwrap();
    assert_eq!(fs::read(&empty).unwrap(), b"x\r\ny\r\n");
    let note = dir.read_note(&empty);
    let err = edit(&empty, &[op("", "more")], note.as_ref(), "Edit")
        .err()
        .unwrap();
    assert!(err.message().contains("already has content"), "{err}");
}

#[test]
fn each_edit_error_is_distinct() {
    let dir = Dir::new();
    let path = dir.put("a.txt", b"x\nx\n");
    let note = dir.read_note(&path);
    let msg = |ops: &[EditOp], note: Option<&FileRecord>| {
        edit(&path, ops, note, "Edit")
            .err()
            .unwrap()
            .message()
            .to_owned()
    };
    assert!(msg(&[op("x", "x")], note.as_ref()).contains("identical"));
    assert!(msg(&[op("y", "z")], note.as_ref()).contains("was not found"));
    assert!(msg(&[op("x", "z")], note.as_ref()).contains("occurs 2 times"));
    assert!(msg(&[op("x", "z")], None).contains("has not been read"));
    let missing = edit(&dir.path("A.txt"), &[op("x", "y")], None, "Edit");
    let missing = missing.err().unwrap();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert!(missing.message().contains("Did you mean"), "{missing}");
    assert!(missing.message().contains("empty old_string"), "{missing}");
    let notebook = dir.put("n.ipynb", b"{}");
    let err = edit(&notebook, &[op("a", "b")], None, "Edit")
        .err()
        .unwrap();
    assert!(err.message().contains("Use NotebookEdit"), "{err}");
    let binary = dir.put("b.bin", b"\x00\x01");
    let note = dir.read_note(&binary);
    let err = edit(&binary, &[op("a", "b")], note.as_ref(), "Edit")
        .err()
        .unwrap();
    assert!(err.message().contains("NUL byte"), "{err}");
}

#[test]
fn replace_all_changes_every_occurrence() {
    let dir = Dir::new();
    let path = dir.put("a.txt", b"x\nx\n");
    let note = dir.read_note(&path);
    let all = EditOp {
        replace_all: true,
        ..op("x", "y")
    };
    let done = edit(&path, &[all], note.as_ref(), "Edit").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "y\ny\n");
    assert!(text_of(&done.output).contains("All 2 occurrences"));
}

#[test]
fn multi_edit_applies_in_order_and_all_or_nothing() {
    let dir = Dir::new();
    let path = dir.put("a.txt", b"alpha beta\n");
    let note = dir.read_note(&path);
    // The second edit sees the first one's result.
    let ops = [op("alpha", "gamma"), op("gamma beta", "delta")];
    let done = edit(&path, &ops, note.as_ref(), "MultiEdit").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "delta\n");
    let text = text_of(&done.output);
    assert!(
        text.contains("with 2 edits:\n1. Replaced \"alpha\" with \"gamma\""),
        "{text}"
    );

    let ops = [op("delta", "epsilon"), op("missing", "x")];
    let err = edit(&path, &ops, Some(&done.record), "MultiEdit")
        .err()
        .unwrap();
    assert!(
        err.message()
            .starts_with("Edit 2 of 2 failed: old_string was not found"),
        "{err}"
    );
    assert!(err.message().contains("the file is unchanged"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "delta\n");
}

#[test]
fn multi_edit_can_create_a_file_with_its_first_edit() {
    let dir = Dir::new();
    let path = dir.path("new.txt");
    let ops = [op("", "a b c\n"), op("b", "B")];
    edit(&path, &ops, None, "MultiEdit").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "a B c\n");
    let again = [op("a", "z"), op("", "x")];
    let note = fingerprint(&path).ok();
    let err = edit(&path, &again, note.as_ref(), "MultiEdit")
        .err()
        .unwrap();
    assert!(
        err.message()
            .starts_with("Edit 2 of 2 failed: old_string is empty"),
        "{err}"
    );
}
