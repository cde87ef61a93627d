//! The built-in `Read` tool, embedded in the binary and called the way the
//! model would call it (through `kaizen tools call`).

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::workspace::Workspace;
use serde_json::{Value, json};
use std::process::Output;

/// The smallest valid PNG: one transparent pixel.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// `kaizen tools call Read` in a workspace.
trait ReadCalls {
    /// The output of `Read` for `input`.
    fn call(&self, input: Value, args: &[&str]) -> Output;

    /// The text `Read` printed for `input`, which must succeed (without
    /// the newline the CLI adds).
    fn text(&self, input: Value) -> String {
        let stdout = common::succeeded(&self.call(input, &[]));
        stdout.strip_suffix('\n').unwrap().to_owned()
    }

    /// The error message `Read` failed with for `input`.
    fn error(&self, input: Value) -> String {
        let stderr = common::failed(&self.call(input, &[]));
        assert!(stderr.contains("Read failed"), "{stderr}");
        stderr
    }

    /// The whole result (content parts and metadata) as JSON.
    fn json(&self, input: Value) -> Value {
        let stdout = common::succeeded(&self.call(input, &["--json"]));
        serde_json::from_str(&stdout).unwrap()
    }
}

impl ReadCalls for Workspace {
    fn call(&self, input: Value, args: &[&str]) -> Output {
        let input = input.to_string();
        let all: Vec<&str> = ["tools", "call", "Read", &input]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        self.kaizen(&all)
    }
}

fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
    lines.map(|n| format!("line {n}\n")).collect()
}

/// Standard base64, for comparing image data however it is encoded.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn lines_come_back_numbered_like_cat_n_with_metadata() {
    let ws = Workspace::new();
    let path = ws.write("src/lib.rs", "alpha\n\n\tgamma\n");
    assert_eq!(
        ws.text(json!({"file_path": path})),
        "     1\talpha\n     2\t\n     3\t\tgamma"
    );
    // A relative path resolves against the working directory.
    assert_eq!(
        ws.text(json!({"file_path": "src/lib.rs"})),
        "     1\talpha\n     2\t\n     3\t\tgamma"
    );
    let result = ws.json(json!({"file_path": path}));
    assert_eq!(
        result["metadata"],
        json!({"path": path, "type": "text", "total_lines": 3, "start_line": 1,
               "lines_shown": 3, "truncated": false})
    );
}

#[test]
fn offset_and_limit_choose_a_window_and_a_note_says_how_to_go_on() {
    let ws = Workspace::new();
    let path = ws.write("log.txt", numbered(1..=2500));

    let first = ws.text(json!({"file_path": path}));
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 2002);
    assert_eq!(lines[0], "     1\tline 1");
    assert_eq!(lines[1999], "  2000\tline 2000");
    assert_eq!(
        lines[2001],
        "(Showing lines 1-2000 of 2500. To read on, call Read again with offset=2001; use \
         offset and limit to read any other part.)"
    );

    let rest = ws.text(json!({"file_path": path, "offset": 2001}));
    assert_eq!(rest.lines().count(), 500, "no note at the end of the file");
    assert!(rest.ends_with("  2500\tline 2500"), "{rest}");

    let window = ws.text(json!({"file_path": path, "offset": 10, "limit": 3}));
    assert_eq!(
        window,
        "    10\tline 10\n    11\tline 11\n    12\tline 12\n\n(Showing lines 10-12 of 2500. To \
         read on, call Read again with offset=13; use offset and limit to read any other part.)"
    );
    let meta = &ws.json(json!({"file_path": path, "offset": 10, "limit": 3}))["metadata"];
    assert_eq!(
        *meta,
        json!({"path": path, "type": "text", "total_lines": 2500, "start_line": 10,
               "lines_shown": 3, "truncated": true})
    );
}

#[test]
fn long_lines_are_cut_and_crlf_is_hidden() {
    let ws = Workspace::new();
    let long = format!("short\n{}\nafter\n", "é".repeat(2600));
    let path = ws.write("wide.txt", long);
    let text = ws.text(json!({"file_path": path}));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[1],
        format!(
            "     2\t{}… [line cut: 2600 characters, the first 2000 shown]",
            "é".repeat(2000)
        )
    );
    assert_eq!(lines[2], "     3\tafter");

    let path = ws.write("windows.txt", "one\r\ntwo\r\n");
    assert_eq!(
        ws.text(json!({"file_path": path})),
        "     1\tone\n     2\ttwo"
    );
}

