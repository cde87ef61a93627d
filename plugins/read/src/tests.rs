//! Native tests of the whole tool: real files in a temporary directory.

use super::*;
use kaizen_sdk::serde_json::Value;
use kaizen_sdk::{Content, ErrorKind};
use std::fs;
use std::path::PathBuf;

/// The smallest valid PNG: one transparent pixel.
pub(crate) const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Self(tempfile::tempdir().unwrap())
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.0.path().join(relative)
    }

    fn write(&self, relative: &str, bytes: impl AsRef<[u8]>) -> String {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }

    fn call(&self, file_path: &str, offset: Option<usize>, limit: Option<usize>) -> Output {
        self.result(file_path, offset, limit).unwrap()
    }

    fn result(
        &self,
        file_path: &str,
        offset: Option<usize>,
        limit: Option<usize>,
    ) -> Result<Output, ToolError> {
        let input = ReadInput {
            file_path: file_path.to_owned(),
            offset,
            limit,
            pages: None,
        };
        read(self.0.path(), &input)
    }

    fn error(&self, file_path: &str) -> ToolError {
        self.result(file_path, None, None).unwrap_err()
    }
}

fn shown(output: &Output) -> &str {
    match output.content.as_slice() {
        [Content::Text(text)] => text,
        other => panic!("expected one text part, got {other:?}"),
    }
}

fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
    lines.map(|n| format!("line {n}\n")).collect()
}

#[test]
fn a_small_file_comes_back_whole_with_line_numbers_and_metadata() {
    let dir = Dir::new();
    let path = dir.write("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let out = dir.call(&path, None, None);
    assert_eq!(
        shown(&out),
        "     1\tfn main() {\n     2\t    println!(\"hi\");\n     3\t}"
    );
    assert_eq!(
        out.metadata,
        Some(
            json!({"path": path, "type": "text", "total_lines": 3, "start_line": 1,
                    "lines_shown": 3, "truncated": false})
        )
    );
    // Relative paths resolve against the current directory.
    assert_eq!(shown(&dir.call("src/./main.rs", None, None)), shown(&out));
}

#[test]
fn windows_of_offset_and_limit_end_with_a_note_when_the_file_goes_on() {
    let dir = Dir::new();
    let path = dir.write("log.txt", numbered(1..=3000));
    let first = dir.call(&path, None, None);
    let lines: Vec<&str> = shown(&first).lines().collect();
    assert_eq!(lines.len(), 2002);
    assert_eq!(lines[1999], "  2000\tline 2000");
    assert_eq!(lines[2000], "");
    assert!(
        lines[2001].starts_with(
            "(Showing lines 1-2000 of 3000. To read on, call Read again with offset=2001"
        ),
        "{}",
        lines[2001]
    );
    assert_eq!(first.metadata.as_ref().unwrap()["truncated"], true);

    let middle = dir.call(&path, Some(10), Some(3));
    assert!(shown(&middle).starts_with("    10\tline 10\n    11\tline 11\n    12\tline 12\n\n"));
    assert!(shown(&middle).contains("offset=13"));

    let last = dir.call(&path, Some(2999), None);
    assert_eq!(shown(&last), "  2999\tline 2999\n  3000\tline 3000");
    let meta = last.metadata.unwrap();
    assert_eq!(meta["start_line"], 2999);
    assert_eq!(meta["lines_shown"], 2);
    assert_eq!(meta["truncated"], false);
}

#[test]
fn empty_files_and_offsets_past_the_end_get_notes() {
    let dir = Dir::new();
    let empty = dir.write("empty.txt", "");
    let out = dir.call(&empty, None, None);
    assert!(
        shown(&out).contains("exists but is empty"),
        "{}",
        shown(&out)
    );

    let three = dir.write("three.txt", "a\nb\nc\n");
    let out = dir.call(&three, Some(10), None);
    assert_eq!(
        shown(&out),
        format!(
            "(The file {three} has only 3 lines, so offset 10 is past its end. Read it with an \
             offset from 1 to 3.)"
        )
    );
    assert_eq!(out.metadata.unwrap()["lines_shown"], 0);
}

#[test]
fn large_files_must_be_paged() {
    let dir = Dir::new();
    let big = dir.write("big.txt", format!("{}\n", "y".repeat(99)).repeat(3000));
    let err = dir.error(&big);
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("293.0 KB, 3000 lines"), "{err}");
    assert!(err.message().contains("offset=1 with limit=2000"), "{err}");
    // With offset or limit it reads.
    let out = dir.call(&big, Some(2990), None);
    assert_eq!(shown(&out).lines().count(), 11);
    let out = dir.call(&big, None, Some(5));
    assert_eq!(out.metadata.unwrap()["total_lines"], 3000);
}

