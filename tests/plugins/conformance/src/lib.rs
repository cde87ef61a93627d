//! `conformance`: the fixture tools the official MCP conformance suite's
//! server scenarios call (`test_simple_text`, `test_image_content`,
//! `test_error_handling`, `test_tool_with_progress`), so that
//! `kaizen mcp serve` answers them through its real path: a component's
//! text, image and error, and the progress kaizen reports for a long call.

use kaizen_sdk::prelude::*;

/// No input.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct Nothing {}

struct SimpleText;

impl Tool for SimpleText {
    const NAME: &'static str = "test_simple_text";
    const DESCRIPTION: &'static str = "Returns a line of text.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = Nothing;

    fn call(_ctx: &CallContext, _input: Nothing) -> Result<Output, ToolError> {
        Ok("This is a simple text response for testing.".into())
    }
}

/// A 1×1 red PNG.
const PIXEL: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

struct ImageContent;

impl Tool for ImageContent {
    const NAME: &'static str = "test_image_content";
    const DESCRIPTION: &'static str = "Returns a one-pixel PNG.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = Nothing;

    fn call(_ctx: &CallContext, _input: Nothing) -> Result<Output, ToolError> {
        Ok(Output::default().with_image("image/png", PIXEL))
    }
}

struct ErrorHandling;

impl Tool for ErrorHandling {
    const NAME: &'static str = "test_error_handling";
    const DESCRIPTION: &'static str = "Always fails, saying why.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = Nothing;

    fn call(_ctx: &CallContext, _input: Nothing) -> Result<Output, ToolError> {
        Err(ToolError::failed(
            "This tool intentionally returns an error for testing",
        ))
    }
}

struct WithProgress;

impl Tool for WithProgress {
    const NAME: &'static str = "test_tool_with_progress";
    const DESCRIPTION: &'static str =
        "Takes a little over three seconds, long enough for three progress reports.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = Nothing;

    fn call(_ctx: &CallContext, _input: Nothing) -> Result<Output, ToolError> {
        std::thread::sleep(std::time::Duration::from_millis(3300));
        Ok("done after 3.3 s".into())
    }
}

export_tools!(SimpleText, ImageContent, ErrorHandling, WithProgress);
