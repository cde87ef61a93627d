//! `counter`: a stateful plugin (one instance per session) and the
//! benchmark's trivial tool.

use std::sync::atomic::{AtomicU64, Ordering};

use kaizen_sdk::prelude::*;

static COUNT: AtomicU64 = AtomicU64::new(0);

/// Counts calls in this instance.
struct Count;

impl Tool for Count {
    const NAME: &'static str = "Count";
    const DESCRIPTION: &'static str =
        "Increments this session's counter and returns its new value (1, 2, ...).";
    type Input = NoInput;

    fn call(_ctx: &CallContext, _input: NoInput) -> Result<Output, ToolError> {
        Ok((COUNT.fetch_add(1, Ordering::Relaxed) + 1)
            .to_string()
            .into())
    }
}

/// Does nothing, as fast as possible.
struct Noop;

impl Tool for Noop {
    const NAME: &'static str = "Noop";
    const DESCRIPTION: &'static str = "Does nothing and returns an empty result.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = NoInput;

    fn call(_ctx: &CallContext, _input: NoInput) -> Result<Output, ToolError> {
        Ok(Output::text(""))
    }
}

export_tools!(Count, Noop);
