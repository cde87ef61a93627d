//! Images: returned as image content for models that take images.

use std::path::Path;

use kaizen_sdk::prelude::*;

use crate::{human_size, read_error};

/// The largest image returned: 5 MB once base64-encoded for a provider
/// (Anthropic's limit per image), and under the host's 4 MiB cap on a
/// tool result.
pub(crate) const MAX_IMAGE_BYTES: u64 = 3_750_000;

/// The media type an image file's extension names (case-insensitive), or
/// `None` when the file is not read as an image.
pub(crate) fn media_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

/// The media type `bytes` start like, from their magic numbers.
pub(crate) fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Reads the image at `path` (`size` bytes, named as `by_extension`): one
/// text part saying what it is, then the image. The media type comes from
/// the bytes when they say otherwise than the extension (providers refuse
/// a mismatch); bytes that are no known image are refused.
pub(crate) fn read(path: &Path, size: u64, by_extension: &str) -> Result<Output, ToolError> {
    if size > MAX_IMAGE_BYTES {
        return Err(ToolError::invalid_input(format!(
            "{} is an image of {}, larger than the {} Read can return. Make a smaller copy \
             (e.g. with ImageMagick: `convert {} -resize 50% /tmp/smaller.png`) and read that.",
            path.display(),
            human_size(size),
            human_size(MAX_IMAGE_BYTES),
            path.display()
        )));
    }
    let bytes = std::fs::read(path).map_err(|err| read_error(path, err))?;
    if bytes.is_empty() {
        return Ok(Output::text(format!(
            "(The file {} exists but is empty: it holds no image.)",
            path.display()
        )));
    }
    let Some(media_type) = sniff(&bytes) else {
        return Err(ToolError::invalid_input(format!(
            "{} is named like an image ({by_extension}) but its contents are not a PNG, JPEG, \
             GIF or WebP image, so it cannot be shown. Check what it holds with a shell \
             command such as `file {}`.",
            path.display(),
            path.display()
        )));
    };
    let len = bytes.len();
    Ok(Output::text(format!(
        "Image {} ({media_type}, {len} bytes):",
        path.display()
    ))
    .with_image(media_type, bytes)
    .with_metadata(json!({
        "path": path.display().to_string(),
        "type": "image",
        "media_type": media_type,
        "size_bytes": len,
    })))
}
