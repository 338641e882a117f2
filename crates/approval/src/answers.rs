//! The user's answers: `Op::ExecApproval` / `Op::PatchApproval` handling and
//! `notify_approval` (spec 06 §User approval "Responses").

use airlock_protocol::ReviewDecision;

use crate::decisions::is_offered;
use crate::session::ApprovalSession;
use crate::turn::ApprovalTurn;

impl ApprovalSession {
    /// Handles `Op::ExecApproval { id, turn_id, decision }` (spec 06 §User approval
    /// "Responses"), in this order:
    /// - no pending approval `id` in the active turn (or a `turn_id` that is not the active
    ///   turn's) → warning `No pending approval found for call_id: <id>`, nothing else;
    /// - an approving decision the prompt did not offer → warning, and it is replaced by
    ///   `denied` (fail closed);
    /// - `approved_execpolicy_amendment` → the prefix rule is persisted and added to the live
    ///   policy **first**; on failure a warning `Failed to apply execpolicy amendment: <err>`
    ///   and the decision is still delivered; likewise `network_policy_amendment` with
    ///   `Failed to apply network policy amendment: <err>`;
    /// - `abort` → the whole turn is interrupted (every pending approval resolves to `abort`);
    /// - anything else → [`Self::notify_approval`].
    pub async fn submit_exec_approval(
        &self,
        id: &str,
        turn_id: Option<&str>,
        decision: ReviewDecision,
    ) {
        let Some(turn) = self
            .active_turn()
            .filter(|turn| turn_id.is_none_or(|t| t == turn.turn_id()))
        else {
            self.warn_unknown(id);
            return;
        };
        let Some((offered, network)) = turn.peek(id) else {
            self.warn_unknown(id);
            return;
        };
        let decision = if is_offered(&decision, &offered) {
            decision
        } else {
            self.warn(format!(
                "decision `{}` was not offered for approval {id}; treated as denied",
                decision.opaque_label()
            ));
            ReviewDecision::denied_with_reason(format!(
                "the reviewer's answer `{}` was not one of the offered decisions",
                decision.opaque_label()
            ))
        };
        match &decision {
            ReviewDecision::ApprovedExecpolicyAmendment {
                proposed_execpolicy_amendment,
            } => {
                let result = match &self.amendments {
                    Some(target) => {
                        target
                            .persist_exec_amendment(&proposed_execpolicy_amendment.command)
                            .await
                    }
                    None => Err("no rules file is configured for amendments".to_owned()),
                };
                if let Err(error) = result {
                    self.warn(format!("Failed to apply execpolicy amendment: {error}"));
                }
            }
            ReviewDecision::NetworkPolicyAmendment {
                network_policy_amendment,
            } => {
                let result = match (&self.amendments, &network) {
                    (Some(target), Some(context)) => {
                        target
                            .persist_network_amendment(network_policy_amendment, context.protocol)
                            .await
                    }
                    (None, _) => Err("no rules file is configured for amendments".to_owned()),
                    (_, None) => Err("the request has no network context".to_owned()),
                };
                if let Err(error) = result {
                    self.warn(format!("Failed to apply network policy amendment: {error}"));
                }
            }
            _ => {}
        }
        if decision == ReviewDecision::Abort {
            self.interrupt(&turn);
            return;
        }
        self.deliver(&turn, id, decision);
    }

    /// Handles `Op::PatchApproval { id, decision }`: as [`Self::submit_exec_approval`] (a patch
    /// prompt offers no amendment, so an amendment answer becomes `denied`).
    pub async fn submit_patch_approval(&self, id: &str, decision: ReviewDecision) {
        self.submit_exec_approval(id, None, decision).await;
    }

    /// Removes the pending approval `id` of the active turn and sends it `decision` (no
    /// amendment persistence, no offered-decision check: use the `submit_*` methods for client
    /// answers). Returns `false`, with the warning `No pending approval found for call_id:
    /// <id>`, when there is none.
    pub fn notify_approval(&self, id: &str, decision: ReviewDecision) -> bool {
        match self.active_turn() {
            Some(turn) => self.deliver(&turn, id, decision),
            None => {
                self.warn_unknown(id);
                false
            }
        }
    }

    fn deliver(&self, turn: &ApprovalTurn, id: &str, decision: ReviewDecision) -> bool {
        match turn.deliver(id, decision.clone()) {
            Some(delivered) => {
                self.emit_resolved(turn, id.to_owned(), decision);
                delivered
            }
            None => {
                self.warn_unknown(id);
                false
            }
        }
    }
}
