//! The typed layer, run natively: schemas, dispatch, conversions.

use kaizen_sdk::prelude::*;
use kaizen_sdk::raw::{self, DangerLevel};
use kaizen_sdk::{Content, ErrorKind};
use serde_json::Value;

/// Input of `Probe`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct ProbeInput {
    /// What to do.
    op: Op,
    /// Where.
    path: String,
    /// Optional payload.
    content: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde", rename_all = "lowercase")]
enum Op {
    Read,
    Write,
}

struct Probe;

impl Tool for Probe {
    const NAME: &'static str = "Probe";
    const DESCRIPTION: &'static str = "Probes.";
    type Input = ProbeInput;

    fn call(ctx: &CallContext, input: ProbeInput) -> Result<Output, ToolError> {
        match input.op {
            Op::Read => Err(ToolError::not_found("nothing here").context(&input.path)),
            Op::Write => Ok(Output::text(format!("{} {}", ctx.cwd, input.path))
                .with_image("image/png", vec![1, 2])
                .with_metadata(json!({"len": input.content.map(|c| c.len())}))),
        }
    }
}

struct Nothing;

impl Tool for Nothing {
    const NAME: &'static str = "Nothing";
    const DESCRIPTION: &'static str = "Does nothing.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = NoInput;

    fn call(_: &CallContext, _: NoInput) -> Result<Output, ToolError> {
        Ok(Output::empty())
    }
}

struct Unit;

impl Tool for Unit {
    const NAME: &'static str = "Unit";
    const DESCRIPTION: &'static str = "Takes a bare string, which no model sends.";
    type Input = String;

    fn call(_: &CallContext, _: String) -> Result<Output, ToolError> {
        Ok("".into())
    }
}

fn ctx() -> CallContext {
    CallContext {
        session_id: "s".into(),
        call_id: "c".into(),
        workspace: "/ws".into(),
        cwd: "/ws/sub".into(),
    }
}

#[test]
fn spec_carries_constants_and_an_object_schema() {
    let spec = raw::spec::<Probe>();
    assert_eq!(spec.name, "Probe");
    assert_eq!(spec.description, "Probes.");
    assert!(!spec.read_only);
    assert_eq!(spec.danger, DangerLevel::Moderate);

    let schema: Value = serde_json::from_str(&spec.input_schema).unwrap();
    assert_eq!(schema["type"], "object");
    assert!(schema.get("$schema").is_none());
    assert!(schema.get("title").is_none());
    assert_eq!(schema["properties"]["path"]["description"], "Where.");
    assert_eq!(schema["required"], json!(["op", "path"]));

    let validator = jsonschema::validator_for(&schema).expect("the host's validator accepts it");
    assert!(validator.is_valid(&json!({"op": "read", "path": "x"})));
    assert!(validator.is_valid(&json!({"op": "write", "path": "x", "content": null})));
    assert!(!validator.is_valid(&json!({"op": "fly", "path": "x"})));
    assert!(!validator.is_valid(&json!({"path": "x"})));

    let spec = raw::spec::<Nothing>();
    assert!(spec.read_only);
    assert_eq!(spec.danger, DangerLevel::Safe);
    let schema: Value = serde_json::from_str(&spec.input_schema).unwrap();
    assert_eq!(schema["type"], "object");
    assert!(
        jsonschema::validator_for(&schema)
            .unwrap()
            .is_valid(&json!({}))
    );
}

#[test]
#[should_panic(expected = "must be a JSON object")]
fn non_object_input_is_refused() {
    raw::spec::<Unit>();
}

#[test]
#[should_panic(expected = "two tools are named `Probe`")]
fn duplicate_names_are_refused() {
    raw::unique(vec![raw::spec::<Probe>(), raw::spec::<Probe>()]);
}

#[test]
fn call_converts_output_and_errors() {
    let out = raw::call::<Probe>(&ctx(), r#"{"op":"write","path":"a","content":"xyz"}"#).unwrap();
    assert_eq!(out.content.len(), 2);
    assert!(matches!(&out.content[0], raw::ContentPart::Text(t) if t == "/ws/sub a"));
    assert!(matches!(&out.content[1], raw::ContentPart::Image(i) if i.media_type == "image/png"));
    assert_eq!(out.metadata.as_deref(), Some(r#"{"len":3}"#));

    let err = raw::call::<Probe>(&ctx(), r#"{"op":"read","path":"a/b"}"#).unwrap_err();
    assert_eq!(err.kind, raw::ErrorKind::NotFound);
    assert_eq!(err.message, "a/b: nothing here");

    let err = raw::call::<Probe>(&ctx(), r#"{"op":"fly","path":"a"}"#).unwrap_err();
    assert_eq!(err.kind, raw::ErrorKind::InvalidInput);
    assert!(
        err.message
            .starts_with("invalid input for Probe: unknown variant `fly`"),
        "{}",
        err.message
    );

    let out = raw::call::<Nothing>(&ctx(), "{}").unwrap();
    assert!(out.content.is_empty() && out.metadata.is_none());

    let err = raw::unknown_tool("Nope", &["Probe", "Nothing"]);
    assert_eq!(err.kind, raw::ErrorKind::NotFound);
    assert!(err.message.contains("Nope") && err.message.contains("Probe, Nothing"));
}

#[test]
fn io_errors_map_to_kinds() {
    use std::io;
    let cases = [
        (io::ErrorKind::NotFound, ErrorKind::NotFound),
        (io::ErrorKind::PermissionDenied, ErrorKind::PermissionDenied),
        (io::ErrorKind::AlreadyExists, ErrorKind::Conflict),
        (io::ErrorKind::TimedOut, ErrorKind::Timeout),
        (io::ErrorKind::IsADirectory, ErrorKind::InvalidInput),
        (io::ErrorKind::Other, ErrorKind::Failed),
    ];
    for (io_kind, kind) in cases {
        let err = ToolError::from(io::Error::new(io_kind, "oops"));
        assert_eq!(err.kind(), kind, "{io_kind:?}");
        assert_eq!(err.message(), "oops");
    }
    let err = ToolError::from(io::Error::from(io::ErrorKind::NotFound)).context("/x");
    assert_eq!(err.to_string(), "/x: entity not found");
}

#[test]
fn text_converts_into_output() {
    let out: Output = "hi".into();
    assert_eq!(out.content, vec![Content::Text("hi".into())]);
    let out: Output = String::from("yo").into();
    assert_eq!(out, Output::text("yo"));
}

export_tools!(Probe, Nothing);
