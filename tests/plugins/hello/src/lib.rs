//! `hello`: the smallest useful plugin, written the way the SDK's docs show.

use kaizen_sdk::prelude::*;

/// Input of `Greet`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct GreetInput {
    /// Who to greet.
    name: String,
}

struct Greet;

impl Tool for Greet {
    const NAME: &'static str = "Greet";
    const DESCRIPTION: &'static str = "Greets someone by name.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = GreetInput;

    fn call(_ctx: &CallContext, input: GreetInput) -> Result<Output, ToolError> {
        Ok(format!("Hello, {}!", input.name).into())
    }
}

/// Input of `Add`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct AddInput {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

/// Adds two numbers; keeps the default danger and read-only flag.
struct Add;

impl Tool for Add {
    const NAME: &'static str = "Add";
    const DESCRIPTION: &'static str = "Adds two numbers and returns the sum.";
    type Input = AddInput;

    fn call(_ctx: &CallContext, input: AddInput) -> Result<Output, ToolError> {
        let sum = input.a + input.b;
        // Whole sums are integers in the metadata (`{"sum": 3}`, not 3.0).
        let value = if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
            json!(sum as i64)
        } else {
            json!(sum)
        };
        Ok(Output::text(sum.to_string()).with_metadata(json!({ "sum": value })))
    }
}

export_tools!(Greet, Add);
