//! Which decisions a user prompt offers, and whether an answer is one of them (spec 06 §User
//! approval, `available_decisions`).

use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::ReviewDecision;

/// The decisions an exec prompt offers (spec 06 §User approval):
/// - with additional permissions → `[approved, abort]` only (a grant is never remembered);
/// - otherwise `[approved, approved_for_session]`, then `approved_execpolicy_amendment` with the
///   proposed prefix when there is one, then `network_policy_amendment` allow-host and deny-host
///   when there is a network context, then `[denied, abort]`.
#[must_use]
pub fn available_decisions(
    network_approval_context: Option<&NetworkApprovalContext>,
    proposed_execpolicy_amendment: Option<&ExecPolicyAmendment>,
    additional_permissions: Option<&AdditionalPermissionProfile>,
) -> Vec<ReviewDecision> {
    if additional_permissions.is_some_and(|extra| !extra.is_empty()) {
        return vec![ReviewDecision::Approved, ReviewDecision::Abort];
    }
    let mut decisions = vec![ReviewDecision::Approved, ReviewDecision::ApprovedForSession];
    if let Some(amendment) = proposed_execpolicy_amendment.filter(|a| !a.command.is_empty()) {
        decisions.push(ReviewDecision::ApprovedExecpolicyAmendment {
            proposed_execpolicy_amendment: amendment.clone(),
        });
    }
    if let Some(context) = network_approval_context {
        decisions.extend(proposed_network_policy_amendments(context).into_iter().map(
            |amendment| ReviewDecision::NetworkPolicyAmendment {
                network_policy_amendment: amendment,
            },
        ));
    }
    decisions.push(ReviewDecision::denied());
    decisions.push(ReviewDecision::Abort);
    decisions
}

/// The decisions an `apply_patch` prompt offers: `[approved, approved_for_session, denied, abort]`.
#[must_use]
pub fn patch_decisions() -> Vec<ReviewDecision> {
    vec![
        ReviewDecision::Approved,
        ReviewDecision::ApprovedForSession,
        ReviewDecision::denied(),
        ReviewDecision::Abort,
    ]
}

/// The network amendments proposed for a blocked host: allow it, deny it (reference
/// `protocol.md` §10).
#[must_use]
pub fn proposed_network_policy_amendments(
    context: &NetworkApprovalContext,
) -> Vec<NetworkPolicyAmendment> {
    [
        NetworkPolicyRuleAction::Allow,
        NetworkPolicyRuleAction::Deny,
    ]
    .into_iter()
    .map(|action| NetworkPolicyAmendment {
        host: context.host.clone(),
        action,
    })
    .collect()
}

/// Whether `decision` may answer a prompt that offered `offered`.
///
/// Refusing answers (`denied` with any reason, `abort`, `timed_out`) are always accepted: they
/// only tighten. Every approving answer (including any amendment) must equal one of the offered
/// decisions, so a client cannot widen a request, e.g. remember a grant of additional permissions
/// for the session or persist a prefix other than the proposed one (Airlock decision; spec 06
/// only says which decisions are offered).
#[must_use]
pub fn is_offered(decision: &ReviewDecision, offered: &[ReviewDecision]) -> bool {
    match decision {
        ReviewDecision::Denied { .. } | ReviewDecision::Abort | ReviewDecision::TimedOut => true,
        ReviewDecision::Approved
        | ReviewDecision::ApprovedForSession
        | ReviewDecision::ApprovedExecpolicyAmendment { .. }
        | ReviewDecision::ApprovedMcpPolicyAmendment
        | ReviewDecision::NetworkPolicyAmendment { .. } => offered.contains(decision),
    }
}
