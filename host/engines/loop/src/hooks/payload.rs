//! The fields every hook payload carries, by Claude Code's names.

use kaizen_hooks::HookEvent;
use kaizen_protocol::PermissionMode;
use serde_json::{Map, Value};

/// What the loop knows of the session for every payload.
#[derive(Debug, Clone)]
pub(crate) struct PayloadBase {
    pub session_id: String,
    pub transcript_path: Option<String>,
    pub cwd: String,
    pub permission_mode: &'static str,
    /// Set in a sub-agent's run: its id and type.
    pub agent: Option<(String, String)>,
    /// A sub-agent type's own permission mode: its calls are judged under
    /// the stricter of it and the session's.
    pub mode_limit: Option<PermissionMode>,
}

impl PayloadBase {
    /// The payload of `event`: the common fields, then `fields` (an
    /// object; its keys win).
    pub fn payload(&self, event: HookEvent, fields: Value) -> Value {
        let mut object = Map::new();
        object.insert("session_id".into(), self.session_id.clone().into());
        object.insert(
            "transcript_path".into(),
            self.transcript_path
                .clone()
                .map_or(Value::Null, Value::String),
        );
        object.insert("cwd".into(), self.cwd.clone().into());
        object.insert("permission_mode".into(), self.permission_mode.into());
        object.insert("hook_event_name".into(), event.name().into());
        if let Some((id, kind)) = &self.agent {
            object.insert("agent_id".into(), id.clone().into());
            object.insert("agent_type".into(), kind.clone().into());
        }
        if let Value::Object(fields) = fields {
            object.extend(fields);
        }
        Value::Object(object)
    }
}
