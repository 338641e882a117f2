//! Approvals as MCP elicitation (spec 13 §Approval): each approval event of the session
//! becomes `elicitation/create {mode: "form", message, requestedSchema}` whose one field,
//! `decision`, is an enum of the call's available decisions. `accept` with an offered
//! decision → that decision; `accept` without one, `decline`, an error answer or an answer
//! that does not parse → denied; `cancel` → abort (the turn's other approvals end too). A
//! client that never answers keeps the call waiting; `notifications/cancelled` ends it.

use std::collections::HashMap;
use std::sync::Weak;

use airlock_approval::ApplyPatchApprovalRequestEvent;
use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::ExecApprovalRequestEvent;
use airlock_jsonrpc::ClientReply;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::PendingRequests;
use airlock_jsonrpc::RequestId;
use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::ReviewDecision;
use serde_json::Value;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

/// The suffix the orchestrator gives the approval id of a patch retry (the patch event has no
/// approval id of its own).
const RETRY_SUFFIX: &str = ":retry";

/// One choice of the `decision` enum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The enum value (`approve`, `approve_for_session`, `save_rule`, `allow_host`,
    /// `deny_host`, `deny`).
    pub value: &'static str,
    /// What a person reads.
    pub title: String,
    /// The decision it stands for.
    pub decision: ReviewDecision,
}

/// The choices for `offered`, in its order; `abort` is not a choice (it is the form's
/// `cancel`).
#[must_use]
pub fn choices(offered: &[ReviewDecision]) -> Vec<Choice> {
    offered
        .iter()
        .filter_map(|decision| {
            let (value, title) = match decision {
                ReviewDecision::Approved => ("approve", "Approve once".to_owned()),
                ReviewDecision::ApprovedForSession => (
                    "approve_for_session",
                    "Approve for the rest of this session".to_owned(),
                ),
                ReviewDecision::ApprovedExecpolicyAmendment {
                    proposed_execpolicy_amendment,
                } => (
                    "save_rule",
                    format!(
                        "Approve and save the rule: always allow commands starting with `{}`",
                        proposed_execpolicy_amendment.command.join(" ")
                    ),
                ),
                ReviewDecision::NetworkPolicyAmendment {
                    network_policy_amendment,
                } => match network_policy_amendment.action {
                    NetworkPolicyRuleAction::Allow => (
                        "allow_host",
                        format!("Always allow the host {}", network_policy_amendment.host),
                    ),
                    NetworkPolicyRuleAction::Deny => (
                        "deny_host",
                        format!("Always deny the host {}", network_policy_amendment.host),
                    ),
                },
                ReviewDecision::Denied { .. } => ("deny", "Deny".to_owned()),
                ReviewDecision::Abort
                | ReviewDecision::TimedOut
                | ReviewDecision::ApprovedMcpPolicyAmendment => return None,
            };
            Some(Choice {
                value,
                title,
                decision: decision.clone(),
            })
        })
        .collect()
}

/// The `requestedSchema`: one required string enum `decision`. 2025-06-18 spells titles with
/// `enumNames`; 2025-11-25 with `oneOf` `const`/`title`.
#[must_use]
pub fn requested_schema(choices: &[Choice], protocol_version: &str) -> Value {
    let values: Vec<&str> = choices.iter().map(|choice| choice.value).collect();
    let mut decision = json!({
        "type": "string",
        "title": "Decision",
        "description": "What Airlock should do with this call.",
    });
    if protocol_version == "2025-06-18" {
        decision["enum"] = json!(values);
        decision["enumNames"] = json!(choices.iter().map(|c| c.title.as_str()).collect::<Vec<_>>());
    } else {
        decision["oneOf"] = choices
            .iter()
            .map(|choice| json!({"const": choice.value, "title": choice.title}))
            .collect();
    }
    json!({
        "type": "object",
        "properties": {"decision": decision},
        "required": ["decision"],
    })
}