#[test]
fn a_file_over_256_kb_must_be_paged() {
    let ws = Workspace::new();
    let path = ws.write("big.log", format!("{}\n", "x".repeat(99)).repeat(3000));
    let err = ws.error(json!({"file_path": path}));
    assert!(err.contains("too large to read at once"), "{err}");
    assert!(err.contains("293.0 KB, 3000 lines"), "{err}");
    assert!(err.contains("offset=1 with limit=2000"), "{err}");

    // Each page stops short of Read's 100 KB bound and says where to go on,
    // until the file is read whole.
    let mut offset = 1;
    let mut pages = 0;
    while offset <= 3000 {
        let page = ws.text(json!({"file_path": path, "offset": offset, "limit": 2000}));
        assert!(page.len() <= 100 * 1024, "{}", page.len());
        let shown = page.lines().filter(|l| l.contains('\t')).count();
        assert!(shown > 0);
        offset += shown;
        pages += 1;
        if offset <= 3000 {
            assert!(
                page.ends_with(&format!(
                    "larger than 100 KB). To read on, call Read again with offset={offset}; \
                     use offset and limit to read any other part.)"
                )),
                "{}",
                &page[page.len() - 200..]
            );
        }
    }
    assert_eq!((offset, pages), (3001, 4));
}

#[test]
fn empty_files_and_offsets_past_the_end_say_so() {
    let ws = Workspace::new();
    let empty = ws.write("empty.txt", "");
    assert_eq!(
        ws.text(json!({"file_path": empty})),
        format!("(The file {empty} exists but is empty: it has no lines.)")
    );
    let short = ws.write("short.txt", "a\nb\n");
    assert_eq!(
        ws.text(json!({"file_path": short, "offset": 50})),
        format!(
            "(The file {short} has only 2 lines, so offset 50 is past its end. Read it with an \
             offset from 1 to 2.)"
        )
    );
}

#[test]
fn directories_missing_files_and_binaries_are_refused_with_advice() {
    let ws = Workspace::new();
    ws.write("src/Main.rs", "fn main() {}\n");
    ws.write("src/main.py", "print()\n");

    let dir = ws.path("src").display().to_string();
    let err = ws.error(json!({"file_path": dir}));
    assert!(err.contains("is a directory"), "{err}");
    assert!(
        err.contains("use Glob") || err.contains("Use Glob"),
        "{err}"
    );

    let missing = ws.path("src/main.rs").display().to_string();
    let err = ws.error(json!({"file_path": missing}));
    assert!(err.contains("File does not exist"), "{err}");
    let main_rs = ws.path("src/Main.rs").display().to_string();
    let main_py = ws.path("src/main.py").display().to_string();
    assert!(
        err.contains(&format!("Did you mean {main_rs}, or {main_py}?")),
        "{err}"
    );

    let bin = ws.write("tool.bin", b"\x7fELF\x02\x01\x01\0\0\0\0\0");
    let err = ws.error(json!({"file_path": bin}));
    assert!(err.contains("is a binary file"), "{err}");
    assert!(err.contains("NUL byte"), "{err}");
}

#[test]
fn files_outside_the_granted_directories_cannot_be_read() {
    let ws = Workspace::new();
    // Refused, not read: the error says why.
    let err = ws.error(json!({"file_path": "/etc/passwd"}));
    assert!(
        err.contains("outside the directories Kaizen can read"),
        "{err}"
    );
    // `..` cannot climb out of the workspace either.
    ws.error(json!({"file_path": "../../../../../../etc/passwd"}));
}

#[test]
fn a_png_comes_back_as_an_image_part() {
    let ws = Workspace::new();
    let path = ws.write("images/pixel.png", PNG);
    let result = ws.json(json!({"file_path": path}));
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{result}");
    assert_eq!(content[0]["type"], "text");
    let line = content[0]["text"].as_str().unwrap();
    assert!(line.contains(&path), "{line}");
    assert!(line.contains(&format!("{} bytes", PNG.len())), "{line}");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["media_type"], "image/png");
    let data = &content[1]["data"];
    let matches = match data {
        Value::Array(bytes) => bytes
            .iter()
            .map(|b| b.as_u64().unwrap() as u8)
            .eq(PNG.iter().copied()),
        Value::String(encoded) => *encoded == base64(PNG),
        other => panic!("image data as {other}"),
    };
    assert!(matches, "image data differs: {data}");
    assert_eq!(
        result["metadata"],
        json!({"path": path, "type": "image", "media_type": "image/png",
               "size_bytes": PNG.len()})
    );
}

/// A PDF of `pages`, each page's text drawn in Helvetica, written out as
/// the format lays it out: numbered objects, then the cross-reference
/// table of their offsets.
fn pdf(pages: &[&str]) -> Vec<u8> {
    let count = pages.len();
    let kids: Vec<String> = (0..count).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {count} >>",
            kids.join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    for (i, text) in pages.iter().enumerate() {
        let content = format!("BT /F1 12 Tf 72 700 Td ({text}) Tj ET");
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 \
             R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{body}\nendobj\n", i + 1).bytes());
    }
    let xref = out.len();
    let size = objects.len() + 1;
    out.extend(format!("xref\n0 {size}\n0000000000 65535 f \n").bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").bytes());
    }
    out.extend(
        format!("trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").bytes(),
    );
    out
}

