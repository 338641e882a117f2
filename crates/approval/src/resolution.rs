//! The outcome of one approval request and its mapping to a tool result (spec 06 step 5).

use std::time::Duration;

use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::ReviewDecision;
use serde::Serialize;

/// Who produced a decision (recorded in the audit log, spec 06 step 5 and spec 10 §Audit log).
///
/// JSON: `"config"`, `"hook"`, `"auto_review"`, `"user"`, `"session_cache"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// The approval policy itself (a granular category set to `false`, policy `never`, a missing
    /// reviewer) or an automatic pre-approval; no reviewer was asked.
    Config,
    /// A permission-request hook (spec 06 step 1).
    Hook,
    /// The automatic reviewer (spec 06 step 3).
    AutoReview,
    /// A person (spec 06 §User approval).
    User,
    /// An earlier `approved_for_session` of this session (spec 06 step 6).
    SessionCache,
}

impl DecisionSource {
    /// The model-visible text of a rejection that carries no reason of its own, by source
    /// (spec 06 step 5: "rejected by configuration" | "automatic approval review denied the
    /// action" | "rejected by user").
    #[must_use]
    pub const fn default_rejection(self) -> &'static str {
        match self {
            Self::Config | Self::Hook => REJECTED_BY_CONFIGURATION,
            Self::AutoReview => AUTO_REVIEW_DENIED,
            Self::User | Self::SessionCache => REJECTED_BY_USER,
        }
    }
}

/// Rejection text for a hook or configuration denial without a reason (spec 06 step 5).
pub const REJECTED_BY_CONFIGURATION: &str = "rejected by configuration";
/// Rejection text for an automatic-review denial without a reason (spec 06 step 5).
pub const AUTO_REVIEW_DENIED: &str = "automatic approval review denied the action";
/// Rejection text for a user denial without a reason (spec 06 step 5).
pub const REJECTED_BY_USER: &str = "rejected by user";
/// Rejection text for `abort` (spec 06 step 5).
pub const APPROVAL_ABORTED: &str = "approval request aborted";
/// Rejection text for `timed_out` (spec 06 step 5; reference `orchestrator-and-approvals.md` §11:
/// the model is told a timeout is not a verdict and that it may retry once or ask the user).
pub const AUTO_REVIEW_TIMED_OUT: &str = "automatic approval review timed out before reaching a decision; \
     this is not a verdict that the action is unsafe: you may retry it once, or ask the user";
/// Rejection text for `approved_mcp_policy_amendment` outside an MCP tool call (reference
/// `protocol.md` §9: any other flow treats it as an error).
pub const MCP_AMENDMENT_OUTSIDE_MCP: &str =
    "approved_mcp_policy_amendment is only valid for MCP tool calls";

/// One resolved approval request: the decision, who made it and how long it took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalResolution {
    /// The decision.
    pub decision: ReviewDecision,
    /// Who made it.
    pub source: DecisionSource,
    /// Time from the request to the decision, in milliseconds.
    pub duration_ms: u64,
    /// Why the automatic reviewer did not approve, when it decided and did not (issue 18
    /// item 8): `timeout`, `crashed`, `unusable_answer` or `risk_denial`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_failure: Option<crate::ReviewFailureKind>,
}

/// A refused approval as the tool result the model sees (spec 07 §Errors, `ToolError::Rejected`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApprovalRejected {
    /// The model-visible text.
    pub message: String,
    /// `true` for `abort`: the caller must interrupt the whole turn (spec README invariant 8);
    /// `false` for every denial, where the turn goes on.
    pub interrupts_turn: bool,
}

impl ApprovalRejected {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            interrupts_turn: false,
        }
    }
}

impl ApprovalResolution {
    /// A resolution with `duration` converted to whole milliseconds (saturating).
    #[must_use]
    pub fn new(decision: ReviewDecision, source: DecisionSource, duration: Duration) -> Self {
        Self {
            decision,
            source,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            review_failure: None,
        }
    }

    /// The same resolution with the automatic reviewer's failure kind.
    #[must_use]
    pub const fn with_review_failure(
        mut self,
        review_failure: Option<crate::ReviewFailureKind>,
    ) -> Self {
        self.review_failure = review_failure;
        self
    }

    /// Whether the decision lets the action go ahead (before [`Self::into_tool_result`]).
    #[must_use]
    pub fn is_approved(&self) -> bool {
        self.clone().into_tool_result().is_ok()
    }

    /// Maps the decision to the tool result (spec 06 step 5):
    /// - `network_policy_amendment` with action `deny` → rejected with the source's text
    ///   ([`DecisionSource::default_rejection`]);
    /// - `denied { rejection }` → rejected with the rejection (or the source's text when empty);
    /// - `timed_out` → rejected with [`AUTO_REVIEW_TIMED_OUT`];
    /// - `abort` → rejected with [`APPROVAL_ABORTED`] and `interrupts_turn = true`;
    /// - `approved_mcp_policy_amendment` → rejected with [`MCP_AMENDMENT_OUTSIDE_MCP`] (this layer
    ///   has no MCP calls);
    /// - `approved`, `approved_for_session`, `approved_execpolicy_amendment` and a network
    ///   `allow` amendment → `Ok(decision)`.
    ///
    /// # Errors
    /// [`ApprovalRejected`] for every refusing decision listed above.
    pub fn into_tool_result(self) -> Result<ReviewDecision, ApprovalRejected> {
        match self.decision {
            ReviewDecision::NetworkPolicyAmendment {
                network_policy_amendment,
            } if network_policy_amendment.action == NetworkPolicyRuleAction::Deny => {
                Err(ApprovalRejected::new(self.source.default_rejection()))
            }
            ReviewDecision::Denied { rejection } => Err(ApprovalRejected::new(
                rejection
                    .into_reason()
                    .filter(|reason| !reason.trim().is_empty())
                    .unwrap_or_else(|| self.source.default_rejection().to_owned()),
            )),
            ReviewDecision::TimedOut => Err(ApprovalRejected::new(AUTO_REVIEW_TIMED_OUT)),
            ReviewDecision::Abort => Err(ApprovalRejected {
                message: APPROVAL_ABORTED.to_owned(),
                interrupts_turn: true,
            }),
            ReviewDecision::ApprovedMcpPolicyAmendment => {
                Err(ApprovalRejected::new(MCP_AMENDMENT_OUTSIDE_MCP))
            }
            decision @ (ReviewDecision::Approved
            | ReviewDecision::ApprovedForSession
            | ReviewDecision::ApprovedExecpolicyAmendment { .. }
            | ReviewDecision::NetworkPolicyAmendment { .. }) => Ok(decision),
        }
    }
}