/// The decision an elicitation answer stands for (fail closed, see the module doc).
#[must_use]
pub fn decision_from_reply(
    reply: Result<ClientReply, airlock_jsonrpc::Disconnected>,
    choices: &[Choice],
) -> ReviewDecision {
    let result = match reply {
        Err(_) => return ReviewDecision::Abort,
        Ok(ClientReply::Error(error)) => {
            return ReviewDecision::denied_with_reason(format!(
                "the MCP client could not ask for approval: {} ({})",
                error.message, error.code
            ));
        }
        Ok(ClientReply::Result(result)) => result,
    };
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let picked = result.pointer("/content/decision").and_then(Value::as_str);
            match choices.iter().find(|choice| Some(choice.value) == picked) {
                Some(choice) => choice.decision.clone(),
                None => ReviewDecision::denied_with_reason(format!(
                    "the approval form was accepted without an offered decision (got {}); treated as denied",
                    picked.map_or_else(|| "none".to_owned(), |p| format!("`{p}`"))
                )),
            }
        }
        Some("decline") => ReviewDecision::denied_with_reason("declined by the user"),
        Some("cancel") => ReviewDecision::Abort,
        _ => ReviewDecision::denied_with_reason(
            "the MCP client's elicitation answer has no valid `action`; treated as denied",
        ),
    }
}

fn exec_message(request: &ExecApprovalRequestEvent, justification: Option<&str>) -> String {
    let command = shell_words(&request.command);
    let mut message = String::new();
    if let Some(reason) = &request.reason {
        message.push_str(reason);
        message.push_str("\n\n");
    }
    if let Some(justification) = justification.filter(|j| request.reason.as_deref() != Some(*j)) {
        message.push_str(&format!("The agent says: {justification}\n\n"));
    }
    message.push_str(&format!(
        "Allow Airlock to run `{command}` in `{}`?",
        request.cwd.display()
    ));
    if let Some(context) = &request.network_approval_context {
        message.push_str(&format!("\nIt wants to reach {}.", context.host));
    }
    message
}

fn patch_message(request: &ApplyPatchApprovalRequestEvent) -> String {
    let mut message = String::new();
    if let Some(reason) = &request.reason {
        message.push_str(reason);
        message.push_str("\n\n");
    }
    message.push_str("Allow Airlock to apply these changes?");
    for (path, change) in &request.changes {
        let kind = serde_json::to_value(change)
            .ok()
            .and_then(|value| value.get("type").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| "change".to_owned());
        message.push_str(&format!("\n  {kind}: {}", path.display()));
    }
    message
}

fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|word| {
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where approval answers go and how to ask.
#[derive(Clone)]
pub struct Asker {
    /// The session's approval layer (weak: the connection owns the session).
    pub approvals: Weak<ApprovalSession>,
    /// Outgoing messages.
    pub sink: MessageSink,
    /// Server-to-client requests.
    pub pending: PendingRequests,
    /// The negotiated protocol version (schema spelling).
    pub protocol_version: String,
    /// The running calls (justifications; who is being asked).
    pub calls: crate::running::RunningCalls,
}

/// Sends `notifications/cancelled` for an elicitation whose call ended before the client
/// answered (dropped with the asking task).
struct WithdrawOnDrop {
    sink: MessageSink,
    id: Option<RequestId>,
}

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = self.sink.send(Message::notification(
                "notifications/cancelled",
                Some(json!({"requestId": id, "reason": "the tool call ended before the approval was answered"})),
            ));
        }
    }
}

impl Asker {
    async fn ask(&self, message: String, offered: &[ReviewDecision]) -> ReviewDecision {
        let choices = choices(offered);
        let params = json!({
            "mode": "form",
            "message": message,
            "requestedSchema": requested_schema(&choices, &self.protocol_version),
        });
        let Ok(reply) = self
            .pending
            .send_request(&self.sink, "elicitation/create", params)
        else {
            return ReviewDecision::Abort;
        };
        let mut guard = WithdrawOnDrop {
            sink: self.sink.clone(),
            id: Some(reply.id().clone()),
        };
        let answer = reply.wait().await;
        guard.id = None;
        decision_from_reply(answer, &choices)
    }

