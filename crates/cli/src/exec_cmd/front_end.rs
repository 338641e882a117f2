//! The person at the terminal answers for the user in `airlock exec` (spec 10 §CLI). Only
//! used when stdin and stderr are terminals; otherwise the session has no event channel and
//! every prompt is denied with "approval required but no reviewer is available" (fail
//! closed, source `config`). Warnings are printed by [`super::warnings`], not here.

use std::sync::Weak;

use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::NO_REVIEWER_AVAILABLE;
use airlock_protocol::ReviewDecision;
use tokio::sync::mpsc::UnboundedReceiver;

use super::prompt;

/// Answers the events of `approvals` until the channel closes. Holds the session weakly:
/// the channel's sender lives in the session, so it closes when the session is dropped.
pub async fn serve(
    approvals: Weak<ApprovalSession>,
    mut events: UnboundedReceiver<ApprovalEvent>,
    context: prompt::PromptContext,
) {
    while let Some(event) = events.recv().await {
        match event {
            ApprovalEvent::ExecApprovalRequest(request) => {
                let id = request.effective_approval_id().to_owned();
                let turn_id = request.turn_id.clone();
                let context = context.clone();
                let decision = tokio::task::spawn_blocking(move || prompt::ask(&request, &context))
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

/// Why the person at the terminal cannot be asked, and the ways forward (issue 17), when the
/// user reviewer is chosen but stdin or stderr is not a terminal; `None` when both are.
/// Appended to the bare [`NO_REVIEWER_AVAILABLE`] refusal, which alone names no cause.
/// `command`: for a command (an allow rule or `-a never` can skip its prompt); a patch has
/// no such way (under `never` it is refused).
pub(crate) fn no_terminal_explanation(command: bool) -> Option<String> {
    use std::io::IsTerminal as _;
    let missing: Vec<&str> = [
        ("stdin", std::io::stdin().is_terminal()),
        ("stderr", std::io::stderr().is_terminal()),
    ]
    .into_iter()
    .filter(|(_, is_terminal)| !is_terminal)
    .map(|(name, _)| name)
    .collect();
    if missing.is_empty() {
        return None;
    }
    let what = missing
        .iter()
        .map(|name| format!("{name} is not a terminal"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut text = format!(
        "  no terminal to ask on: {what} (the user reviewer answers on the terminal)\n\
         ways forward:\n\
         \x20 - run it in a terminal (stdin and stderr both a terminal) and answer the prompt;\n\
         \x20 - configure a reviewer that needs no terminal: [hooks] (a permission-request hook) or \
         [auto_review] with --reviewer auto_review"
    );
    if command {
        text.push_str(
            ";\n  - or skip the prompt for this command: an allow rule (prefix_rule(..., \
             decision=\"allow\") in a .rules file), or -a never (the command then runs in the \
             sandbox without asking)",
        );
    }
    Some(text)
}