#[test]
fn crlf_lines_show_without_carriage_returns() {
    let dir = Dir::new();
    let path = dir.write("win.txt", "one\r\ntwo\r\n");
    assert_eq!(
        shown(&dir.call(&path, None, None)),
        "     1\tone\n     2\ttwo"
    );
}

#[test]
fn directories_and_bad_limits_are_refused_with_advice() {
    let dir = Dir::new();
    dir.write("sub/a.txt", "a");
    let err = dir.error(&dir.path("sub").display().to_string());
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("is a directory"), "{err}");
    assert!(err.message().contains("Glob"), "{err}");

    let err = dir.result("sub/a.txt", None, Some(0)).unwrap_err();
    assert!(
        err.message().contains("`limit` must be at least 1"),
        "{err}"
    );
    let err = dir.error("  ");
    assert!(err.message().contains("`file_path` is empty"), "{err}");
}

#[test]
fn missing_files_suggest_close_names() {
    let dir = Dir::new();
    dir.write("Config.yaml", "a: 1");
    dir.write("config.json", "{}");
    dir.write("other.txt", "");
    let err = dir.error(&dir.path("config.yaml").display().to_string());
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let msg = err.message();
    let case = msg.find("Config.yaml").expect(msg);
    let stem = msg.find("config.json").expect(msg);
    assert!(case < stem, "same name in another case first: {msg}");
    assert!(!msg.contains("other.txt"), "{msg}");

    let err = dir.error("nothing-like-it.md");
    assert!(err.message().contains("was resolved against"), "{err}");
    assert!(err.message().contains("Glob"), "{err}");

    // A directory that does not exist (as everything outside the grant
    // looks from inside the sandbox).
    let err = dir.error("/no/such/dir/file.txt");
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.message()
            .contains("outside the directories Kaizen can read"),
        "{err}"
    );
}

#[test]
fn binary_files_are_refused_but_a_stray_byte_is_not() {
    let dir = Dir::new();
    let bin = dir.write("a.out", b"\x7fELF\x02\x01\x01\0\0\0");
    let err = dir.error(&bin);
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("is a binary file"), "{err}");
    assert!(err.message().contains("NUL byte at offset 7"), "{err}");

    let latin = dir.write("latin1.txt", b"caf\xe9\n");
    assert_eq!(shown(&dir.call(&latin, None, None)), "     1\tcaf\u{fffd}");
}

#[test]
fn images_come_back_as_image_content() {
    let dir = Dir::new();
    let png = dir.write("pixel.PNG", PNG);
    let out = dir.call(&png, None, None);
    assert_eq!(out.content.len(), 2);
    let Content::Text(line) = &out.content[0] else {
        panic!("{out:?}")
    };
    assert!(
        line.contains(&format!("image/png, {} bytes", PNG.len())),
        "{line}"
    );
    assert_eq!(
        out.content[1],
        Content::Image {
            media_type: "image/png".into(),
            data: PNG.to_vec()
        }
    );
    let meta: &Value = out.metadata.as_ref().unwrap();
    assert_eq!(meta["type"], "image");

    // The bytes decide the media type; no image at all is refused.
    let mislabeled = dir.write("photo.jpg", PNG);
    let out = dir.call(&mislabeled, None, None);
    assert!(
        matches!(&out.content[1], Content::Image { media_type, .. } if media_type == "image/png")
    );
    let fake = dir.write("fake.gif", "not an image");
    assert!(
        dir.error(&fake)
            .message()
            .contains("not a PNG, JPEG, GIF or WebP")
    );
    let huge = dir.write("huge.webp", vec![0u8; image::MAX_IMAGE_BYTES as usize + 1]);
    assert!(dir.error(&huge).message().contains("Make a smaller copy"));
}

