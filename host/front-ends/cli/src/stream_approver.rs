//! Asking the program that drives the session about tool calls, as
//! Claude Code asks its Agent SDKs: a `can_use_tool` control request over
//! the program's [`Channel`], its answer allowing (once, always, or with
//! an input of the program's) or refusing the call.

use crate::stream_control::Channel;
use kaizen_protocol::{Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken};
use serde_json::{Value, json};

/// The program's answer to a `can_use_tool` question.
#[derive(Debug, PartialEq)]
pub struct Answer {
    /// Allowed (once or always) or refused.
    pub approval: Approval,
    /// The input to run instead (`updatedInput`), when one was given.
    pub updated_input: Option<Value>,
    /// Whether the refusal also interrupts the run (`interrupt: true`).
    pub interrupt: bool,
}

/// Reads the answer to a `can_use_tool` question from its
/// `control_response`'s `response`.
pub fn read_answer(response: &Value) -> Result<Answer, String> {
    let answer = &response["response"];
    let approval = match (response["subtype"].as_str(), answer["behavior"].as_str()) {
        (Some("error"), _) => Approval::Deny(
            response["error"]
                .as_str()
                .unwrap_or("the embedder could not answer")
                .to_string(),
        ),
        (_, Some("allow")) => match answer["updatedPermissions"].as_array() {
            Some(rules) if !rules.is_empty() => Approval::Always,
            _ => Approval::Once,
        },
        (_, Some("deny")) => {
            Approval::Deny(answer["message"].as_str().unwrap_or_default().to_string())
        }
        _ => {
            return Err(
                "a control_response answers with response.behavior `allow` or `deny`".into(),
            );
        }
    };
    Ok(Answer {
        updated_input: match &approval {
            Approval::Once | Approval::Always => answer.get("updatedInput").cloned(),
            _ => None,
        },
        interrupt: answer["interrupt"] == true,
        approval,
    })
}

/// Asks the embedding program about tool calls, over its channel; a
/// refusal that says `interrupt` interrupts the run.
pub struct StreamApprover {
    channel: Channel,
    interrupt: CancellationToken,
}

impl StreamApprover {
    /// An approver asking over `channel`, interrupting through `interrupt`.
    pub fn new(channel: Channel, interrupt: CancellationToken) -> Self {
        Self { channel, interrupt }
    }
}

impl Approver for StreamApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let response = match self.channel.request(can_use_tool(request)).await {
                Ok(response) => response,
                Err(why) => return Approval::Deny(why),
            };
            let answer = match read_answer(&response) {
                Ok(answer) => answer,
                Err(why) => {
                    return Approval::Deny(format!("the program's answer is unreadable: {why}"));
                }
            };
            if answer.interrupt {
                self.interrupt.cancel();
            }
            edited(answer, &request.input)
        })
    }
}

/// The approval an answer gives: an input the program changed is the one
/// that runs.
fn edited(answer: Answer, asked: &Value) -> Approval {
    match answer.updated_input {
        Some(input) if &input != asked => Approval::Edited(input),
        _ => answer.approval,
    }
}

/// The `can_use_tool` request, with Claude Code's fields (and Kaizen's
/// own beside them: the reason, the rule "always" adds, the sub-agent).
fn can_use_tool(request: &ApprovalRequest) -> Value {
    let (tool, content) = match request.always_rule.split_once('(') {
        Some((tool, rest)) => (tool, rest.strip_suffix(')').map(str::to_string)),
        None => (request.always_rule.as_str(), None),
    };
    json!({
        "subtype": "can_use_tool",
        "tool_name": request.tool,
        "input": request.input,
        "tool_use_id": request.call_id,
        "decision_reason": request.reason,
        "permission_suggestions": [{
            "type": "addRules",
            "rules": [{"toolName": tool, "ruleContent": content}],
            "behavior": "allow",
            "destination": "session",
        }],
        "agent_id": request.agent,
        "reason": request.reason,
        "always_rule": request.always_rule,
        "agent": request.agent,
        "danger": request.danger,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_sdk_writes_them() {
        let answer = |response: Value| read_answer(&response);
        let allowed = answer(json!({"subtype": "success", "request_id": "k1",
            "response": {"behavior": "allow", "updatedInput": {"command": "ls"}}}))
        .unwrap();
        assert_eq!(allowed.approval, Approval::Once);
        assert_eq!(allowed.updated_input, Some(json!({"command": "ls"})));
        let always = answer(json!({"subtype": "success", "request_id": "k2",
            "response": {"behavior": "allow", "updatedPermissions": [{"type": "addRules"}]}}))
        .unwrap();
        assert_eq!(always.approval, Approval::Always);
        let denied = answer(json!({"subtype": "success", "request_id": "k3",
            "response": {"behavior": "deny", "message": "Use git.", "interrupt": true}}))
        .unwrap();
        assert_eq!(denied.approval, Approval::Deny("Use git.".into()));
        assert!(denied.interrupt && denied.updated_input.is_none());
        let failed =
            answer(json!({"subtype": "error", "request_id": "k4", "error": "callback raised"}))
                .unwrap();
        assert_eq!(failed.approval, Approval::Deny("callback raised".into()));
        assert!(answer(json!({"subtype": "success", "request_id": "k5", "response": {}})).is_err());
    }

    #[test]
    fn an_unchanged_input_is_a_plain_approval_and_a_changed_one_an_edit() {
        let answer = |approval, input: Value| Answer {
            approval,
            updated_input: Some(input),
            interrupt: false,
        };
        let asked = json!({"command": "ls"});
        assert_eq!(
            edited(answer(Approval::Once, json!({"command": "ls"})), &asked),
            Approval::Once
        );
        assert_eq!(
            edited(answer(Approval::Always, json!({"command": "ls x"})), &asked),
            Approval::Edited(json!({"command": "ls x"}))
        );
    }

    #[test]
    fn questions_carry_claude_codes_fields() {
        let request = ApprovalRequest {
            tool: "Bash".into(),
            input: json!({"command": "npm test"}),
            reason: "it asks".into(),
            always_rule: "Bash(npm test)".into(),
            danger: None,
            agent: None,
            call_id: "call_1".into(),
        };
        let asked = can_use_tool(&request);
        assert_eq!(asked["tool_use_id"], "call_1");
        assert_eq!(
            asked["permission_suggestions"][0]["rules"][0],
            json!({"toolName": "Bash", "ruleContent": "npm test"})
        );
        let bare = ApprovalRequest {
            always_rule: "WebFetch".into(),
            ..request
        };
        assert_eq!(
            can_use_tool(&bare)["permission_suggestions"][0]["rules"][0],
            json!({"toolName": "WebFetch", "ruleContent": null})
        );
    }
}
