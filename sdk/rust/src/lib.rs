//! Write Kaizen tool plugins in Rust.
//!
//! A plugin is a WebAssembly component (`wasm32-wasip2`, crate type
//! `cdylib`) that provides one or more tools. Each tool is a type
//! implementing [`Tool`] with a typed input whose JSON Schema is derived for
//! the model; [`export_tools!`] turns the list of tools into the component's
//! exports. A whole plugin:
//!
//! ```
//! use kaizen_sdk::prelude::*;
//!
//! /// Greets someone.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(crate = "kaizen_sdk::serde")]
//! struct GreetInput {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! struct Greet;
//!
//! impl Tool for Greet {
//!     const NAME: &'static str = "Greet";
//!     const DESCRIPTION: &'static str = "Greets someone by name.";
//!     const READ_ONLY: bool = true;
//!     const DANGER: Danger = Danger::Safe;
//!     type Input = GreetInput;
//!
//!     fn call(_ctx: &CallContext, input: GreetInput) -> Result<Output, ToolError> {
//!         Ok(format!("Hello, {}!", input.name).into())
//!     }
//! }
//!
//! export_tools!(Greet);
//! ```
//!
//! Its `Cargo.toml` needs `crate-type = ["cdylib"]` and one dependency,
//! `kaizen-sdk`; build it with `cargo build --release --target
//! wasm32-wasip2` and put the `.wasm` beside a `plugin.toml` manifest.
//!
//! # Deriving the input's traits
//!
//! The prelude re-exports `serde`'s `Deserialize` and `schemars`'
//! `JsonSchema` with their derives, so the plugin needs no other dependency.
//! `serde`'s derive looks for a crate named `serde`, hence the
//! `#[serde(crate = "kaizen_sdk::serde")]` line on each input type;
//! `schemars`' derive finds `schemars` through the prelude. If the plugin
//! depends on `serde` (with `derive`) and `schemars = "1"` itself, drop that
//! line and derive from those crates directly: both ways give the same code.
//!
//! Doc comments on the input's fields become their descriptions in the
//! schema, `Option` fields are optional, and serde attributes
//! (`rename_all`, `default`, ...) are honored. A tool without arguments
//! takes [`NoInput`].
//!
//! # Results
//!
//! A tool returns an [`Output`] (text converts into one with `.into()`;
//! images and JSON metadata for programs can be added) or a [`ToolError`]
//! whose kind tells the model what sort of failure it was. I/O errors
//! convert with `?`; add the path with [`ToolError::context`].
//!
//! # State
//!
//! Tools take no `self`: by default the host serves each call from a fresh
//! instance, so state does not survive between calls. A plugin whose
//! manifest says `stateful = true` gets one instance per session and may
//! keep state in `static`s.
//!
//! # Host interfaces
//!
//! [`log`] writes to the host's log and [`session`] keeps the session's
//! notes (files read, the todo list); both are always granted. Files are plain
//! `std::fs` on the preopened directories the plugin was granted; outbound
//! HTTP goes through `wasi:http` ([`http`] is a small blocking client for
//! it), and [`llm`] asks the session's model for a completion. The other
//! host interfaces (asking the user, running programs, sub-agents) are in
//! [`host`];
//! a component imports only the interfaces it calls, and the host refuses
//! to load one that imports a capability it was not granted. [`raw`] is the
//! `tools` export at the contract level, for plugins that implement it by
//! hand.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

// `generate_contract!`: `wit_bindgen::generate!` on the newest contract,
// written by the build script (see build.rs).
include!(concat!(env!("OUT_DIR"), "/contract.rs"));

// The generated bindings name this crate `kaizen_sdk` so that the export
// macro works from plugin crates; this makes the same paths work here.
extern crate self as kaizen_sdk;

#[doc(hidden)]
#[allow(missing_docs, clippy::all)]
pub mod bindings;
mod error;
pub mod hook;
#[doc(hidden)]
#[allow(missing_docs, clippy::all)]
pub mod hook_bindings;
pub mod host;
pub mod http;
pub mod llm;
pub mod log;
mod macros;
mod output;
pub mod paths;
pub mod planner;
#[doc(hidden)]
#[allow(missing_docs, clippy::all)]
pub mod planner_bindings;
pub mod raw;
pub mod session;
mod tool;

pub use error::{ErrorKind, ToolError};
pub use output::{Content, Output};
pub use tool::{Danger, NoInput, Tool};

/// What the host tells a tool about the call it is serving: the session
/// and call ids, the workspace (preopened at the same absolute path) and
/// the directory relative paths should resolve against.
pub use bindings::kaizen::plugin::types::CallContext;

/// `serde`, re-exported for `#[serde(crate = "kaizen_sdk::serde")]`.
pub use serde;
/// `serde`'s `Deserialize` trait and derive macro.
pub use serde::Deserialize;

/// `schemars`, re-exported so that its derive finds it through
/// [`prelude`].
pub use schemars;
/// `schemars`' `JsonSchema` trait and derive macro.
pub use schemars::JsonSchema;

/// `serde_json`, for metadata values and parsing.
pub use serde_json;
/// Builds a [`serde_json::Value`] from JSON-like syntax, e.g. for
/// [`Output::with_metadata`].
pub use serde_json::json;

/// The wit-bindgen runtime, reached by the generated bindings.
#[doc(hidden)]
pub use wit_bindgen::rt as __rt;

/// Everything a tool plugin usually needs: `use kaizen_sdk::prelude::*;`.
///
/// Besides the types, it brings `schemars` into scope (its derive finds the
/// crate by that name). [`log`] is left out so that it cannot shadow the
/// `log` crate: call `kaizen_sdk::log::info(..)`.
pub mod prelude {
    pub use crate::{
        CallContext, Danger, Deserialize, JsonSchema, NoInput, Output, Tool, ToolError,
        export_tools, json, schemars,
    };
}
