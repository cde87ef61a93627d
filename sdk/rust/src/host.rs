//! The raw host interfaces of `kaizen:plugin`, as `wit-bindgen` generates
//! them, for what the typed API does not cover.
//!
//! Using one makes the component import it, and the host refuses to load a
//! component whose manifest and grant do not include that capability:
//! `interaction = true`, `process = { programs = [...] }`, `agent = true`,
//! `llm = true`, `parallel = true`. Interfaces a plugin never calls are
//! dropped from the component, so depending on this crate requests nothing
//! by itself. ([`crate::llm`] wraps `llm`.)
//!
//! ```no_run
//! use kaizen_sdk::host::process::{Command, run};
//!
//! let output = run(&Command {
//!     program: "git".into(),
//!     args: vec!["status".into()],
//!     cwd: None,
//!     env: Vec::new(),
//!     stdin: None,
//!     timeout_ms: Some(10_000),
//! });
//! ```

pub use crate::bindings::kaizen::plugin::{
    agent, interaction, llm, log, parallel, process, session, types,
};
