//! `hostile`: tools that misbehave, for the host's containment tests.
//!
//! The `tools` export is implemented by hand (through `kaizen_sdk::raw`)
//! because `BadMetadata` returns metadata that is not JSON, which the typed
//! API cannot express.

use std::hint::black_box;

use kaizen_sdk::prelude::*;
use kaizen_sdk::raw::{self, ContentPart, Guest, ToolOutput, ToolSpec};

/// Loops forever.
struct Spin;

impl Tool for Spin {
    const NAME: &'static str = "Spin";
    const DESCRIPTION: &'static str = "Never returns.";
    type Input = NoInput;

    fn call(_ctx: &CallContext, _input: NoInput) -> Result<Output, ToolError> {
        let mut i = 0u64;
        loop {
            i = black_box(i.wrapping_add(1));
        }
    }
}

/// Allocates until allocation fails.
struct MemoryBomb;

impl Tool for MemoryBomb {
    const NAME: &'static str = "MemoryBomb";
    const DESCRIPTION: &'static str = "Allocates and touches memory until allocation fails.";
    type Input = NoInput;

    fn call(_ctx: &CallContext, _input: NoInput) -> Result<Output, ToolError> {
        const CHUNK: usize = 1 << 20;
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            // Writing every byte makes the memory really used; a failed
            // allocation aborts (a trap), unless growing memory traps first.
            let chunk = vec![0xA5u8; CHUNK];
            hoard.push(black_box(chunk));
        }
    }
}

/// Input of `Recurse`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct RecurseInput {
    /// How deep to recurse; each level uses about 4 KiB of stack.
    depth: u64,
}

/// Recurses `depth` levels deep, each holding a stack buffer.
struct Recurse;

impl Tool for Recurse {
    const NAME: &'static str = "Recurse";
    const DESCRIPTION: &'static str = "Recurses; a large depth overflows the stack.";
    type Input = RecurseInput;

    fn call(_ctx: &CallContext, input: RecurseInput) -> Result<Output, ToolError> {
        Ok(format!("recursed {}", recurse(input.depth)).into())
    }
}

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let mut frame = [0u8; 4096];
    frame[(depth % 4096) as usize] = 1;
    black_box(&mut frame);
    if depth == 0 {
        return 0;
    }
    // Not a tail call: the frame is used after the recursive call returns.
    let below = recurse(black_box(depth - 1));
    black_box(&frame);
    below + 1
}

/// Returns a result whose metadata is not JSON.
struct BadMetadata;

impl BadMetadata {
    const NAME: &'static str = "BadMetadata";

    fn spec() -> ToolSpec {
        ToolSpec {
            name: Self::NAME.into(),
            description: "Returns metadata that is not valid JSON.".into(),
            input_schema: r#"{"type":"object","properties":{}}"#.into(),
            danger: raw::DangerLevel::Safe,
            read_only: true,
        }
    }

    fn call() -> ToolOutput {
        ToolOutput {
            content: vec![ContentPart::Text("metadata follows".into())],
            metadata: Some("not json {".into()),
        }
    }
}

/// Input of `HugeOutput`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct HugeOutputInput {
    /// Size of the text in MiB.
    mib: u64,
}

/// Returns a text of the requested size.
struct HugeOutput;

impl Tool for HugeOutput {
    const NAME: &'static str = "HugeOutput";
    const DESCRIPTION: &'static str = "Returns a text of `mib` MiB.";
    type Input = HugeOutputInput;

    fn call(_ctx: &CallContext, input: HugeOutputInput) -> Result<Output, ToolError> {
        let len = usize::try_from(input.mib << 20)
            .map_err(|_| ToolError::invalid_input("mib is too large"))?;
        Ok("x".repeat(len).into())
    }
}

/// Panics.
struct Panic;

impl Tool for Panic {
    const NAME: &'static str = "Panic";
    const DESCRIPTION: &'static str = "Panics.";
    type Input = NoInput;

    fn call(_ctx: &CallContext, _input: NoInput) -> Result<Output, ToolError> {
        panic!("boom from the hostile plugin")
    }
}

/// Behaves, to show the plugin still works after another call failed.
struct Ok_;

impl Tool for Ok_ {
    const NAME: &'static str = "Ok";
    const DESCRIPTION: &'static str = "Returns `still alive`.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = NoInput;

    fn call(_ctx: &CallContext, _input: NoInput) -> Result<Output, ToolError> {
        Ok("still alive".into())
    }
}

/// Input of `Connect`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct ConnectInput {
    /// `host:port` to open a TCP connection to.
    addr: String,
}

/// Tries to open a raw TCP socket (`wasi:sockets`), bypassing the HTTP
/// allow-list; the host must refuse.
struct Connect;

impl Tool for Connect {
    const NAME: &'static str = "Connect";
    const DESCRIPTION: &'static str = "Opens a TCP connection and sends a line.";
    type Input = ConnectInput;

    fn call(_ctx: &CallContext, input: ConnectInput) -> Result<Output, ToolError> {
        use std::io::Write;
        let mut stream = std::net::TcpStream::connect(&input.addr).map_err(|err| {
            ToolError::permission_denied(format!("connect {}: {err}", input.addr))
        })?;
        stream
            .write_all(b"escaped\n")
            .map_err(|err| ToolError::failed(format!("write: {err}")))?;
        Ok("connected".into())
    }
}

struct Hostile;

impl Guest for Hostile {
    fn tools() -> Vec<ToolSpec> {
        raw::unique(vec![
            raw::spec::<Spin>(),
            raw::spec::<MemoryBomb>(),
            raw::spec::<Recurse>(),
            BadMetadata::spec(),
            raw::spec::<HugeOutput>(),
            raw::spec::<Panic>(),
            raw::spec::<Ok_>(),
            raw::spec::<Connect>(),
        ])
    }

    fn call(
        ctx: raw::CallContext,
        name: String,
        input: String,
    ) -> Result<ToolOutput, raw::ToolError> {
        match name.as_str() {
            Spin::NAME => raw::call::<Spin>(&ctx, &input),
            MemoryBomb::NAME => raw::call::<MemoryBomb>(&ctx, &input),
            Recurse::NAME => raw::call::<Recurse>(&ctx, &input),
            BadMetadata::NAME => Ok(BadMetadata::call()),
            HugeOutput::NAME => raw::call::<HugeOutput>(&ctx, &input),
            Panic::NAME => raw::call::<Panic>(&ctx, &input),
            Ok_::NAME => raw::call::<Ok_>(&ctx, &input),
            Connect::NAME => raw::call::<Connect>(&ctx, &input),
            _ => Err(raw::unknown_tool(
                &name,
                &[
                    "Spin",
                    "MemoryBomb",
                    "Recurse",
                    "BadMetadata",
                    "HugeOutput",
                    "Panic",
                    "Ok",
                    "Connect",
                ],
            )),
        }
    }
}

raw::export!(Hostile);