#[test]
fn a_pdf_comes_back_as_the_text_of_the_pages_asked_for() {
    let ws = Workspace::new();
    let path = ws.write(
        "docs/report.pdf",
        pdf(&["Alpha page", "Beta page", "Gamma page"]),
    );
    let result = ws.json(json!({"file_path": path, "pages": "2-3"}));
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text, "--- Page 2 ---\nBeta page\n\n--- Page 3 ---\nGamma page",
        "{result}"
    );
    assert_eq!(
        result["metadata"],
        json!({"path": path, "type": "pdf", "pages": 3, "first_page": 2, "last_page": 3})
    );
    let whole = ws.text(json!({"file_path": path}));
    assert!(whole.starts_with("--- Page 1 ---\nAlpha page"), "{whole}");
    let err = ws.error(json!({"file_path": path, "pages": "1-30"}));
    assert!(err.contains("at most 20 pages"), "{err}");
    let err = ws.error(json!({"file_path": path, "offset": 2}));
    assert!(err.contains("A PDF is read by pages"), "{err}");
    let notes = ws.write("notes.txt", "hello\n");
    let err = ws.error(json!({"file_path": notes, "pages": "1"}));
    assert!(err.contains("`pages` is for PDFs"), "{err}");
}

#[test]
fn a_notebook_shows_its_cells_and_outputs() {
    let ws = Workspace::new();
    let notebook = json!({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [
            {"id": "title", "cell_type": "markdown", "metadata": {}, "source": ["# Sales\n", "By month."]},
            {"id": "sum", "cell_type": "code", "metadata": {}, "execution_count": 2,
             "source": ["total = 40 + 2\n", "print(total)\n", "total"],
             "outputs": [
                {"output_type": "stream", "name": "stdout", "text": ["42\n"]},
                {"output_type": "execute_result", "execution_count": 2, "metadata": {},
                 "data": {"text/plain": ["42"]}},
                {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo="}}
             ]}
        ]
    });
    let path = ws.write("sales.ipynb", notebook.to_string());
    let result = ws.json(json!({"file_path": path}));
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{result}");
    assert_eq!(
        content[0]["text"],
        "<cell id=\"title\" type=\"markdown\">\n# Sales\nBy month.\n</cell>\n\
         <cell id=\"sum\" type=\"code\">\ntotal = 40 + 2\nprint(total)\ntotal\n\
         <output type=\"stream\" name=\"stdout\">\n42\n</output>\n\
         <output type=\"execute_result\">\n42\n</output>\n\
         <output type=\"display_data\">\n[image/png output: image 1 after the text]\n</output>\n</cell>"
    );
    // The figure, as the image it is.
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["media_type"], "image/png");
    let meta = &result["metadata"];
    assert_eq!(meta["cells"], 2);
    assert_eq!(meta["images"], 1);
    assert_eq!(meta["truncated"], false);
}

#[test]
fn read_is_listed_as_a_read_only_builtin() {
    let ws = Workspace::new();
    let out = ws.kaizen(&["plugins", "list", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "read")
        .expect("read is built in");
    assert_eq!(read["origin"], "builtin");
    assert_eq!(read["tools"], json!(["Read"]));
    let root = ws.root();
    assert_eq!(
        read["granted"]["filesystem"][0]["path"],
        root.to_str().unwrap()
    );
    assert_eq!(read["granted"]["filesystem"][0]["access"], "read-only");
}

/// Through the loop, as the model sees it: the default window of a
/// 3,000-line file is lines 1-2000 and the note saying where to go on,
/// whole (the loop's own cut lies above Read's bound).
#[tokio::test]
async fn the_model_sees_the_whole_default_window_and_its_note() {
    let ws = Workspace::new();
    let lines: String = (1..=3000)
        .map(|n| format!("fn line_{n:04}() {{ /* some code */ }}\n"))
        .collect();
    let path = ws.write("big.rs", &lines);
    let calls = ws
        .session(&[("Read", json!({ "file_path": path }))], &[])
        .await;
    let text = calls.ok(0);
    assert!(text.len() > 30_000, "more than Bash's cut: {}", text.len());
    assert!(
        text.starts_with("     1\tfn line_0001()"),
        "{}",
        &text[..80]
    );
    assert!(
        text.contains("  2000\tfn line_2000()"),
        "line 2000 is shown"
    );
    assert!(!text.contains("line_2001"), "line 2001 is not");
    assert!(!text.contains("Output cut"), "the loop did not cut it");
    assert!(
        text.ends_with(
            "(Showing lines 1-2000 of 3000. To read on, call Read again with offset=2001; \
             use offset and limit to read any other part.)"
        ),
        "{}",
        &text[text.len() - 300..]
    );
}
