//! The structured request the automatic reviewer receives (spec 06 step 3).

use airlock_protocol::AskForApproval;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::PermissionProfile;
use serde::Serialize;

use crate::action::ApprovalAction;

/// The JSON written to a reviewer command's stdin, or sent as the user message to an endpoint.
///
/// `{"session_id","turn_id","call_id","action":{"tool":...},"approval_reason"?,"retry_reason"?,
/// "network_approval_context"?,"permission_profile"?,"approval_policy","strict_auto_review"}`.
/// `action` is the [`ApprovalAction`] JSON (tagged by `"tool"`); `retry_reason` is set when the
/// request is for running again after a sandbox denial, which a strict review never covers
/// twice (spec README invariant 7).
#[derive(Debug, Clone, Serialize)]
pub struct AutoReviewRequest<'a> {
    /// The session.
    pub session_id: &'a str,
    /// The turn.
    pub turn_id: &'a str,
    /// The tool call.
    pub call_id: &'a str,
    /// What is to be approved.
    pub action: &'a ApprovalAction,
    /// Why approval is needed (from the requirement), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_reason: Option<&'a str>,
    /// Why a retry is asked (after a sandbox denial), if this is a retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_reason: Option<&'a str>,
    /// The blocked host of a network retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_approval_context: Option<&'a NetworkApprovalContext>,
    /// The permission profile the action would run under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_profile: Option<&'a PermissionProfile>,
    /// The turn's approval policy.
    pub approval_policy: AskForApproval,
    /// `true` when the review is forced by strict auto review.
    pub strict_auto_review: bool,
}
