//! What follows a sandbox denial (spec 07 step 6; spec README invariant 12).

use airlock_protocol::AskForApproval;
use airlock_protocol::NetworkApprovalContext;
use airlock_sandbox::ExecOutput;

use super::trace::NoRetryReason;

/// The facts step 6 decides on.
#[derive(Debug, Clone, Copy)]
pub struct DenialFacts<'a> {
    /// The denial was a network-policy decision.
    pub network_decision: bool,
    /// The approvable network context of that decision, if any.
    pub network_context: Option<&'a NetworkApprovalContext>,
    /// `tool.escalate_on_failure()`.
    pub escalate_on_failure: bool,
    /// `tool.wants_no_sandbox_approval(policy)`.
    pub wants_no_sandbox_approval: bool,
    /// The turn's approval policy.
    pub policy: AskForApproval,
    /// Whether `default_exec_approval_requirement(policy, fs_policy)` is `NeedsApproval`.
    pub default_requirement_needs_approval: bool,
    /// `fs_policy.unsandboxed_execution_allowed()` (false with any deny-read entry).
    pub unsandboxed_execution_allowed: bool,
    /// Strict automatic review applies to this turn.
    pub strict_auto_review: bool,
    /// `tool.should_bypass_approval(policy, already_approved)`.
    pub should_bypass_approval: bool,
    /// Airlock itself observed the refusal ([`super::DenialEvidence::Observed`]); a
    /// denial inferred from the command's own output never skips the second approval.
    pub denial_observed: bool,
}

/// The retry step 6 allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPlan {
    /// The reason shown to reviewers.
    pub retry_reason: String,
    /// `false` when the retry needs a fresh approval (`bypass_retry_approval` is false).
    pub bypass_retry_approval: bool,
    /// `true` when the retry keeps the filesystem sandbox (deny-read present: only the
    /// network part changes).
    pub keep_sandbox: bool,
}

/// Spec 07 step 6, in its order:
/// 1. a network-policy decision without a network approval context → no retry;
/// 2. `!escalate_on_failure` → no retry;
/// 3. `!wants_no_sandbox_approval` → no retry, unless the policy is `on-request`, there is a
///    network context, and the default requirement is `NeedsApproval`;
/// 4. deny-read present and no network context → no retry (invariant 2);
/// 5. otherwise retry, with `retry_reason` ([`network_retry_reason`] or
///    [`sandbox_retry_reason`]) and `bypass_retry_approval = !strict_auto_review &&
///    should_bypass_approval && no network context && denial_observed` (invariant 7:
///    strict review is never reused; Airlock addition: output the command controls is
///    no evidence).
///
/// # Errors
/// The [`NoRetryReason`] when the denial must be returned as is.
pub fn plan_retry(
    facts: &DenialFacts<'_>,
    output: &ExecOutput,
) -> Result<RetryPlan, NoRetryReason> {
    if facts.network_decision && facts.network_context.is_none() {
        return Err(NoRetryReason::NetworkDecisionWithoutContext);
    }
    if !facts.escalate_on_failure {
        return Err(NoRetryReason::ToolDoesNotEscalate);
    }
    if !facts.wants_no_sandbox_approval {
        let on_request_network = facts.policy == AskForApproval::OnRequest
            && facts.network_context.is_some()
            && facts.default_requirement_needs_approval;
        if !on_request_network {
            return Err(NoRetryReason::PolicyDisallowsUnsandboxedApproval);
        }
    }
    if !facts.unsandboxed_execution_allowed && facts.network_context.is_none() {
        return Err(NoRetryReason::DenyReadIsSticky);
    }
    let retry_reason = facts.network_context.map_or_else(
        || sandbox_retry_reason(output),
        |context| network_retry_reason(&context.host),
    );
    Ok(RetryPlan {
        retry_reason,
        bypass_retry_approval: !facts.strict_auto_review
            && facts.should_bypass_approval
            && facts.network_context.is_none()
            && facts.denial_observed,
        keep_sandbox: !facts.unsandboxed_execution_allowed,
    })
}

/// `Network access to "<host>" is blocked by policy.` (spec 07 step 6).
#[must_use]
pub fn network_retry_reason(host: &str) -> String {
    format!("Network access to \"{host}\" is blocked by policy.")
}

/// The longest excerpt of the command's output quoted in a retry reason.
const MAX_EXCERPT_CHARS: usize = 200;

/// The retry reason of a filesystem/sandbox denial, "built from the captured output" (spec 07
/// step 6): Codex's fixed question plus the last non-empty line of stderr (else stdout),
/// trimmed to 200 characters, so a reviewer sees what was blocked, e.g.
/// `command failed in the sandbox; retry without sandbox? (touch: cannot touch '/x': Read-only
/// file system)`.
#[must_use]
pub fn sandbox_retry_reason(output: &ExecOutput) -> String {
    let last_line = |text: &str| {
        text.lines()
            .map(str::trim)
            .rfind(|line| !line.is_empty())
            .map(str::to_owned)
    };
    let excerpt = last_line(&output.stderr).or_else(|| last_line(&output.stdout));
    match excerpt {
        Some(line) => {
            let mut shown: String = line.chars().take(MAX_EXCERPT_CHARS).collect();
            if shown.len() < line.len() {
                shown.push('…');
            }
            format!("command failed in the sandbox; retry without sandbox? ({shown})")
        }
        None => format!(
            "command failed in the sandbox (exit code {}); retry without sandbox?",
            output.exit_code
        ),
    }
}
