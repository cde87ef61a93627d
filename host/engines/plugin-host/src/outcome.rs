//! Turning what a component returned, or how it failed, into the tool
//! results and errors the loop understands, with messages a model (and the
//! person reading the log) can act on.

use crate::bindings::{guest_tools, types};
use crate::state::PluginState;
use kaizen_tools::{ContentPart, ToolError, ToolErrorKind, ToolOutput};
use wasmtime::Trap;

/// Lines of the plugin's stderr quoted in a crash report.
const STDERR_TAIL_LINES: usize = 8;

/// Converts a successful component result, checking its metadata JSON.
pub(crate) fn convert_output(
    plugin: &str,
    tool: &str,
    output: guest_tools::ToolOutput,
) -> Result<ToolOutput, ToolError> {
    let metadata = match output.metadata {
        None => None,
        Some(text) => Some(serde_json::from_str(&text).map_err(|err| {
            ToolError::new(
                ToolErrorKind::Crashed,
                format!(
                    "{tool} (plugin `{plugin}`) returned metadata that is not valid JSON ({err}); the result was discarded. This is a bug in the plugin; report it to its author."
                ),
            )
        })?),
    };
    let content = output
        .content
        .into_iter()
        .map(|part| match part {
            types::ContentPart::Text(text) => ContentPart::Text { text },
            types::ContentPart::Image(image) => ContentPart::Image {
                media_type: image.media_type,
                data: image.data,
            },
        })
        .collect();
    Ok(ToolOutput { content, metadata })
}

/// Converts an error the tool reported itself; HTTP refusals made during
/// the call are added, since the guest only saw an error code.
pub(crate) fn convert_error(error: guest_tools::ToolError, refusals: &[String]) -> ToolError {
    let kind = match error.kind {
        guest_tools::ErrorKind::InvalidInput => ToolErrorKind::InvalidInput,
        guest_tools::ErrorKind::NotFound => ToolErrorKind::NotFound,
        guest_tools::ErrorKind::PermissionDenied => ToolErrorKind::PermissionDenied,
        guest_tools::ErrorKind::Conflict => ToolErrorKind::Conflict,
        guest_tools::ErrorKind::Timeout => ToolErrorKind::Timeout,
        guest_tools::ErrorKind::Failed => ToolErrorKind::Failed,
    };
    let mut message = error.message;
    for refusal in refusals {
        message.push_str("\nHost: ");
        message.push_str(refusal);
    }
    ToolError::new(kind, message)
}

/// Explains a trap or host error that ended `what` (a tool name or a
/// phase such as `instantiation`).
pub(crate) fn describe_trap(
    plugin: &str,
    what: &str,
    err: &wasmtime::Error,
    state: &PluginState,
) -> ToolError {
    let trap = err.downcast_ref::<Trap>().copied();
    if state.clock.exceeded || trap == Some(Trap::Interrupt) {
        return ToolError::new(
            ToolErrorKind::ResourceLimit,
            format!(
                "{what} (plugin `{plugin}`) ran past its time limit of {} and was stopped. Try a smaller request; if the work is legitimately long, the operator can raise limits.cpu-seconds.",
                humanize(state.clock.limit())
            ),
        );
    }
    if let Some(asked) = state.limiter.refused {
        return ToolError::new(
            ToolErrorKind::ResourceLimit,
            format!(
                "{what} (plugin `{plugin}`) ran out of memory: it tried to grow to {} MiB, over its limit of {} MiB, and was stopped. Try a smaller request; the operator can raise limits.memory-mib.",
                asked >> 20,
                state.limiter.max_bytes() >> 20
            ),
        );
    }
    let reason = match trap {
        Some(Trap::StackOverflow) => "overflowed its call stack (runaway recursion)".to_string(),
        Some(Trap::UnreachableCodeReached) => "crashed (it panicked or aborted)".to_string(),
        // Rust and C keep large frames on a stack in linear memory; running
        // off its end is an out-of-bounds access, not a wasm stack overflow.
        Some(Trap::MemoryOutOfBounds) => "crashed with an out-of-bounds memory access (usually a stack overflow from runaway recursion, else a memory-safety bug in the plugin)".to_string(),
        Some(other) => format!("crashed: {other}"),
        None => format!("failed in the host: {err:#}"),
    };
    let stderr = stderr_tail(state);
    let mut message = format!("{what} (plugin `{plugin}`) {reason}.");
    if !stderr.is_empty() {
        message.push_str(" Its last output:\n");
        message.push_str(&stderr);
    }
    message.push_str("\nThe instance was discarded; the next call starts a fresh one.");
    ToolError::new(ToolErrorKind::Crashed, message)
}

fn stderr_tail(state: &PluginState) -> String {
    let text = state.stderr.text();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(STDERR_TAIL_LINES);
    lines[start..].join("\n")
}

fn humanize(duration: std::time::Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs >= 1.0 {
        format!("{secs:.0} s")
    } else {
        format!("{} ms", duration.as_millis())
    }
}
