//! Jupyter notebooks: each cell's source, the text of code cells'
//! outputs, and their raster image outputs as images.

use std::fmt::Write as _;
use std::path::Path;

use kaizen_sdk::prelude::*;
use kaizen_sdk::serde_json::{self, Value};

use crate::image::{MAX_IMAGE_BYTES, sniff};
use crate::{MAX_OUTPUT_BYTES, human_size, read_error};

/// Notebooks larger than this are not parsed (their JSON tree would take
/// many times the memory); they can still be paged as raw JSON.
const MAX_NOTEBOOK_BYTES: u64 = 16 * 1024 * 1024;

/// Each output's text is cut to this many characters.
pub(crate) const MAX_OUTPUT_CHARS: usize = 4000;

/// Whether `path` names a notebook (`.ipynb`, any case).
pub(crate) fn is_notebook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
}

/// A notebook as text.
#[derive(Debug)]
pub(crate) struct Rendered {
    /// What the model sees.
    pub text: String,
    /// The image outputs of the cells shown, as the text numbers them:
    /// `(media type, bytes)`.
    pub images: Vec<(&'static str, Vec<u8>)>,
    /// How many cells the notebook has.
    pub cells: usize,
    /// How many of them `text` shows (fewer when it would be too large).
    pub shown: usize,
}

/// Reads the notebook at `path` (`size` bytes). A file that is not
/// notebook JSON is shown as text, after a note saying so.
pub(crate) fn read(path: &Path, size: u64) -> Result<Output, ToolError> {
    if size > MAX_NOTEBOOK_BYTES {
        return Err(ToolError::invalid_input(format!(
            "The notebook {} is {}, too large to show as cells. Page through its raw JSON with \
             offset and limit (e.g. offset=1, limit=2000), or search it with Grep.",
            path.display(),
            human_size(size)
        )));
    }
    let json = std::fs::read(path).map_err(|err| read_error(path, err))?;
    let rendered = match render(&json, MAX_OUTPUT_BYTES) {
        Ok(rendered) => rendered,
        Err(why) => {
            let mut output = crate::text::read(path, size, None, None)?;
            let note = format!(
                "(This .ipynb file is not a valid notebook ({why}); it is shown as plain text.)\n"
            );
            if let Some(kaizen_sdk::Content::Text(text)) = output.content.first_mut() {
                text.insert_str(0, &note);
            }
            return Ok(output);
        }
    };
    let mut text = rendered.text;
    let images = rendered.images;
    if rendered.cells == 0 {
        text = format!("(The notebook {} has no cells.)", path.display());
    } else if rendered.shown < rendered.cells {
        let _ = write!(
            text,
            "\n(Showing cells 1-{} of {}: more would make the result larger than {} KB. Search \
             the notebook with Grep, or page through its raw JSON with offset and limit.)",
            rendered.shown,
            rendered.cells,
            MAX_OUTPUT_BYTES / 1024
        );
    }
    let mut output = Output::text(text.trim_end().to_owned()).with_metadata(json!({
        "path": path.display().to_string(),
        "type": "notebook",
        "cells": rendered.cells,
        "cells_shown": rendered.shown,
        "truncated": rendered.shown < rendered.cells,
        "images": images.len(),
    }));
    for (media_type, bytes) in images {
        output = output.with_image(media_type, bytes);
    }
    Ok(output)
}

/// Renders notebook JSON: for each cell a `<cell id=".." type="..">`
/// block with its source and, for code cells, `<output>` blocks. Stops
/// before the text would grow past `max_bytes` (the first cell is always
/// shown, cut if need be). Fails with a short reason when `json` is not a
/// notebook.
pub(crate) fn render(json: &[u8], max_bytes: usize) -> Result<Rendered, String> {
    let notebook: Value = serde_json::from_slice(json).map_err(|err| err.to_string())?;
    let cells = cells(&notebook).ok_or("it has no `cells` list")?;
    let mut text = String::new();
    let mut shown = 0;
    let mut block = String::new();
    let mut images = Images::default();
    for (index, cell) in cells.iter().enumerate() {
        block.clear();
        let before = images.found.len();
        render_cell(&mut block, index, cell, &mut images);
        if text.len() + block.len() > max_bytes {
            images.drop_from(before);
            if shown == 0 {
                text.push_str(&block[..block.floor_char_boundary(max_bytes)]);
                text.push_str("\n… [cell cut]\n");
                shown = 1;
            }
            break;
        }
        text.push_str(&block);
        shown += 1;
    }
    Ok(Rendered {
        text,
        images: images.found,
        cells: cells.len(),
        shown,
    })
}

/// Image outputs shown as images: at most [`MAX_IMAGES`], and
/// [`MAX_IMAGE_BYTES`] in all (the most one Read returns).
#[derive(Default)]
struct Images {
    found: Vec<(&'static str, Vec<u8>)>,
    bytes: usize,
}

/// The most image outputs one read shows as images.
const MAX_IMAGES: usize = 20;

impl Images {
    /// Takes the base64 image of `media_type` in `value`: the note that
    /// stands for it in the text.
    fn take(&mut self, media_type: &str, value: &Value) -> String {
        use base64::Engine as _;
        let encoded: String = multiline(value).split_whitespace().collect();
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded) else {
            return format!("[{media_type} output that is not valid base64]");
        };
        let Some(sniffed) = sniff(&bytes) else {
            return format!("[{media_type} output that is not a PNG, JPEG, GIF or WebP image]");
        };
        if self.found.len() >= MAX_IMAGES || self.bytes + bytes.len() > MAX_IMAGE_BYTES as usize {
            return format!(
                "[{sniffed} output, {} bytes, not shown: this read already holds as many images \
                 as it can]",
                bytes.len()
            );
        }
        self.bytes += bytes.len();
        self.found.push((sniffed, bytes));
        format!(
            "[{sniffed} output: image {} after the text]",
            self.found.len()
        )
    }

