//! PDFs made with lopdf's own writer (compressed, encrypted, without text),
//! read back through the tool.

use super::*;
use lopdf::{Object, Stream, dictionary};

/// A document with one page per entry of `pages`: a page's text is drawn
/// with Helvetica, an empty entry draws only a filled box (as a scanned
/// page holds a picture, not text).
fn document(pages: &[&str]) -> Document {
    let mut doc = Document::with_version("1.5");
    doc.trailer.set(
        "ID",
        Object::Array(vec![
            Object::string_literal(b"0123456789abcdef"),
            Object::string_literal(b"fedcba9876543210"),
        ]),
    );
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
    });
    let kids: Vec<Object> = pages
        .iter()
        .map(|text| {
            let content = if text.is_empty() {
                "0 0 612 792 re f\n".to_string()
            } else {
                format!("BT\n/F1 12 Tf\n72 700 Td\n({text}) Tj\nET\n")
            };
            let contents = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
            Object::Reference(doc.add_object(dictionary! {
                "Type" => "Page",
                "Parent" => pages_id,
                "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
                "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
                "Contents" => contents,
            }))
        })
        .collect();
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => pages.len() as i64,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    doc.compress();
    doc
}

/// `doc` encrypted (RC4, 128 bits) with an owner password and
/// `user_password`, which opening it takes.
fn encrypted(mut doc: Document, user_password: &str) -> Document {
    let state = lopdf::EncryptionState::try_from(lopdf::EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password,
        key_length: 128,
        permissions: lopdf::Permissions::all(),
    })
    .unwrap();
    doc.encrypt(&state).unwrap();
    doc
}

fn saved(mut doc: Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

/// Writes `bytes` as `name` in a new directory and reads it with `pages`.
fn read_pdf(bytes: &[u8], pages: Option<&str>) -> Result<Output, ToolError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.pdf");
    std::fs::write(&path, bytes).unwrap();
    read(&path, bytes.len() as u64, pages)
}

fn text(output: &Output) -> &str {
    match output.content.as_slice() {
        [kaizen_sdk::Content::Text(text)] => text,
        other => panic!("expected one text part, got {other:?}"),
    }
}

#[test]
fn a_range_of_pages_comes_back_as_their_text_with_the_page_count() {
    let texts: Vec<String> = (1..=12)
        .map(|n| format!("Chapter {n} begins here"))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let bytes = saved(document(&texts));
    let output = read_pdf(&bytes, Some("3-4")).unwrap();
    let shown = text(&output);
    assert!(
        shown.starts_with("--- Page 3 ---\nChapter 3 begins here\n\n--- Page 4 ---\nChapter 4"),
        "{shown}"
    );
    assert!(!shown.contains("Chapter 5"), "{shown}");
    assert!(
        shown.ends_with("Read more with pages=\"5-12\".)"),
        "{shown}"
    );
    let meta = output.metadata.unwrap();
    assert_eq!(
        (meta["pages"].as_u64(), meta["type"].as_str()),
        (Some(12), Some("pdf"))
    );
    assert_eq!(
        (meta["first_page"].as_u64(), meta["last_page"].as_u64()),
        (Some(3), Some(4))
    );

    // Twelve pages are too many to read unasked; a short PDF is read whole.
    let err = read_pdf(&bytes, None).unwrap_err();
    assert!(
        err.message().contains("12 pages") && err.message().contains("pages=\"1-12\""),
        "{err}"
    );
    let short = read_pdf(&saved(document(&["One", "Two"])), None).unwrap();
    assert_eq!(text(&short), "--- Page 1 ---\nOne\n\n--- Page 2 ---\nTwo");
    let err = read_pdf(&bytes, Some("13-14")).unwrap_err();
    assert!(
        err.message()
            .contains("has 12 pages; pages 13-14 are past its end"),
        "{err}"
    );
}

#[test]
fn page_ranges_are_checked() {
    assert_eq!(parse_pages("3").unwrap(), 3..=3);
    assert_eq!(parse_pages(" 2 - 21 ").unwrap(), 2..=21);
    for bad in ["0", "5-3", "1-21", "x", "1-", "-2", ""] {
        let err = parse_pages(bad).unwrap_err();
        assert!(err.message().contains("at most 20 pages"), "{bad}: {err}");
    }
}

#[test]
fn encrypted_scanned_and_broken_pdfs_say_why() {
    // Encrypted with a user password: not opened.
    let locked = encrypted(document(&["Secret plans"]), "user");
    let err = read_pdf(&saved(locked), None).unwrap_err();
    assert!(
        err.message()
            .contains("encrypted PDF that needs a password"),
        "{err}"
    );

    // Encrypted with an empty user password (as PDFs that only restrict
    // printing or copying are): read.
    let open = encrypted(document(&["Open plans"]), "");
    assert!(text(&read_pdf(&saved(open), None).unwrap()).contains("Open plans"));

    let err = read_pdf(&saved(document(&["", ""])), None).unwrap_err();
    assert!(
        err.message().contains("Pages 1-2 of") && err.message().contains("scanned"),
        "{err}"
    );

    let err = read_pdf(b"%PDF-1.5\nnot really", None).unwrap_err();
    assert!(err.message().contains("cannot be read as a PDF"), "{err}");
}
