//! An MCP server's answers in kaizen's terms: a result's content as what
//! the model sees, its structured content as metadata, a tool error as a
//! failed call.

use base64::Engine as _;
use kaizen_tools::{ContentPart, ToolError, ToolErrorKind, ToolOutput};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Maps one `tools/call` result. `server` and `tool` name the call in
/// messages.
pub fn output(server: &str, tool: &str, result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let mut content = Vec::with_capacity(result.content.len());
    for block in result.content {
        content.push(part(block).map_err(|why| {
            ToolError::new(
                ToolErrorKind::Crashed,
                format!("the MCP server `{server}` answered {tool} with a malformed result: {why}"),
            )
        })?);
    }
    if result.is_error == Some(true) {
        let text = ToolOutput {
            content,
            metadata: None,
        }
        .joined_text();
        let text = if text.trim().is_empty() {
            format!("{tool} failed (the MCP server `{server}` gave no reason)")
        } else {
            text
        };
        return Err(ToolError::new(ToolErrorKind::Failed, text));
    }
    let metadata = result.structured_content;
    if content.is_empty() {
        // A result with only structured content: the model sees it too.
        if let Some(structured) = &metadata {
            content.push(ContentPart::Text {
                text: structured.to_string(),
            });
        }
    }
    Ok(ToolOutput { content, metadata })
}

fn part(block: ContentBlock) -> Result<ContentPart, String> {
    Ok(match block {
        ContentBlock::Text(text) => ContentPart::Text { text: text.text },
        ContentBlock::Image(image) => ContentPart::Image {
            data: base64::engine::general_purpose::STANDARD
                .decode(image.data.trim())
                .map_err(|e| format!("an image's data is not base64 ({e})"))?,
            media_type: image.mime_type,
        },
        ContentBlock::Audio(audio) => ContentPart::Text {
            text: format!(
                "[audio ({}, {} base64 bytes) that kaizen cannot show]",
                audio.mime_type,
                audio.data.len()
            ),
        },
        ContentBlock::Resource(embedded) => ContentPart::Text {
            text: match embedded.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => format!(
                    "[resource {uri}: {} of {} base64 bytes that kaizen cannot show]",
                    mime_type.as_deref().unwrap_or("binary data"),
                    blob.len()
                ),
                _ => "[a resource of a kind this version of MCP does not know]".to_string(),
            },
        },
        ContentBlock::ResourceLink(link) => ContentPart::Text {
            text: match link.description {
                Some(description) => format!(
                    "[resource link {} ({}): {description}]",
                    link.uri, link.name
                ),
                None => format!("[resource link {} ({})]", link.uri, link.name),
            },
        },
        _ => return Err("a content block of a kind this version of MCP does not know".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    #[test]
    fn text_images_and_structured_content_map_over() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("aGk=", "image/png"),
        ]);
        result.structured_content = Some(serde_json::json!({"n": 1}));
        let out = output("s", "t", result).unwrap();
        assert_eq!(out.joined_text(), "hello");
        assert_eq!(
            out.content[1],
            ContentPart::Image {
                media_type: "image/png".into(),
                data: b"hi".to_vec()
            }
        );
        assert_eq!(out.metadata, Some(serde_json::json!({"n": 1})));
    }

    #[test]
    fn tool_errors_and_bad_images_fail_the_call() {
        let err = output(
            "s",
            "t",
            CallToolResult::error(vec![ContentBlock::text("no such file")]),
        )
        .unwrap_err();
        assert_eq!(
            (err.kind, err.message.as_str()),
            (ToolErrorKind::Failed, "no such file")
        );
        let err = output("s", "t", CallToolResult::error(vec![])).unwrap_err();
        assert!(err.message.contains("gave no reason"), "{err}");
        let bad = CallToolResult::success(vec![ContentBlock::image("%%%", "image/png")]);
        let err = output("srv", "t", bad).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::Crashed);
        assert!(
            err.message
                .contains("`srv` answered t with a malformed result"),
            "{err}"
        );
    }

    #[test]
    fn structured_content_alone_is_shown() {
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(serde_json::json!({"sum": 3}));
        assert_eq!(
            output("s", "t", result).unwrap().joined_text(),
            r#"{"sum":3}"#
        );
    }
}
