//! The person at the terminal answers patch prompts for `airlock apply-patch` (only when
//! stdin and stderr are terminals; otherwise every prompt is denied, fail closed).

use std::sync::Weak;

use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::NO_REVIEWER_AVAILABLE;
use airlock_protocol::ReviewDecision;
use tokio::sync::mpsc::UnboundedReceiver;

use super::prompt;

/// The suffix the orchestrator gives the approval id of a retry.
const RETRY_SUFFIX: &str = ":retry";

/// Answers the events of `approvals` until the channel closes.
pub async fn serve(approvals: Weak<ApprovalSession>, mut events: UnboundedReceiver<ApprovalEvent>) {
    while let Some(event) = events.recv().await {
        match event {
            ApprovalEvent::ApplyPatchApprovalRequest(request) => {
                // A patch's first prompt carries no reason; a retry's carries the retry reason
                // and is pending under `<call_id>:retry` (the event has no approval id).
                let id = if request.reason.is_some() {
                    format!("{}{RETRY_SUFFIX}", request.call_id)
                } else {
                    request.call_id.clone()
                };
                let decision = tokio::task::spawn_blocking(move || prompt::ask(&request))
                    .await
                    .unwrap_or(ReviewDecision::Abort);
                if let Some(approvals) = approvals.upgrade() {
                    approvals.submit_patch_approval(&id, decision).await;
                }
            }
            ApprovalEvent::ExecApprovalRequest(request) => {
                // `apply-patch` runs no commands; a command prompt is never expected here.
                if let Some(approvals) = approvals.upgrade() {
                    approvals
                        .submit_exec_approval(
                            request.effective_approval_id(),
                            Some(&request.turn_id),
                            ReviewDecision::denied_with_reason(NO_REVIEWER_AVAILABLE),
                        )
                        .await;
                }
            }
            ApprovalEvent::Warning { .. } | ApprovalEvent::ApprovalResolved { .. } => {}
        }
    }
}
