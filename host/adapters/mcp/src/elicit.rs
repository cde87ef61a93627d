//! A call that asks, put to the MCP client's user as an elicitation: a
//! form that says which tool, with what input and why, and takes a yes or
//! a no (with a word for the model).

use kaizen_protocol::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use rmcp::RoleServer;
use rmcp::model::{BooleanSchema, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};

/// The most input shown in the question, in bytes.
const MAX_INPUT_SHOWN: usize = 2000;

/// Asks through `peer`'s elicitation.
pub(crate) struct ElicitingApprover {
    peer: Peer<RoleServer>,
}

impl ElicitingApprover {
    /// An approver for `peer`, when its client can show a form.
    pub fn for_peer(peer: &Peer<RoleServer>) -> Option<Self> {
        peer.supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
            .then(|| Self { peer: peer.clone() })
    }
}

/// The question for `request`.
fn question(request: &ApprovalRequest) -> String {
    let mut input = request.input.to_string();
    if input.len() > MAX_INPUT_SHOWN {
        let cut = input.floor_char_boundary(MAX_INPUT_SHOWN);
        input.truncate(cut);
        input.push_str(" …");
    }
    let level = match request.danger {
        Some(danger) => format!(" (danger level {danger})"),
        None => String::new(),
    };
    format!(
        "Kaizen needs your permission to run {}{level} with {input}\nWhy it asks: {}",
        request.tool, request.reason
    )
}

fn schema() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool_with("allow", |b: BooleanSchema| {
            b.title("Allow this call").with_default(false)
        })
        .optional_string("note")
        .build_unchecked()
}

impl Approver for ElicitingApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: question(request),
                requested_schema: schema(),
            };
            let answer = match self.peer.create_elicitation(params).await {
                Ok(answer) => answer,
                Err(err) => {
                    return Approval::Deny(format!(
                        "the MCP client could not ask its user ({err})"
                    ));
                }
            };
            let note = |content: &Option<serde_json::Value>| {
                content
                    .as_ref()
                    .and_then(|c| c["note"].as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            match answer.action {
                ElicitationAction::Accept
                    if answer.content.as_ref().is_some_and(|c| c["allow"] == true) =>
                {
                    Approval::Once
                }
                ElicitationAction::Accept => Approval::Deny(note(&answer.content)),
                _ => Approval::Deny("the user declined".into()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_names_the_tool_the_input_and_the_reason() {
        let request = ApprovalRequest {
            tool: "Bash".into(),
            input: serde_json::json!({"command": "x".repeat(5000)}),
            reason: "Bash can reach the network".into(),
            always_rule: "Bash(x)".into(),
            danger: None,
            agent: None,
            call_id: String::new(),
        };
        let text = question(&request);
        assert!(text.starts_with("Kaizen needs your permission to run Bash with {"));
        assert!(
            text.ends_with("…\nWhy it asks: Bash can reach the network"),
            "{text}"
        );
        assert!(text.len() < 2200);
        let schema = serde_json::to_value(schema()).unwrap();
        assert_eq!(schema["required"], serde_json::json!(["allow"]));
        assert_eq!(schema["properties"]["allow"]["type"], "boolean");
    }
}
