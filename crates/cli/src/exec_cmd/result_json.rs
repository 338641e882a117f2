//! `airlock exec --json`: one result object on stdout, so a caller never has to guess what a
//! 125 (or a 1) meant (issue 17 item 6).
//!
//! Shape: `{"status", "exit_code", "message"?, "call_id"?, "stdout"?, "stderr"?,
//! "stdout_truncated_bytes"?, "stderr_truncated_bytes"?, "record"?}`. The captured output
//! keeps the first MiB of each stream; the `_truncated_bytes` fields (present only when not 0)
//! count the bytes after it that the command wrote and the result leaves out.
//! `status` is `ran` (the command ran; `exit_code` is its status), `sandbox_denied` (the
//! sandbox blocked it and it was not retried), `rejected` (Airlock refused: forbidden,
//! denied, timed out, aborted, unusable configuration; 125), `error` (it could not be run
//! confined; 125), `command_not_found` (127) or `not_executable` (126); an `apply_patch`
//! call routed to the patch path ends `applied` (0; `stdout` is the summary),
//! `patch_failed` (1) or `rejected` (125). A refusal is `rejected` in both places, as the
//! audit record's outcome (`record.outcome.status`: `ran`, `sandbox_denied`, `rejected`,
//! `error`; Codex's `ToolError::Rejected`) calls it; an applied patch's record says `ran`
//! (its helper ran) and a failed one's `error`.
//! `exit_code` is what `airlock` exits with. `record` is the audit record of the call
//! (decision trace: policy evaluation, requirement, approvals, attempts with their sandbox
//! type and exit code, retry reason, outcome), absent when the call never reached the
//! orchestrator.

use serde_json::Value;
use serde_json::json;

use super::Finished;

/// The object, on one line.
pub(super) fn render(finished: &Finished) -> String {
    let mut object = json!({
        "status": finished.status,
        "exit_code": finished.code,
    });
    if let Some(message) = &finished.message {
        object["message"] = Value::from(message.as_str());
    }
    if let Some(call_id) = &finished.call_id {
        object["call_id"] = Value::from(call_id.as_str());
    }
    if let Some(record) = &finished.record {
        object["record"] = record.clone();
    }
    if let Some(output) = &finished.output {
        object["stdout"] = Value::from(output.stdout.as_str());
        object["stderr"] = Value::from(output.stderr.as_str());
        if output.stdout_dropped_bytes > 0 {
            object["stdout_truncated_bytes"] = Value::from(output.stdout_dropped_bytes);
        }
        if output.stderr_dropped_bytes > 0 {
            object["stderr_truncated_bytes"] = Value::from(output.stderr_dropped_bytes);
        }
    }
    object.to_string()
}
