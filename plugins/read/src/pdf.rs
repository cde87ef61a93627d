//! PDFs: the text of their pages, a range at a time, as Claude Code's Read
//! gives them (`pages: "1-5"`; at most [`MAX_PAGES_PER_READ`] pages a call,
//! and a range required past [`MAX_PAGES_UNASKED`] pages).
//!
//! The text comes from the pages' content streams (lopdf, pure Rust): what
//! a PDF draws as text, in drawing order, decoded through its fonts'
//! encodings. A PDF that needs a password, and pages that hold only
//! pictures of text (a scan), are refused with errors that say so, since
//! Read has no OCR.

use std::fmt::Write as _;
use std::ops::RangeInclusive;
use std::path::Path;

use kaizen_sdk::prelude::*;
use lopdf::Document;

use crate::{MAX_OUTPUT_BYTES, human_size, plural, read_error};

/// PDFs larger than this are not parsed (the whole file is held while its
/// pages are read).
const MAX_PDF_BYTES: u64 = 32 * 1024 * 1024;

/// The most pages one call reads.
pub(crate) const MAX_PAGES_PER_READ: u32 = 20;

/// A PDF with more pages than this must be read with `pages`.
pub(crate) const MAX_PAGES_UNASKED: u32 = 10;

/// Whether `path` names a PDF (`.pdf`, any case).
pub(crate) fn is_pdf(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("pdf"))
}

/// Reads the pages `pages` (`"3"`, `"1-5"`; `None`: all, when there are
/// few) of the PDF at `path`, `size` bytes long.
pub(crate) fn read(path: &Path, size: u64, pages: Option<&str>) -> Result<Output, ToolError> {
    if size > MAX_PDF_BYTES {
        return Err(ToolError::invalid_input(format!(
            "The PDF {} is {}, larger than the {} Read parses. Ask the user for a smaller \
             extract of it.",
            path.display(),
            human_size(size),
            human_size(MAX_PDF_BYTES)
        )));
    }
    let asked = pages.map(parse_pages).transpose()?;
    let bytes = std::fs::read(path).map_err(|err| read_error(path, err))?;
    let document = open(path, &bytes)?;
    let numbers: Vec<u32> = document.get_pages().keys().copied().collect();
    let count = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
    if count == 0 {
        return Err(ToolError::invalid_input(format!(
            "{} is a PDF with no pages.",
            path.display()
        )));
    }
    let range = match asked {
        Some(range) => range,
        None if count > MAX_PAGES_UNASKED => {
            return Err(ToolError::invalid_input(format!(
                "{} is a PDF of {count} pages, more than Read shows at once; give `pages` to read \
                 a range of at most {MAX_PAGES_PER_READ} pages (e.g. pages=\"1-{}\").",
                path.display(),
                MAX_PAGES_PER_READ.min(count)
            )));
        }
        None => 1..=count,
    };
    if *range.start() > count {
        return Err(ToolError::invalid_input(format!(
            "{} has {}; pages {} are past its end. Give a range within 1-{count}.",
            path.display(),
            plural(count as usize, "page", "pages"),
            show(&range)
        )));
    }
    let last = (*range.end()).min(count);
    let Rendered {
        mut text,
        shown,
        undecoded,
    } = render(&document, *range.start()..=last);
    if text.is_empty() {
        let why = match undecoded {
            Some(err) => format!(
                "their text could not be decoded ({err}). Ask the user for a text version, or \
                 read other pages."
            ),
            None => "they are most likely scanned images of text (Read has no OCR). Ask the \
                     user for a text version, or read other pages."
                .to_string(),
        };
        return Err(ToolError::invalid_input(format!(
            "Pages {} of {} hold no text that can be extracted: {why}",
            show(&(*range.start()..=last)),
            path.display()
        )));
    }
    let shown_last = range.start() + shown.saturating_sub(1);
    if shown_last < count {
        let _ = write!(
            text,
            "\n(Pages {}-{shown_last} of {count} shown{}. Read more with pages=\"{}-{}\".)",
            range.start(),
            if shown_last < last {
                format!(
                    "; more would make the result larger than {} KB",
                    MAX_OUTPUT_BYTES / 1024
                )
            } else {
                String::new()
            },
            shown_last + 1,
            (shown_last + MAX_PAGES_PER_READ).min(count)
        );
    }
    Ok(
        Output::text(text.trim_end().to_owned()).with_metadata(json!({
            "path": path.display().to_string(),
            "type": "pdf",
            "pages": count,
            "first_page": range.start(),
            "last_page": shown_last,
        })),
    )
}