    /// Forgets the images from `index` on (their cell is not shown).
    fn drop_from(&mut self, index: usize) {
        for (_, bytes) in self.found.drain(index..) {
            self.bytes -= bytes.len();
        }
    }
}

/// The cells of an nbformat 4 notebook, or of the first worksheet of an
/// nbformat 3 one.
fn cells(notebook: &Value) -> Option<&Vec<Value>> {
    notebook["cells"]
        .as_array()
        .or_else(|| notebook["worksheets"][0]["cells"].as_array())
}

/// Appends one cell.
fn render_cell(out: &mut String, index: usize, cell: &Value, images: &mut Images) {
    let id = cell["id"]
        .as_str()
        .map_or_else(|| format!("cell-{index}"), str::to_owned);
    let kind = cell["cell_type"].as_str().unwrap_or("code");
    let _ = writeln!(out, "<cell id=\"{id}\" type=\"{kind}\">");
    // nbformat 3 code cells keep their source in `input`.
    let source = multiline(if cell.get("source").is_some() {
        &cell["source"]
    } else {
        &cell["input"]
    });
    push_block(out, &source);
    if let Some(outputs) = cell["outputs"].as_array() {
        for output in outputs {
            render_output(out, output, images);
        }
    }
    out.push_str("</cell>\n");
}

/// Appends one output of a code cell: its text, cut to
/// [`MAX_OUTPUT_CHARS`]; images as a note pointing at the image, HTML as a
/// short note.
fn render_output(out: &mut String, output: &Value, images: &mut Images) {
    let kind = output["output_type"].as_str().unwrap_or("output");
    let body = match kind {
        "stream" => {
            let name = output["name"].as_str().unwrap_or("stdout");
            let _ = writeln!(out, "<output type=\"stream\" name=\"{name}\">");
            multiline(&output["text"])
        }
        "error" | "pyerr" => {
            let _ = writeln!(out, "<output type=\"error\">");
            format!(
                "{}: {}",
                output["ename"].as_str().unwrap_or("Error"),
                output["evalue"].as_str().unwrap_or_default()
            )
        }
        _ => {
            let _ = writeln!(out, "<output type=\"{kind}\">");
            rich_output(output, images)
        }
    };
    push_block(out, &cut(&body, MAX_OUTPUT_CHARS));
    out.push_str("</output>\n");
}

/// The text of an `execute_result` or `display_data` output (or an
/// nbformat 3 `pyout`, which keeps its data at the top level): its
/// `text/plain`, then a note for each image (taken into `images`) and for
/// HTML without text.
fn rich_output(output: &Value, images: &mut Images) -> String {
    let data = if output["data"].is_object() {
        &output["data"]
    } else {
        output
    };
    let plain = data.get("text/plain").or_else(|| data.get("text"));
    let mut notes = Vec::new();
    for (key, value) in data.as_object().into_iter().flatten() {
        let raster = match key.as_str() {
            "image/png" | "png" => Some("image/png"),
            "image/jpeg" | "jpeg" => Some("image/jpeg"),
            "image/gif" => Some("image/gif"),
            "image/webp" => Some("image/webp"),
            _ => None,
        };
        if let Some(media_type) = raster {
            notes.push(images.take(media_type, value));
        } else if key.starts_with("image/") || key == "svg" {
            notes.push(format!("[{key} output]"));
        } else if (key == "text/html" || key == "html") && plain.is_none() {
            notes.push(format!(
                "[HTML output, {} characters]",
                multiline(value).chars().count()
            ));
        }
    }
    notes.dedup();
    let mut body = plain.map(multiline).unwrap_or_default();
    for note in notes {
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        body.push_str(&note);
    }
    body
}

/// A notebook string field: one string, or a list of strings to join.
fn multiline(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// Appends `text` (without `\r`s before newlines) and ends it with a
/// newline unless it is empty.
fn push_block(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    out.push_str(&text.replace("\r\n", "\n"));
    if !text.ends_with('\n') {
        out.push('\n');
    }
}

/// `text` cut to `max` characters, with a marker giving its length.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}… [output cut: {} characters, the first {max} shown]",
            &text[..at],
            text.chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_short_text_and_marks_long_text_at_a_char_boundary() {
        assert_eq!(cut("héllo", 5), "héllo");
        assert_eq!(
            cut("héllo wörld", 7),
            "héllo w… [output cut: 11 characters, the first 7 shown]"
        );
    }

    #[test]
    fn cells_come_from_v4_or_the_first_v3_worksheet() {
        let v4 = json!({"cells": [{"cell_type": "markdown", "source": "# Hi"}]});
        assert_eq!(cells(&v4).unwrap().len(), 1);
        let v3 = json!({"worksheets": [{"cells": [{"cell_type": "code", "input": "1+1"}]}]});
        let rendered = render(v3.to_string().as_bytes(), 1000).unwrap();
        assert_eq!(
            rendered.text,
            "<cell id=\"cell-0\" type=\"code\">\n1+1\n</cell>\n"
        );
        assert!(render(b"{\"nbformat\": 4}", 1000).is_err());
        assert!(render(b"not json", 1000).is_err());
    }
}