    async fn answer_exec(self, request: ExecApprovalRequestEvent) {
        let justification = self
            .calls
            .borrow()
            .get(&request.call_id)
            .and_then(|call| call.justification.clone());
        let message = exec_message(&request, justification.as_deref());
        let asking = crate::running::Asking::start(&self.calls, &request.call_id);
        let decision = self.ask(message, &request.decisions()).await;
        drop(asking);
        if let Some(approvals) = self.approvals.upgrade() {
            approvals
                .submit_exec_approval(
                    request.effective_approval_id(),
                    Some(&request.turn_id),
                    decision,
                )
                .await;
        }
    }

    async fn answer_patch(self, request: ApplyPatchApprovalRequestEvent, id: String) {
        let decision = self
            .ask(
                patch_message(&request),
                &airlock_approval::patch_decisions(),
            )
            .await;
        if let Some(approvals) = self.approvals.upgrade() {
            approvals.submit_patch_approval(&id, decision).await;
        }
    }
}

/// Answers the session's approval events until the channel closes (the session ended). Each
/// question runs as its own local task, so several calls can wait at once; a question whose
/// request was resolved elsewhere (the call was cancelled) is withdrawn.
pub async fn serve_approvals(asker: Asker, mut events: UnboundedReceiver<ApprovalEvent>) {
    let mut asking: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    while let Some(event) = events.recv().await {
        asking.retain(|_, task| !task.is_finished());
        match event {
            ApprovalEvent::ExecApprovalRequest(request) => {
                let id = request.effective_approval_id().to_owned();
                let task = tokio::task::spawn_local(asker.clone().answer_exec(*request));
                if let Some(old) = asking.insert(id, task) {
                    old.abort();
                }
            }
            ApprovalEvent::ApplyPatchApprovalRequest(request) => {
                let id = if request.reason.is_some() {
                    format!("{}{RETRY_SUFFIX}", request.call_id)
                } else {
                    request.call_id.clone()
                };
                let task =
                    tokio::task::spawn_local(asker.clone().answer_patch(request, id.clone()));
                if let Some(old) = asking.insert(id, task) {
                    old.abort();
                }
            }
            ApprovalEvent::ApprovalResolved { id, .. } => {
                if let Some(task) = asking.remove(&id) {
                    task.abort();
                }
            }
            ApprovalEvent::Warning { message } => {
                eprintln!("airlock mcp: warning: {message}");
            }
        }
    }
    for task in asking.into_values() {
        task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_protocol::ExecPolicyAmendment;

    fn offered() -> Vec<ReviewDecision> {
        airlock_approval::available_decisions(
            None,
            Some(&ExecPolicyAmendment {
                command: vec!["cargo".to_owned(), "build".to_owned()],
            }),
            None,
        )
    }

    #[test]
    fn the_form_offers_the_calls_decisions() {
        let choices = choices(&offered());
        let values: Vec<&str> = choices.iter().map(|c| c.value).collect();
        assert_eq!(
            values,
            ["approve", "approve_for_session", "save_rule", "deny"]
        );
        let old = requested_schema(&choices, "2025-06-18");
        assert_eq!(old["properties"]["decision"]["enum"][2], "save_rule");
        let new = requested_schema(&choices, "2025-11-25");
        assert_eq!(
            new["properties"]["decision"]["oneOf"][0]["const"],
            "approve"
        );
        assert_eq!(new["required"][0], "decision");
    }

    #[test]
    fn answers_map_and_fail_closed() {
        let choices = choices(&offered());
        let reply = |value: Value| decision_from_reply(Ok(ClientReply::Result(value)), &choices);
        assert_eq!(
            reply(json!({"action": "accept", "content": {"decision": "approve"}})),
            ReviewDecision::Approved
        );
        assert!(matches!(
            reply(json!({"action": "accept", "content": {"decision": "save_rule"}})),
            ReviewDecision::ApprovedExecpolicyAmendment { .. }
        ));
        for denied in [
            json!({"action": "accept", "content": {"decision": "approve_everything"}}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
            json!({"decision": "approved"}),
            json!("yes"),
        ] {
            assert!(
                matches!(reply(denied.clone()), ReviewDecision::Denied { .. }),
                "{denied}"
            );
        }
        assert_eq!(reply(json!({"action": "cancel"})), ReviewDecision::Abort);
        assert_eq!(
            decision_from_reply(Err(airlock_jsonrpc::Disconnected), &choices),
            ReviewDecision::Abort
        );
    }
}
