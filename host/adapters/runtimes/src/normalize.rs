//! What every external runtime's event stream is turned into: Kaizen's
//! events as they come, and at the end Kaizen's result object.

use kaizen_llm::{PriceTable, Usage};
use kaizen_protocol::{Event, PermissionDenial, RunResult, Status, TokensUsed, ToolCallRecord};
use serde_json::Value;
use std::time::Duration;

/// Reads one runtime's output lines.
pub(crate) trait StreamParser: Send {
    /// Takes one parsed line of the runtime's stdout, adding to `run` and
    /// reporting events to `emit`.
    fn line(&mut self, line: &Value, run: &mut RunSoFar, emit: &mut dyn FnMut(Event));
}

/// What a run has shown so far.
#[derive(Debug, Default)]
pub(crate) struct RunSoFar {
    /// The runtime's session (or thread) id.
    pub session_id: String,
    /// The model that answered, when said.
    pub model: String,
    /// The directory it works in.
    pub cwd: String,
    /// Model calls made.
    pub cycles: u32,
    /// Tokens, as reported.
    pub usage: Usage,
    /// The cost the runtime reported, if it does.
    pub reported_cost: Option<f64>,
    /// The last assistant text: the answer when the run completes.
    pub output: String,
    /// Tool calls, in the order they started.
    pub tool_calls: Vec<ToolCallRecord>,
    /// When each call's start was seen, by id: its duration is measured
    /// from there to its result (the streams carry no timing).
    started: std::collections::HashMap<String, std::time::Instant>,
    /// Calls refused by the runtime's permissions.
    pub denials: Vec<PermissionDenial>,
    /// The runtime's own verdict on how the run ended, when it gives one.
    pub ended: Option<(Status, Option<String>)>,
}

impl RunSoFar {
    /// A run on `model` in `cwd` that has shown nothing yet.
    pub fn new(model: &str, cwd: String) -> Self {
        Self {
            model: model.to_string(),
            cwd,
            ..Self::default()
        }
    }

    /// Records a tool call's start and reports it.
    pub fn call_started(
        &mut self,
        id: &str,
        name: &str,
        arguments: Value,
        emit: &mut dyn FnMut(Event),
    ) {
        emit(Event::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.clone(),
        });
        self.started
            .insert(id.to_string(), std::time::Instant::now());
        self.tool_calls.push(ToolCallRecord {
            id: id.to_string(),
            name: name.to_string(),
            arguments,
            status: "running".to_string(),
            duration_ms: 0,
            error: None,
        });
    }

    /// Records a tool call's end and reports it. A result for a call that
    /// was never started is recorded as its own call.
    pub fn call_ended(
        &mut self,
        id: &str,
        failed: bool,
        output: &str,
        emit: &mut dyn FnMut(Event),
    ) {
        let index = match self.tool_calls.iter().rposition(|call| call.id == id) {
            Some(index) => index,
            None => {
                self.call_started(id, "unknown", Value::Null, &mut |_| {});
                self.tool_calls.len() - 1
            }
        };
        let took = self
            .started
            .remove(id)
            .map_or(0, |started| millis(started.elapsed()));
        let call = &mut self.tool_calls[index];
        call.status = if failed { "error" } else { "success" }.to_string();
        call.error = failed.then(|| first_line(output));
        call.duration_ms = took;
        emit(Event::ToolResult {
            id: id.to_string(),
            name: call.name.clone(),
            status: call.status.clone(),
            duration_ms: took,
            output: output.to_string(),
        });
    }

    /// Records assistant text: shown as it is, and the answer so far.
    pub fn said(&mut self, text: &str, emit: &mut dyn FnMut(Event)) {
        if text.is_empty() {
            return;
        }
        emit(Event::TextDelta {
            text: text.to_string(),
        });
        emit(Event::Assistant {
            cycle: self.cycles.max(1),
            model: self.model.clone(),
            text: text.to_string(),
        });
        self.output = text.to_string();
    }

    /// The cost so far: reported, or estimated from the tokens (`None` when
    /// the model's price is unknown).
    pub fn cost(&self, prices: &PriceTable) -> (Option<f64>, bool) {
        match self.reported_cost {
            Some(cost) => (Some(cost), false),
            None => (prices.cost(&self.model, &self.usage), true),
        }
    }

    /// Kaizen's result for this run.
    pub fn result(
        self,
        runtime: &str,
        status: Status,
        error_message: Option<String>,
        duration: Duration,
        prices: &PriceTable,
    ) -> RunResult {
        let (cost, estimated) = self.cost(prices);
        let input = self.usage.total_input();
        let output = self.usage.output_tokens;
        let mut tool_calls = self.tool_calls;
        for call in &mut tool_calls {
            // A call the runtime never finished was cut short by the stop.
            if call.status == "running" {
                call.status = "error".to_string();
                call.error = Some("the run stopped before this call ended".to_string());
                if let Some(started) = self.started.get(&call.id) {
                    call.duration_ms = millis(started.elapsed());
                }
            }
        }
        RunResult {
            output: self.output,
            status,
            cycles_used: self.cycles,
            tokens_used: TokensUsed {
                input,
                output,
                total: input + output,
            },
            cost_usd: cost.unwrap_or(0.0),
            duration_ms: millis(duration),
            session_id: self.session_id,
            model_used: self.model,
            runtime_name: runtime.to_string(),
            tool_calls,
            error_message,
            permission_denials: self.denials,
            compactions: 0,
            cost_estimated: estimated,
            runtime_selection: None,
        }
    }
}

/// `duration` in whole milliseconds.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The first line of `text`, at most 200 characters.
pub(crate) fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect()
}

/// `value[key]` as text, or empty.
pub(crate) fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// `value` at `pointer` as a count, or 0.
pub(crate) fn count(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Counts model calls in a stream that shows only what the model did:
/// the first action is the first call, and the first action after tool
/// results is the next.
#[derive(Debug, Default)]
pub(crate) struct CycleCounter {
    after_results: bool,
}

impl CycleCounter {
    /// The model said something or called a tool.
    pub fn model_acted(&mut self, run: &mut RunSoFar) {
        if run.cycles == 0 || self.after_results {
            run.cycles += 1;
            self.after_results = false;
        }
    }

    /// Tool results went back to the model.
    pub fn results_came(&mut self) {
        self.after_results = true;
    }
}

/// Feeds `text`, a runtime's output, line by line to `parser`: what the
/// run shows and the events it reported.
#[cfg(test)]
pub(crate) fn replay(parser: &mut dyn StreamParser, text: &str) -> (RunSoFar, Vec<Event>) {
    let mut run = RunSoFar::default();
    let mut events = Vec::new();
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).expect("a JSON line");
        parser.line(&value, &mut run, &mut |event| events.push(event));
    }
    (run, events)
}

/// The `type` of each event, as stream-json names it.
#[cfg(test)]
pub(crate) fn kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|event| {
            serde_json::to_value(event).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}
