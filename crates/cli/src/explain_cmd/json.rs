//! `airlock explain --json`: one object (spec 10 §CLI; the format the shell conformance
//! corpus checks).

use airlock_protocol::ExecApprovalRequirement;
use serde_json::{Value, json};

use super::Explanation;

/// The object, on one line.
pub(super) fn render(explanation: &Explanation) -> String {
    let outcome = &explanation.outcome;
    let parsed = &outcome.parsed;
    let matched_rules: Vec<Value> = outcome
        .segments
        .iter()
        .map(|segment| {
            json!({
                "command": segment.command,
                "decision": segment.decision,
                "known_safe": segment.known_safe,
                "dangerous": segment.dangerous,
                "bypass_eligible": segment.bypass_eligible,
                "matches": segment.matches,
            })
        })
        .collect();
    let object = json!({
        "command": explanation.command,
        "cwd": explanation.cwd,
        "approval_policy": explanation.approval_policy,
        "profile": explanation.profile_id,
        "file_system": explanation.fs_policy.kind,
        "sandbox_permissions": explanation.sandbox_permissions,
        "rules_files": explanation.rules_files,
        "amendment_file": explanation.amendment_file,
        "policy_unavailable": outcome.policy_unavailable,
        "segments": parsed.segments,
        "plain": parsed.plain,
        "segment_source": parsed.source,
        "inner": parsed.inner_argvs().collect::<Vec<_>>(),
        "notes": parsed.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "matched_rules": matched_rules,
        "deny_view_matches": outcome.deny_view_matches,
        "dangerous": outcome.dangerous,
        "code_loading_variables": outcome.code_loading_variables,
        "prompt_causes": outcome.prompt_causes,
        "decision": outcome.decision,
        "requirement": requirement(&outcome.requirement),
        "reviewer": explanation.reviewer,
        "unsandboxed": outcome.unsandboxed,
        "first_attempt_sandboxed": explanation.first_attempt_sandboxed,
        "network": explanation.network,
    });
    let mut text = object.to_string();
    text.push('\n');
    text
}

/// `{type, bypass_sandbox, reason, proposed_execpolicy_amendment}` (spec 10).
fn requirement(requirement: &ExecApprovalRequirement) -> Value {
    let amendment = requirement
        .proposed_execpolicy_amendment()
        .map(|amendment| amendment.command());
    match requirement {
        ExecApprovalRequirement::Skip { bypass_sandbox, .. } => json!({
            "type": "skip",
            "bypass_sandbox": bypass_sandbox,
            "reason": Value::Null,
            "proposed_execpolicy_amendment": amendment,
        }),
        ExecApprovalRequirement::NeedsApproval { reason, .. } => json!({
            "type": "needs_approval",
            "bypass_sandbox": false,
            "reason": reason,
            "proposed_execpolicy_amendment": amendment,
        }),
        ExecApprovalRequirement::Forbidden { reason } => json!({
            "type": "forbidden",
            "bypass_sandbox": false,
            "reason": reason,
            "proposed_execpolicy_amendment": Value::Null,
        }),
    }
}
