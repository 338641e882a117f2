//! A core call's outcome as the `tool/shell` result.

use airlock_app_server_protocol::AttemptSummary;
use airlock_app_server_protocol::DecisionSummary;
use airlock_app_server_protocol::ToolCallStatus;
use airlock_app_server_protocol::ToolShellResponse;
use airlock_approval::DecisionSource;
use airlock_core::ShellCallOutcome;
use airlock_core::ToolError;
use airlock_core::orchestrator::CallTrace;
use serde::Serialize;

/// A serde-renamed unit value as its wire word (`"user"`, `"linuxSeccomp"`).
fn word<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("unknown")
            .to_owned(),
        Err(_) => "unknown".to_owned(),
    }
}

/// The decision trace of `trace`: the requirement, who was asked, the last decision.
pub fn decision(trace: &CallTrace) -> DecisionSummary {
    let requirement = trace
        .requirement
        .as_ref()
        .map_or_else(|| "none".to_owned(), word);
    let last = trace.approvals.last();
    DecisionSummary {
        requirement,
        reviewer: last.and_then(|a| match a.source {
            DecisionSource::User | DecisionSource::SessionCache => Some("user".to_owned()),
            DecisionSource::AutoReview => Some("auto_review".to_owned()),
            DecisionSource::Hook => Some("hook".to_owned()),
            DecisionSource::Config => None,
        }),
        decision: last.map_or_else(
            || "skip".to_owned(),
            |a| a.decision.opaque_label().to_owned(),
        ),
        source: last.map_or_else(|| "config".to_owned(), |a| word(&a.source)),
    }
}

/// The attempts of `trace`.
pub fn attempts(trace: &CallTrace) -> Vec<AttemptSummary> {
    trace
        .attempts
        .iter()
        .map(|a| AttemptSummary {
            sandbox_type: word(&a.sandbox),
            exit_code: a.exit_code,
            sandbox_denied: a.sandbox_denied,
            error: a.error.clone(),
            duration_ms: a.duration_ms,
        })
        .collect()
}

/// The `tool/shell` result of a finished command call.
pub fn shell_response(outcome: &ShellCallOutcome) -> ToolShellResponse {
    let trace = &outcome.record.trace;
    let sandbox_type = trace
        .attempts
        .last()
        .map_or_else(|| "none".to_owned(), |a| word(&a.sandbox));
    let (status, exit_code, stdout, stderr, reason) = match &outcome.result {
        Ok(output) => (
            ToolCallStatus::Completed,
            Some(output.exit_code),
            output.stdout.clone(),
            output.stderr.clone(),
            None,
        ),
        Err(ToolError::SandboxDenied { output, .. }) => (
            ToolCallStatus::Failed,
            Some(output.exit_code),
            output.stdout.clone(),
            output.stderr.clone(),
            Some(format!(
                "the sandbox blocked this command; not retried: {}",
                trace
                    .no_retry
                    .map_or("", airlock_core::orchestrator::NoRetryReason::describe)
            )),
        ),
        Err(ToolError::Rejected { message, .. }) => (
            ToolCallStatus::Declined,
            None,
            String::new(),
            String::new(),
            Some(message.clone()),
        ),
        Err(error @ ToolError::Execution(_)) => (
            ToolCallStatus::Failed,
            None,
            String::new(),
            String::new(),
            Some(error.to_string()),
        ),
    };
    let truncated = match &outcome.result {
        Ok(output) | Err(ToolError::SandboxDenied { output, .. }) => {
            (output.stdout_dropped_bytes, output.stderr_dropped_bytes)
        }
        Err(_) => (0, 0),
    };
    ToolShellResponse {
        status,
        exit_code,
        stdout,
        stderr,
        stdout_truncated_bytes: truncated.0,
        stderr_truncated_bytes: truncated.1,
        sandbox_type,
        decision: decision(trace),
        attempts: attempts(trace),
        reason,
    }
}

/// The result of a call that never reached the core (its turn was interrupted first, or it
/// was killed while running).
pub fn not_run(status: ToolCallStatus, reason: impl Into<String>) -> ToolShellResponse {
    ToolShellResponse {
        status,
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
        stdout_truncated_bytes: 0,
        stderr_truncated_bytes: 0,
        sandbox_type: "none".to_owned(),
        decision: DecisionSummary {
            requirement: "none".to_owned(),
            reviewer: None,
            decision: "abort".to_owned(),
            source: "config".to_owned(),
        },
        attempts: Vec::new(),
        reason: Some(reason.into()),
    }
}
