//! Tool results (spec 13): `{content: [{type: "text", text}], structuredContent: {exit_code,
//! stdout, stderr, sandbox, decision, reason?}, isError}`. The text is the same JSON as
//! `structuredContent` (MCP: a tool that returns structured content should also return it as
//! text). `isError` is true when the command failed (non-zero exit), the sandbox blocked it,
//! the patch did not apply, or Airlock refused; a refusal is a result, never a JSON-RPC error.

use airlock_core::PatchResult;
use airlock_core::ShellToolOutcome;
use airlock_core::ToolError;
use airlock_core::orchestrator::CallTrace;
use airlock_protocol::ExecApprovalRequirement;
use airlock_sandbox::ExecOutput;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

/// The parts of one result.
#[derive(Debug, Clone, Default)]
pub struct ToolOutput {
    /// Exit status; `None` when nothing ran.
    pub exit_code: Option<i32>,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr (or the patch's failure message).
    pub stderr: String,
    /// The last attempt's sandbox, as its wire name.
    pub sandbox: Option<Value>,
    /// `{requirement, decision, source}`.
    pub decision: Value,
    /// Why Airlock refused, when it did.
    pub reason: Option<String>,
    /// The `isError` flag.
    pub is_error: bool,
}

impl ToolOutput {
    /// A refusal before or without running anything.
    #[must_use]
    pub fn refused(reason: impl Into<String>, trace: Option<&CallTrace>) -> Self {
        Self {
            reason: Some(reason.into()),
            decision: decision(trace),
            sandbox: trace.and_then(last_sandbox),
            is_error: true,
            ..Self::default()
        }
    }

    /// The `tools/call` result object.
    #[must_use]
    pub fn into_result(self) -> Value {
        let mut structured = Map::new();
        structured.insert("exit_code".into(), json!(self.exit_code));
        structured.insert("stdout".into(), Value::String(self.stdout));
        structured.insert("stderr".into(), Value::String(self.stderr));
        structured.insert("sandbox".into(), self.sandbox.unwrap_or(Value::Null));
        structured.insert("decision".into(), self.decision);
        if let Some(reason) = self.reason {
            structured.insert("reason".into(), Value::String(reason));
        }
        let structured = Value::Object(structured);
        json!({
            "content": [{"type": "text", "text": structured.to_string()}],
            "structuredContent": structured,
            "isError": self.is_error,
        })
    }
}

/// `{requirement, decision, source}` of a call's trace (all null when nothing was decided).
fn decision(trace: Option<&CallTrace>) -> Value {
    let requirement = trace
        .and_then(|trace| trace.requirement.as_ref())
        .map(|requirement| match requirement {
            ExecApprovalRequirement::Skip { .. } => "skip",
            ExecApprovalRequirement::NeedsApproval { .. } => "needs_approval",
            ExecApprovalRequirement::Forbidden { .. } => "forbidden",
        });
    let last = trace.and_then(|trace| trace.approvals.last());
    json!({
        "requirement": requirement,
        "decision": last.map(|approval| serde_json::to_value(&approval.decision).unwrap_or(Value::Null)),
        "source": last.map(|approval| serde_json::to_value(approval.source).unwrap_or(Value::Null)),
    })
}

fn last_sandbox(trace: &CallTrace) -> Option<Value> {
    trace
        .attempts
        .last()
        .and_then(|attempt| serde_json::to_value(attempt.sandbox).ok())
}

fn ran(output: ExecOutput, trace: &CallTrace, note: Option<String>) -> ToolOutput {
    let mut stderr = output.stderr;
    if let Some(note) = note {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&note);
    }
    ToolOutput {
        exit_code: Some(output.exit_code),
        is_error: output.exit_code != 0,
        stdout: output.stdout,
        stderr,
        sandbox: last_sandbox(trace),
        decision: decision(Some(trace)),
        reason: None,
    }
}

/// The result of a `shell` call (which may have been an `apply_patch` argv).
#[must_use]
pub fn shell_output(outcome: ShellToolOutcome) -> ToolOutput {
    match outcome {
        ShellToolOutcome::Command(outcome) => {
            let trace = &outcome.record.trace;
            match outcome.result {
                Ok(output) => ran(output, trace, None),
                Err(ToolError::SandboxDenied { output, .. }) => {
                    let why = trace
                        .no_retry
                        .map_or("", airlock_core::orchestrator::NoRetryReason::describe);
                    let mut result = ran(
                        output,
                        trace,
                        Some(format!(
                            "airlock: the sandbox blocked this command; not retried: {why}"
                        )),
                    );
                    result.is_error = true;
                    result
                }
                Err(ToolError::Rejected { message, .. }) => {
                    ToolOutput::refused(message, Some(trace))
                }
                Err(error @ ToolError::Execution(_)) => {
                    ToolOutput::refused(error.to_string(), Some(trace))
                }
            }
        }
        ShellToolOutcome::Patch(outcome) => patch_output(outcome.result, &outcome.record.trace),
        ShellToolOutcome::ImplicitPatch { message } => ToolOutput::refused(message, None),
    }
}

/// The result of an `apply_patch` call.
#[must_use]
pub fn patch_output(result: PatchResult, trace: &CallTrace) -> ToolOutput {
    match result {
        PatchResult::Applied { output, .. } => ran(output, trace, None),
        PatchResult::Failed { message } => ToolOutput {
            exit_code: Some(1),
            stderr: message,
            sandbox: last_sandbox(trace),
            decision: decision(Some(trace)),
            is_error: true,
            ..ToolOutput::default()
        },
        PatchResult::Refused { message, .. } => ToolOutput::refused(message, Some(trace)),
    }
}
