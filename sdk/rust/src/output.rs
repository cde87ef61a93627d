//! What a tool returns on success.

use serde_json::Value;

/// One piece of a tool's result as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// A picture, for models that accept images.
    Image {
        /// IANA media type, e.g. `image/png`.
        media_type: String,
        /// The encoded image bytes.
        data: Vec<u8>,
    },
}

/// A successful tool result: content for the model, and optional structured
/// metadata for programs (UIs, hooks, tests).
///
/// Text converts into it: `Ok("done".into())` or `Ok(format!(..).into())`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// What the model sees, in order.
    pub content: Vec<Content>,
    /// One JSON value for programs; the model does not see it.
    pub metadata: Option<Value>,
}

impl Output {
    /// An output with no content (the model sees an empty result).
    pub fn empty() -> Self {
        Self::default()
    }

    /// An output holding one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::empty().with_text(text)
    }

    /// Appends a text part.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(Content::Text(text.into()));
        self
    }

    /// Appends an image part.
    pub fn with_image(mut self, media_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        self.content.push(Content::Image {
            media_type: media_type.into(),
            data: data.into(),
        });
        self
    }

    /// Sets the metadata, e.g. `.with_metadata(json!({"sum": 3}))`.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }
}

impl From<String> for Output {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Output {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}
