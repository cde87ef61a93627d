//! `fan-out`: calls its own internal `Echo` through the `parallel` host
//! interface, as many times as asked, for the host's bounds on it.

use kaizen_sdk::host::parallel;
use kaizen_sdk::prelude::*;

/// Input of `Flood`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct FloodInput {
    /// How many `Echo` calls to ask for in one `call-each`.
    count: usize,
}

/// Asks for `count` calls of `Echo` at once and reports how they went.
struct Flood;

impl Tool for Flood {
    const NAME: &'static str = "Flood";
    const DESCRIPTION: &'static str = "Runs Echo `count` times through the parallel interface.";
    const READ_ONLY: bool = true;
    type Input = FloodInput;

    fn call(_ctx: &CallContext, input: FloodInput) -> Result<Output, ToolError> {
        let inputs: Vec<String> = (0..input.count).map(|i| format!("{{\"n\":{i}}}")).collect();
        let results = parallel::call_each("Echo", &inputs);
        let ok = results.iter().filter(|r| r.is_ok()).count();
        let first_error = results.iter().find_map(|r| r.as_ref().err());
        Ok(Output::text(format!(
            "{} results, {ok} ok{}",
            results.len(),
            first_error.map_or_else(String::new, |e| format!("; first error: {e}"))
        )))
    }
}

/// Input of `Echo`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct EchoInput {
    /// A number to give back.
    n: u64,
}

/// Gives its number back; only reachable through `parallel`.
struct Echo;

impl Tool for Echo {
    const NAME: &'static str = "Echo";
    const DESCRIPTION: &'static str = "Gives its number back.";
    const READ_ONLY: bool = true;
    const INTERNAL: bool = true;
    type Input = EchoInput;

    fn call(_ctx: &CallContext, input: EchoInput) -> Result<Output, ToolError> {
        Ok(Output::text(input.n.to_string()))
    }
}

export_tools!(Flood, Echo);
