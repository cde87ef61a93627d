//! What an evaluation found: a row per task and planner, and each
//! planner's totals.

use serde::Serialize;

/// One task run with one planner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The task's name.
    pub task: String,
    /// The planner (`none` for the plain loop).
    pub planner: String,
    /// Whether the task's check passed.
    pub passed: bool,
    /// The run's final status (`error` when it printed no result).
    pub status: String,
    /// Cycles the run used.
    pub cycles: u64,
    /// Model calls, planners' and plugins' own included.
    pub model_calls: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// What the run cost.
    pub cost_usd: f64,
    /// How long the run took.
    pub duration_ms: u64,
    /// Why the run failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Row {
    /// The row's numbers, from the run's `events` lines (`passed`
    /// false until the check says otherwise).
    pub fn tally(task: &str, planner: &str, lines: &[serde_json::Value]) -> Self {
        let count = |kind: &str| lines.iter().filter(|l| l["type"] == kind).count() as u64;
        let extra_candidates: u64 = lines
            .iter()
            .filter(|l| l["type"] == "planner")
            .filter_map(|l| l["candidates"].as_u64())
            .map(|n| n.saturating_sub(1))
            .sum();
        let result = lines
            .last()
            .filter(|l| l["type"] == "result")
            .cloned()
            .unwrap_or_default();
        Row {
            task: task.to_string(),
            planner: planner.to_string(),
            passed: false,
            status: result["status"].as_str().unwrap_or("error").to_string(),
            cycles: result["cycles_used"].as_u64().unwrap_or(0),
            model_calls: count("assistant") + count("plugin_completion") + extra_candidates,
            input_tokens: result["tokens_used"]["input"].as_u64().unwrap_or(0),
            output_tokens: result["tokens_used"]["output"].as_u64().unwrap_or(0),
            cost_usd: result["cost_usd"].as_f64().unwrap_or(0.0),
            duration_ms: result["duration_ms"].as_u64().unwrap_or(0),
            error: result["error_message"].as_str().map(str::to_string),
        }
    }
}

/// One planner's totals over its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The planner.
    pub planner: String,
    /// Tasks whose check passed.
    pub passed: usize,
    /// Tasks run.
    pub tasks: usize,
    /// Model calls.
    pub model_calls: u64,
    /// Input and output tokens.
    pub tokens: u64,
    /// What the runs cost.
    pub cost_usd: f64,
}

/// The totals of each of `planners`, in their order.
pub fn summaries(rows: &[Row], planners: &[String]) -> Vec<Summary> {
    planners
        .iter()
        .map(|planner| {
            let mine: Vec<&Row> = rows.iter().filter(|r| &r.planner == planner).collect();
            Summary {
                planner: planner.clone(),
                passed: mine.iter().filter(|r| r.passed).count(),
                tasks: mine.len(),
                model_calls: mine.iter().map(|r| r.model_calls).sum(),
                tokens: mine.iter().map(|r| r.input_tokens + r.output_tokens).sum(),
                cost_usd: mine.iter().map(|r| r.cost_usd).sum(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_counts_every_model_call_and_reads_the_result() {
        let lines = [
            json!({"type": "assistant"}),
            json!({"type": "planner", "candidates": 3}),
            json!({"type": "plugin_completion"}),
            json!({"type": "result", "status": "success", "cycles_used": 2,
                   "tokens_used": {"input": 10, "output": 4}, "cost_usd": 0.5,
                   "duration_ms": 7}),
        ];
        let row = Row::tally("t", "react", &lines);
        assert_eq!(row.model_calls, 4);
        assert_eq!((row.status.as_str(), row.cycles), ("success", 2));
        assert_eq!((row.input_tokens, row.output_tokens), (10, 4));
        assert_eq!(row.error, None);
        assert!(!row.passed);
        let cut = Row::tally("t", "none", &lines[..1]);
        assert_eq!((cut.status.as_str(), cut.model_calls), ("error", 1));
    }

    #[test]
    fn summaries_total_each_planner_in_order() {
        let row = |planner: &str, passed: bool| Row {
            passed,
            cost_usd: 0.25,
            input_tokens: 3,
            output_tokens: 1,
            model_calls: 2,
            ..Row::tally("t", planner, &[])
        };
        let rows = [row("a", true), row("b", false), row("a", false)];
        let sums = summaries(&rows, &["b".into(), "a".into()]);
        assert_eq!(sums[0].planner, "b");
        assert_eq!((sums[1].passed, sums[1].tasks), (1, 2));
        assert_eq!((sums[1].model_calls, sums[1].tokens), (4, 8));
        assert_eq!(sums[1].cost_usd, 0.5);
    }
}