#[test]
fn notebooks_show_cells_and_outputs() {
    let dir = Dir::new();
    let notebook = json!({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [
            {"id": "intro", "cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "Some text"]},
            {"id": "calc", "cell_type": "code", "metadata": {}, "execution_count": 1,
             "source": "print('hi')\n1 + 1",
             "outputs": [
                {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
                {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                 "data": {"text/plain": ["2"]}},
                {"output_type": "display_data", "metadata": {},
                 "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}},
                {"output_type": "display_data", "metadata": {},
                 "data": {"image/jpeg": ["/9j/", "4A=="], "image/svg+xml": "<svg/>"}},
                {"output_type": "display_data", "metadata": {},
                 "data": {"image/png": "bm90IGEgcG5n"}},
                {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}
             ]},
            {"cell_type": "code", "source": "x = 'y' * 10000", "outputs": [
                {"output_type": "stream", "name": "stdout", "text": "y".repeat(5000)}
            ]}
        ]
    });
    let path = dir.write("analysis.ipynb", notebook.to_string());
    let out = dir.call(&path, None, None);
    // The text, then the image outputs, as images, in the text's order.
    let (text, images) = match out.content.as_slice() {
        [Content::Text(text), images @ ..] => (text, images),
        other => panic!("expected text then images, got {other:?}"),
    };
    let media: Vec<&str> = images
        .iter()
        .map(|image| match image {
            Content::Image { media_type, .. } => media_type.as_str(),
            other => panic!("not an image: {other:?}"),
        })
        .collect();
    assert_eq!(media, ["image/png", "image/jpeg"]);
    let expected_start = "\
<cell id=\"intro\" type=\"markdown\">
# Title
Some text
</cell>
<cell id=\"calc\" type=\"code\">
print('hi')
1 + 1
<output type=\"stream\" name=\"stdout\">
hi
</output>
<output type=\"execute_result\">
2
</output>
<output type=\"display_data\">
<Figure>
[image/png output: image 1 after the text]
</output>
<output type=\"display_data\">
[image/jpeg output: image 2 after the text]
[image/svg+xml output]
</output>
<output type=\"display_data\">
[image/png output that is not a PNG, JPEG, GIF or WebP image]
</output>
<output type=\"error\">
ValueError: bad
</output>
</cell>
<cell id=\"cell-2\" type=\"code\">
";
    assert!(text.starts_with(expected_start), "{text}");
    assert!(
        text.contains("… [output cut: 5000 characters, the first 4000 shown]"),
        "{text}"
    );
    assert_eq!(
        out.metadata,
        Some(
            json!({"path": path, "type": "notebook", "cells": 3, "cells_shown": 3, "truncated": false, "images": 2})
        )
    );

    // With offset or limit, the raw JSON lines.
    let raw = dir.call(&path, Some(1), Some(1));
    assert!(shown(&raw).starts_with("     1\t{"));

    // Not a notebook: shown as text after a note.
    let broken = dir.write("broken.ipynb", "{\"cells\": [\n");
    let out = dir.call(&broken, None, None);
    assert!(shown(&out).starts_with("(This .ipynb file is not a valid notebook ("));
    assert!(shown(&out).contains("     1\t{\"cells\": ["));
}

#[test]
fn notebooks_too_large_to_show_are_cut_at_a_cell() {
    let cells: Vec<Value> = (0..10)
        .map(|i| json!({"cell_type": "code", "source": format!("# {i}\n{}", "z".repeat(1000)), "outputs": []}))
        .collect();
    let json = json!({"cells": cells}).to_string();
    let rendered = notebook::render(json.as_bytes(), 3500).unwrap();
    assert_eq!((rendered.cells, rendered.shown), (10, 3));
    let one = notebook::render(json.as_bytes(), 100).unwrap();
    assert_eq!(one.shown, 1);
    assert!(one.text.ends_with("… [cell cut]\n"));
}

#[test]
fn sizes_read_like_people_write_them() {
    assert_eq!(human_size(12), "12 bytes");
    assert_eq!(human_size(300 * 1024), "300.0 KB");
    assert_eq!(human_size(5 * 1024 * 1024 + 512 * 1024), "5.5 MB");
}
