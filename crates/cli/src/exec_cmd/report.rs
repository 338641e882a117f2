//! `airlock exec --verbose`: what each layer decided for the call, from its audit record.

use std::fmt::Write as _;

use airlock_core::AuditRecord;
use airlock_core::CallOutcome;
use airlock_core::orchestrator::AttemptPhase;
use airlock_execpolicy::RuleMatch;
use airlock_protocol::ExecApprovalRequirement;
use airlock_sandbox::SandboxType;

/// A few lines per layer, on stderr after the command.
pub fn render(record: &AuditRecord) -> String {
    let mut out = format!(
        "airlock: call {} (airlock explain --from-log {})\nairlock: policy layer\n",
        record.call_id, record.call_id
    );
    if let Some(policy) = &record.policy {
        for verdict in &policy.matched_rules {
            let _ = writeln!(
                out,
                "  segment `{}`: {}{}",
                join(&verdict.command),
                verdict.decision.as_str(),
                describe_matches(&verdict.matches, verdict.known_safe)
            );
        }
        for cause in &policy.heuristics.prompt_causes {
            let _ = writeln!(out, "  prompt cause: {}", cause.detail);
        }
        if let Some(reason) = &policy.policy_unavailable {
            let _ = writeln!(out, "  exec policy unavailable: {reason}");
        }
    }
    if let Some(requirement) = &record.trace.requirement {
        let unconfined = record
            .trace
            .attempts
            .first()
            .is_some_and(|attempt| attempt.sandbox == SandboxType::None);
        let _ = writeln!(
            out,
            "  requirement: {}",
            describe_requirement(requirement, unconfined)
        );
    }
    out.push_str("airlock: approval layer\n");
    for approval in &record.trace.approvals {
        let _ = writeln!(
            out,
            "  {}: {} by {} ({} ms)",
            phase(approval.phase),
            approval.decision.opaque_label(),
            serde_label(&approval.source),
            approval.duration_ms
        );
    }
    if record.trace.approvals.is_empty() {
        out.push_str("  nobody was asked\n");
    }
    out.push_str("airlock: enforcement layer\n");
    for attempt in &record.trace.attempts {
        let ending = match (&attempt.error, attempt.exit_code) {
            (Some(error), _) => format!("not started: {error}"),
            (None, Some(code)) if attempt.sandbox_denied => match attempt.denial_evidence {
                Some(airlock_core::orchestrator::DenialEvidence::OutputOnly) => format!(
                    "exit {code}, blocked by the sandbox (as its output says; a retry without the sandbox is asked for again)"
                ),
                _ => format!("exit {code}, blocked by the sandbox"),
            },
            (None, Some(code)) => format!("exit {code}"),
            (None, None) => "no result".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {} attempt: sandbox {}{} → {ending} ({} ms)",
            phase(attempt.phase),
            serde_label(&attempt.sandbox),
            if attempt.sandbox_requested {
                ""
            } else {
                " (not requested)"
            },
            attempt.duration_ms
        );
    }
    if record.trace.attempts.is_empty() {
        out.push_str("  nothing ran\n");
    }
    if let Some(reason) = &record.trace.retry_reason {
        let _ = writeln!(out, "  retry reason: {reason}");
    }
    if let Some(no_retry) = record.trace.no_retry {
        let _ = writeln!(out, "  not retried: {}", no_retry.describe());
    }
    if let Some(refused) = &record.trace.unsandboxed_refused {
        let _ = writeln!(out, "  kept in the sandbox: {refused}");
    }
    if let Some(policy) = &record.policy {
        if policy.unsandboxed.bypass_refused
            && let Some(refused) = &policy.unsandboxed.refused
        {
            let _ = writeln!(out, "  kept in the sandbox: {refused}");
        }
        if policy.unsandboxed.bypass_disabled_by_config {
            out.push_str(
                "  kept in the sandbox: `[exec_policy] allow_rules_bypass_sandbox = false`\n",
            );
        }
        for note in &policy.unsandboxed.notes {
            let _ = writeln!(out, "  runs workspace code unconfined: {note}");
        }
        let unconfined = record
            .trace
            .attempts
            .iter()
            .any(|attempt| attempt.sandbox == SandboxType::None);
        if unconfined && !policy.unsandboxed.git_env.is_empty() {
            let pin: Vec<String> = policy
                .unsandboxed
                .git_env
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            let _ = writeln!(
                out,
                "  git pinned to the reviewed repository: {}",
                pin.join(" ")
            );
        }
    }
    out.push_str("airlock: outcome\n");
    let _ = writeln!(
        out,
        "  {}",
        match &record.outcome {
            CallOutcome::Ran { exit_code } => format!("ran, exit {exit_code}"),
            CallOutcome::SandboxDenied { exit_code } => {
                format!("blocked by the sandbox, exit {exit_code}")
            }
            CallOutcome::Rejected { message, .. } => format!("refused: {message}"),
            CallOutcome::Unrunnable { exit_code, message } => {
                format!("not started, exit {exit_code}: {message}")
            }
            CallOutcome::Error { message } => format!("not run: {message}"),
        }
    );
    out
}

fn phase(phase: AttemptPhase) -> &'static str {
    match phase {
        AttemptPhase::First => "first",
        AttemptPhase::Retry => "retry",
    }
}

fn describe_matches(matches: &[RuleMatch], known_safe: bool) -> String {
    let mut parts = Vec::new();
    for rule in matches {
        match rule {
            RuleMatch::PrefixRuleMatch { matched_prefix, .. } => {
                parts.push(format!("rule `{}`", join(matched_prefix)));
            }
            RuleMatch::HeuristicsRuleMatch { .. } => parts.push("heuristics".to_owned()),
        }
    }
    if known_safe {
        parts.push("known safe".to_owned());
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The requirement in words; `unconfined` = the first attempt actually ran without a
/// sandbox (a profile without one), so "run in the sandbox" would be false (issue 17).
fn describe_requirement(requirement: &ExecApprovalRequirement, unconfined: bool) -> String {
    match requirement {
        ExecApprovalRequirement::Skip { bypass_sandbox, .. } => {
            if *bypass_sandbox {
                "skip approval, first attempt may bypass the sandbox".to_owned()
            } else if unconfined {
                "skip approval; no sandbox (the permission profile does not confine commands)"
                    .to_owned()
            } else {
                "skip approval, run in the sandbox".to_owned()
            }
        }
        ExecApprovalRequirement::NeedsApproval { reason, .. } => match reason {
            Some(reason) => format!("needs approval: {reason}"),
            None => "needs approval".to_owned(),
        },
        ExecApprovalRequirement::Forbidden { reason } => format!("forbidden: {reason}"),
    }
}

/// The JSON string form of a unit enum value (`"hook"` → `hook`).
fn serde_label<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Shell words, escaped for the terminal ([`crate::terminal_text::safe`]).
fn join(words: &[String]) -> String {
    crate::terminal_text::safe(
        &shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" ")),
    )
}
