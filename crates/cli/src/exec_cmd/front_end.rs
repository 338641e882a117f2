//! The person at the terminal answers for the user in `airlock exec` (spec 10 §CLI). Only
//! used when stdin and stderr are terminals; otherwise the session has no event channel and
//! every prompt is denied with "approval required but no reviewer is available" (fail
//! closed, source `config`). Warnings are printed by [`super::warnings`], not here.

use std::path::PathBuf;
use std::sync::Weak;

use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::NO_REVIEWER_AVAILABLE;
use airlock_protocol::ReviewDecision;
use tokio::sync::mpsc::UnboundedReceiver;

use super::prompt;

/// Answers the events of `approvals` until the channel closes. Holds the session weakly:
/// the channel's sender lives in the session, so it closes when the session is dropped.
/// `amendment_file` is where an approved prefix rule is saved (shown in the prompt).
pub async fn serve(
    approvals: Weak<ApprovalSession>,
    mut events: UnboundedReceiver<ApprovalEvent>,
    amendment_file: PathBuf,
) {
    while let Some(event) = events.recv().await {
        match event {
            ApprovalEvent::ExecApprovalRequest(request) => {
                let id = request.effective_approval_id().to_owned();
                let turn_id = request.turn_id.clone();
                let file = amendment_file.clone();
                let decision = tokio::task::spawn_blocking(move || prompt::ask(&request, &file))
                    .await
                    .unwrap_or(ReviewDecision::Abort);
                if let Some(approvals) = approvals.upgrade() {
                    approvals
                        .submit_exec_approval(&id, Some(&turn_id), decision)
                        .await;
                }
            }
            ApprovalEvent::ApplyPatchApprovalRequest(request) => {
                // `airlock exec` runs commands only; a patch prompt is never expected here.
                if let Some(approvals) = approvals.upgrade() {
                    approvals
                        .submit_patch_approval(
                            &request.call_id,
                            ReviewDecision::denied_with_reason(NO_REVIEWER_AVAILABLE),
                        )
                        .await;
                }
            }
            ApprovalEvent::Warning { .. } | ApprovalEvent::ApprovalResolved { .. } => {}
        }
    }
}
