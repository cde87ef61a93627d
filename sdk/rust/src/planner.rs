//! Planner plugins: a component that shapes each THINK step of a run. It
//! never ends a run (the loop does, when a response has no tool calls); it
//! may add to the system prompt for the coming call, add user messages,
//! set the todo list, ask for several candidate responses and pick one,
//! and ask for a bounded revision of a final answer.
//!
//! ```no_run
//! use kaizen_sdk::planner::{Context, Plan, Planner, Verdict};
//! use kaizen_sdk::export_planner;
//!
//! struct StayFocused;
//!
//! impl Planner for StayFocused {
//!     fn plan(ctx: Context) -> Plan {
//!         Plan::default().with_system(format!("Remember the task: {}", ctx.task))
//!     }
//! }
//!
//! export_planner!(StayFocused);
//! ```
//!
//! The manifest says `kinds = ["planner"]`; a planner that asks the model
//! (through [`crate::llm`]) also requests `llm = true`. The host keeps one
//! instance per run, so a planner may keep its state in `static`s.

use crate::planner_bindings::exports::kaizen::plugin::planning as wit;

/// What the planner sees before a model call.
#[derive(Debug, Clone)]
pub struct Context {
    /// The session's id.
    pub session_id: String,
    /// 1-based number of the coming model call.
    pub cycle: u32,
    /// The run's task: its first user message.
    pub task: String,
    /// The conversation so far (a JSON array of messages; `Null` if the
    /// host sent something that does not parse).
    pub transcript: serde_json::Value,
    /// The tools the model may call.
    pub tools: Vec<String>,
    /// The planner's settings from the operator's config (a JSON object).
    pub settings: serde_json::Value,
}

impl Context {
    #[doc(hidden)]
    pub fn from_wit(ctx: wit::ThinkContext) -> Self {
        let parse = |text: &str| serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
        Self {
            session_id: ctx.session_id,
            cycle: ctx.cycle,
            task: ctx.task,
            transcript: parse(&ctx.transcript),
            tools: ctx.tools,
            settings: parse(&ctx.settings),
        }
    }

    /// The messages of the transcript, oldest first.
    pub fn messages(&self) -> &[serde_json::Value] {
        self.transcript.as_array().map_or(&[], Vec::as_slice)
    }

    /// Setting `key` as a number, or `default`.
    pub fn setting_u64(&self, key: &str, default: u64) -> u64 {
        self.settings[key].as_u64().unwrap_or(default)
    }
}

/// How to run the coming model call; the default changes nothing.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    system_additions: Vec<String>,
    injected: Vec<String>,
    candidates: u32,
    todos: Option<serde_json::Value>,
}

impl Plan {
    /// Adds text to the system prompt of the coming call only.
    pub fn with_system(mut self, text: impl Into<String>) -> Self {
        self.system_additions.push(text.into());
        self
    }

    /// Adds a user message to the conversation (it stays).
    pub fn with_message(mut self, text: impl Into<String>) -> Self {
        self.injected.push(text.into());
        self
    }

    /// Asks for `n` candidate responses, of which [`Planner::select`]
    /// picks one.
    pub fn with_candidates(mut self, n: u32) -> Self {
        self.candidates = n;
        self
    }

    /// Sets the session's todo list (items `{"content", "status",
    /// "activeForm"}`, as `TodoWrite` takes them).
    pub fn with_todos(mut self, todos: serde_json::Value) -> Self {
        self.todos = Some(todos);
        self
    }

    #[doc(hidden)]
    pub fn into_wit(self) -> wit::ThinkPlan {
        wit::ThinkPlan {
            system_additions: self.system_additions,
            injected: self.injected,
            candidates: self.candidates,
            todos: self.todos.map(|todos| todos.to_string()),
        }
    }
}

pub use wit::Verdict;

/// A planning strategy. Only [`Planner::plan`] is required: by default a
/// planner takes the first candidate and accepts every answer.
pub trait Planner {
    /// Before each model call.
    fn plan(ctx: Context) -> Plan;

    /// Picks one of `candidates` (JSON assistant messages); its index.
    fn select(_ctx: Context, _candidates: Vec<serde_json::Value>) -> u32 {
        0
    }

    /// On a response without tool calls.
    fn verify(_ctx: Context, _answer: String) -> Verdict {
        Verdict::Accept
    }
}

/// The text blocks of a JSON message, joined.
pub fn message_text(message: &serde_json::Value) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[doc(hidden)]
pub use wit::{Guest, ThinkContext as WitContext, ThinkPlan as WitPlan};

/// Exports a [`Planner`] type as the component's `planning` interface:
/// `export_planner!(MyPlanner);`, once per plugin.
#[macro_export]
macro_rules! export_planner {
    ($planner:ty) => {
        const _: () = {
            struct KaizenSdkPlanner;

            impl $crate::planner::Guest for KaizenSdkPlanner {
                fn plan(ctx: $crate::planner::WitContext) -> $crate::planner::WitPlan {
                    let ctx = $crate::planner::Context::from_wit(ctx);
                    <$planner as $crate::planner::Planner>::plan(ctx).into_wit()
                }

                fn select(
                    ctx: $crate::planner::WitContext,
                    candidates: ::std::vec::Vec<::std::string::String>,
                ) -> u32 {
                    let ctx = $crate::planner::Context::from_wit(ctx);
                    let candidates = candidates
                        .iter()
                        .map(|text| {
                            $crate::serde_json::from_str(text)
                                .unwrap_or($crate::serde_json::Value::Null)
                        })
                        .collect();
                    <$planner as $crate::planner::Planner>::select(ctx, candidates)
                }

                fn verify(
                    ctx: $crate::planner::WitContext,
                    answer: ::std::string::String,
                ) -> $crate::planner::Verdict {
                    let ctx = $crate::planner::Context::from_wit(ctx);
                    <$planner as $crate::planner::Planner>::verify(ctx, answer)
                }
            }

            $crate::planner_bindings::export_planner_bindings!(KaizenSdkPlanner with_types_in $crate::planner_bindings);
        };
    };
}
