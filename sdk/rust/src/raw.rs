//! The `tools` export at the level of the WIT contract, for plugins that
//! implement it by hand instead of with [`export_tools!`](crate::export_tools)
//! (to build a result the typed API would refuse, or to route calls
//! differently).
//!
//! Implement [`Guest`] on a unit struct and pass it to [`export!`](export);
//! [`spec`] and [`call`] do the typed work for any [`Tool`]:
//!
//! ```no_run
//! use kaizen_sdk::raw::{self, CallContext, Guest, ToolOutput, ToolSpec};
//! # use kaizen_sdk::{NoInput, Output, Tool, ToolError};
//! # struct Ping;
//! # impl Tool for Ping {
//! #     const NAME: &'static str = "Ping";
//! #     const DESCRIPTION: &'static str = "Answers pong.";
//! #     type Input = NoInput;
//! #     fn call(_: &kaizen_sdk::CallContext, _: NoInput) -> Result<Output, ToolError> {
//! #         Ok("pong".into())
//! #     }
//! # }
//!
//! struct Plugin;
//!
//! impl Guest for Plugin {
//!     fn tools() -> Vec<ToolSpec> {
//!         vec![raw::spec::<Ping>()]
//!     }
//!
//!     fn call(ctx: CallContext, name: String, input: String) -> Result<ToolOutput, raw::ToolError> {
//!         match name.as_str() {
//!             "Ping" => raw::call::<Ping>(&ctx, &input),
//!             _ => Err(raw::unknown_tool(&name, &["Ping"])),
//!         }
//!     }
//! }
//!
//! raw::export!(Plugin);
//! ```

use std::collections::HashSet;

pub use crate::bindings::exports::kaizen::plugin::tools::{
    ErrorKind, Guest, ToolError, ToolOutput, ToolSpec,
};
pub use crate::bindings::kaizen::plugin::types::{CallContext, ContentPart, DangerLevel, Image};

/// Exports a type implementing [`Guest`] as the component's `tools`
/// interface: `raw::export!(Plugin);`. Use it once per plugin.
#[doc(inline)]
pub use crate::bindings::export;

use crate::{Content, Danger, Output, Tool};

/// The contract-level description of tool `T`: its name, description,
/// danger, read-only flag and the JSON Schema of its input.
///
/// # Panics
///
/// When `T::Input`'s schema cannot describe a JSON object (a unit struct, a
/// tuple, a plain value): the model always sends an object.
pub fn spec<T: Tool>() -> ToolSpec {
    ToolSpec {
        name: T::NAME.to_owned(),
        description: T::DESCRIPTION.to_owned(),
        input_schema: input_schema::<T>(),
        danger: danger_level(T::DANGER),
        read_only: T::READ_ONLY,
    }
}

/// Checks that no two specs share a name, then returns them.
///
/// # Panics
///
/// On a duplicate name, naming it.
pub fn unique(specs: Vec<ToolSpec>) -> Vec<ToolSpec> {
    let mut seen = HashSet::new();
    for spec in &specs {
        assert!(
            seen.insert(spec.name.as_str()),
            "kaizen_sdk: two tools are named `{}`; tool names must be unique",
            spec.name
        );
    }
    specs
}

/// Runs tool `T` on `input` (JSON text): deserializes it into `T::Input`
/// (a failure is an `invalid-input` error naming the tool), calls
/// [`Tool::call`] and converts the result to the contract's types.
pub fn call<T: Tool>(ctx: &CallContext, input: &str) -> Result<ToolOutput, ToolError> {
    let input: T::Input = serde_json::from_str(input).map_err(|err| ToolError {
        kind: ErrorKind::InvalidInput,
        message: format!("invalid input for {}: {err}", T::NAME),
    })?;
    T::call(ctx, input).map(output).map_err(error)
}

/// The error for a call to a tool this plugin does not provide; `known`
/// lists the names it does.
pub fn unknown_tool(name: &str, known: &[&str]) -> ToolError {
    ToolError {
        kind: ErrorKind::NotFound,
        message: format!(
            "this plugin has no tool named `{name}`; its tools are: {}",
            known.join(", ")
        ),
    }
}

/// Converts a typed [`Output`] to the contract's [`ToolOutput`]; the
/// metadata becomes JSON text.
pub fn output(output: Output) -> ToolOutput {
    ToolOutput {
        content: output
            .content
            .into_iter()
            .map(|part| match part {
                Content::Text(text) => ContentPart::Text(text),
                Content::Image { media_type, data } => {
                    ContentPart::Image(Image { media_type, data })
                }
            })
            .collect(),
        metadata: output.metadata.map(|value| value.to_string()),
    }
}

/// Converts a typed [`crate::ToolError`] to the contract's [`ToolError`].
pub fn error(err: crate::ToolError) -> ToolError {
    let kind = match err.kind() {
        crate::ErrorKind::InvalidInput => ErrorKind::InvalidInput,
        crate::ErrorKind::NotFound => ErrorKind::NotFound,
        crate::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
        crate::ErrorKind::Conflict => ErrorKind::Conflict,
        crate::ErrorKind::Timeout => ErrorKind::Timeout,
        crate::ErrorKind::Failed => ErrorKind::Failed,
    };
    ToolError {
        kind,
        message: err.message().to_owned(),
    }
}

fn danger_level(danger: Danger) -> DangerLevel {
    match danger {
        Danger::Safe => DangerLevel::Safe,
        Danger::Moderate => DangerLevel::Moderate,
        Danger::Dangerous => DangerLevel::Dangerous,
    }
}

/// The JSON Schema (draft 2020-12) of `T::Input` as JSON text: what
/// `schemars::schema_for!` derives, without the root `$schema` and `title`
/// keys (the contract fixes the draft, and the title is a Rust type name),
/// and with `"type": "object"` at the root when the schema only combines
/// alternatives (`oneOf` of an internally tagged enum).
fn input_schema<T: Tool>() -> String {
    let mut schema = schemars::schema_for!(T::Input);
    schema.remove("$schema");
    schema.remove("title");
    match schema.get("type") {
        Some(ty) if ty == "object" => {}
        None if schema.as_object().is_some() => {
            schema.insert("type".to_owned(), "object".into());
        }
        other => panic!(
            "kaizen_sdk: the input of tool `{}` must be a JSON object (a struct with named \
             fields, or kaizen_sdk::NoInput), but its schema has type {}",
            T::NAME,
            other.map_or_else(|| "true/false".to_owned(), ToString::to_string),
        ),
    }
    schema.to_value().to_string()
}
