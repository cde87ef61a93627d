//! Kaizen's tools and results in MCP's terms.

use base64::Engine as _;
use kaizen_tools::{ContentPart, Danger, Tool, ToolError, ToolOutput};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use std::sync::Arc;

/// A tool as MCP lists it: its schema, and hints from what kaizen knows of
/// it (read-only; destructive when it is dangerous and may change things;
/// open-world unless its effects stay inside its grant, as a fetch's do
/// not).
pub fn tool(tool: &dyn Tool) -> rmcp::model::Tool {
    let spec = tool.spec();
    let schema: JsonObject = match &spec.input_schema {
        serde_json::Value::Object(object) => object.clone(),
        _ => JsonObject::new(),
    };
    let annotations = ToolAnnotations::new()
        .read_only(spec.read_only)
        .destructive(!spec.read_only && spec.danger >= Danger::High)
        .idempotent(spec.read_only)
        .open_world(!tool.contained());
    rmcp::model::Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_title(spec.name.clone())
    .annotate(annotations)
}

/// A successful call: text and images as content, metadata as structured
/// content.
pub fn success(output: ToolOutput) -> CallToolResult {
    let content = output
        .content
        .into_iter()
        .map(|part| match part {
            ContentPart::Text { text } => ContentBlock::text(text),
            ContentPart::Image { media_type, data } => ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(data),
                media_type,
            ),
        })
        .collect();
    let mut result = CallToolResult::success(content);
    result.structured_content = output.metadata;
    result
}

/// A failed or refused call, with the same text the model would get.
pub fn failure(error: ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(error.message)])
}