/// The document in `bytes`, or why it cannot be read: a password it
/// cannot open with none, or bytes that are not a PDF.
fn open(path: &Path, bytes: &[u8]) -> Result<Document, ToolError> {
    let document = Document::load_mem(bytes).map_err(|err| {
        if matches!(
            err,
            lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword
        ) {
            return encrypted(path);
        }
        ToolError::invalid_input(format!(
            "{} cannot be read as a PDF ({err}). It may be damaged; ask the user for another \
             copy.",
            path.display()
        ))
    })?;
    // lopdf opens a file encrypted with an empty user password (only
    // printing or copying restricted) by itself; one that needs a
    // password stays encrypted.
    if document.is_encrypted() {
        return Err(encrypted(path));
    }
    Ok(document)
}

fn encrypted(path: &Path) -> ToolError {
    ToolError::permission_denied(format!(
        "{} is an encrypted PDF that needs a password to open; Read cannot read it. Ask the user \
         for an unencrypted copy.",
        path.display()
    ))
}

/// The pages of a range as text.
struct Rendered {
    /// Each page under a `--- Page N ---` line; empty when no page of the
    /// range has any text.
    text: String,
    /// How many pages `text` shows.
    shown: u32,
    /// Why the first page that could not be decoded could not.
    undecoded: Option<String>,
}

/// The text of pages `range`, stopping before the text would pass
/// [`MAX_OUTPUT_BYTES`] (the first page is always shown, cut if need be).
fn render(document: &Document, range: RangeInclusive<u32>) -> Rendered {
    let mut text = String::new();
    let mut shown = 0;
    let mut any_text = false;
    let mut undecoded = None;
    for number in range {
        // A page whose text cannot be decoded reads as empty, like one
        // with no text: the others still come, and if none has text the
        // error says why.
        let page = document.extract_text(&[number]).unwrap_or_else(|err| {
            undecoded.get_or_insert_with(|| err.to_string());
            String::new()
        });
        let has_text = !page.trim().is_empty();
        let block = format!("--- Page {number} ---\n{}\n\n", page.trim_end());
        if text.len() + block.len() > MAX_OUTPUT_BYTES {
            if shown == 0 {
                text.push_str(&block[..block.floor_char_boundary(MAX_OUTPUT_BYTES)]);
                text.push_str("\n… [page cut]\n");
                shown = 1;
                any_text = has_text;
            }
            break;
        }
        // Pages with no text still count, so the numbering stays true.
        text.push_str(&block);
        shown += 1;
        any_text |= has_text;
    }
    if !any_text {
        text.clear();
    }
    Rendered {
        text,
        shown,
        undecoded,
    }
}

/// Reads `pages`: `"3"`, `"1-5"` (1-based, inclusive), at most
/// [`MAX_PAGES_PER_READ`] pages.
pub(crate) fn parse_pages(pages: &str) -> Result<RangeInclusive<u32>, ToolError> {
    let usage = || {
        ToolError::invalid_input(format!(
            "`pages` must be a page number or a range of them, 1-based, such as \"3\" or \"1-5\" \
             (at most {MAX_PAGES_PER_READ} pages); got {pages:?}."
        ))
    };
    let number = |text: &str| text.trim().parse::<u32>().ok().filter(|&n| n >= 1);
    let range = match pages.split_once('-') {
        Some((first, last)) => number(first).ok_or_else(usage)?..=number(last).ok_or_else(usage)?,
        None => {
            let page = number(pages).ok_or_else(usage)?;
            page..=page
        }
    };
    if range.is_empty() || range.end() - range.start() >= MAX_PAGES_PER_READ {
        return Err(usage());
    }
    Ok(range)
}

/// A range as the user would write it.
fn show(range: &RangeInclusive<u32>) -> String {
    if range.start() == range.end() {
        range.start().to_string()
    } else {
        format!("{}-{}", range.start(), range.end())
    }
}

#[cfg(test)]
mod tests;
