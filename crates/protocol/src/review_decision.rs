//! `ReviewDecision`: a reviewer's answer to an approval request.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::de;
use serde::de::IgnoredAny;
use serde::de::MapAccess;
use serde::de::Visitor;

use crate::ExecPolicyAmendment;
use crate::NetworkPolicyAmendment;
use crate::NetworkPolicyRuleAction;

/// The largest rejection reason kept, in bytes (reference `protocol.md` §9: 4096 bytes).
pub const REJECTION_MAX_BYTES: usize = 4096;

/// The optional reason of a [`ReviewDecision::Denied`] (reference `protocol.md` §9).
///
/// Serialised transparently as a string or `null`. The reason is cut to at most
/// [`REJECTION_MAX_BYTES`] bytes, on a UTF-8 character boundary, both when it is built with
/// [`Rejection::new`] and when it is read from the wire, so an over-long reason never crosses a
/// session boundary. A value that is neither a string nor `null` fails to deserialise.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Rejection(Option<String>);

impl Rejection {
    /// A denial without a reason (`null`).
    #[must_use]
    pub const fn none() -> Self {
        Self(None)
    }

    /// A denial with a reason, truncated to [`REJECTION_MAX_BYTES`] on a character boundary.
    #[must_use]
    pub fn new(reason: impl Into<String>) -> Self {
        let mut reason = reason.into();
        if reason.len() > REJECTION_MAX_BYTES {
            let mut end = REJECTION_MAX_BYTES;
            // Offset 0 is always a boundary, so this stops.
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            reason.truncate(end);
        }
        Self(Some(reason))
    }

    /// The (bounded) reason, if the reviewer gave one.
    #[must_use]
    pub fn reason(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// Consumes the rejection and returns its reason.
    #[must_use]
    pub fn into_reason(self) -> Option<String> {
        self.0
    }
}

impl From<Option<String>> for Rejection {
    fn from(reason: Option<String>) -> Self {
        reason.map_or_else(Self::none, Self::new)
    }
}

impl<'de> Deserialize<'de> for Rejection {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: Deserializer<'de>,
    {
        Option::<String>::deserialize(deserializer).map(Self::from)
    }
}

/// A reviewer's answer to an exec, patch or network approval request
/// (reference `protocol.md` §9; spec 06 "Decisions and their consumers").
///
/// JSON forms (snake_case, externally tagged):
/// - `"approved"`
/// - `{"approved_execpolicy_amendment":{"proposed_execpolicy_amendment":["git","pull"]}}`
/// - `"approved_for_session"`
/// - `"approved_mcp_policy_amendment"` (MCP tool calls only; other flows treat it as an error)
/// - `{"network_policy_amendment":{"network_policy_amendment":{"host":"h","action":"allow"}}}`
/// - `{"denied":{"rejection":"reason"}}` or `{"denied":{"rejection":null}}`; the legacy bare
///   `"denied"` and `{"denied":{}}` are accepted and read as a denial without a reason (spec 01)
/// - `"timed_out"`
/// - `"abort"`
///
/// Errors: an unknown name; a payload-carrying name given as a bare string; a bare-string name
/// given as an object; an object with zero or several keys; a payload of the wrong shape.
/// Unknown fields inside a payload object are ignored, as in Codex. The default is a denial
/// without a reason.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Approve this request only.
    Approved,
    /// Approve, and persist the proposed prefix rule so matching commands skip the prompt.
    ApprovedExecpolicyAmendment {
        /// The argv prefix to allow from now on.
        proposed_execpolicy_amendment: ExecPolicyAmendment,
    },
    /// Approve, and remember the approval in memory for the rest of the session
    /// (spec README invariant 9).
    ApprovedForSession,
    /// Approve an MCP tool call and persist that approval (Codex 0.169).
    ApprovedMcpPolicyAmendment,
    /// Persist a network host rule; `allow` continues, `deny` rejects.
    NetworkPolicyAmendment {
        /// The host rule to persist.
        network_policy_amendment: NetworkPolicyAmendment,
    },
    /// Deny: the model gets an error and the turn goes on (spec README invariant 8).
    Denied {
        /// The reviewer's reason, if any.
        #[serde(default)]
        rejection: Rejection,
    },
    /// The automatic reviewer did not answer in time.
    TimedOut,
    /// Deny and interrupt the turn (spec README invariant 8).
    Abort,
}

impl Default for ReviewDecision {
    fn default() -> Self {
        Self::denied()
    }
}

impl ReviewDecision {
    /// A denial without a reason.
    #[must_use]
    pub const fn denied() -> Self {
        Self::Denied {
            rejection: Rejection::none(),
        }
    }

    /// A denial with a reason, truncated to [`REJECTION_MAX_BYTES`] on a character boundary.
    #[must_use]
    pub fn denied_with_reason(reason: impl Into<String>) -> Self {
        Self::Denied {
            rejection: Rejection::new(reason),
        }
    }

    /// The rejection reason of a denial; `None` for every other decision.
    #[must_use]
    pub fn rejection_reason(&self) -> Option<&str> {
        match self {
            Self::Denied { rejection } => rejection.reason(),
            Self::Approved
            | Self::ApprovedExecpolicyAmendment { .. }
            | Self::ApprovedForSession
            | Self::ApprovedMcpPolicyAmendment
            | Self::NetworkPolicyAmendment { .. }
            | Self::TimedOut
            | Self::Abort => None,
        }
    }

    /// A short label without user data, for logs and telemetry (reference `protocol.md` §9):
    /// `approved`, `approved_with_amendment`, `approved_for_session`,
    /// `approved_mcp_policy_amendment`, `approved_with_network_policy_allow`,
    /// `denied_with_network_policy_deny`, `denied`, `timed_out`, `abort`.
    #[must_use]
    pub const fn opaque_label(&self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::ApprovedExecpolicyAmendment { .. } => "approved_with_amendment",
            Self::ApprovedForSession => "approved_for_session",
            Self::ApprovedMcpPolicyAmendment => "approved_mcp_policy_amendment",
            Self::NetworkPolicyAmendment {
                network_policy_amendment,
            } => match network_policy_amendment.action {
                NetworkPolicyRuleAction::Allow => "approved_with_network_policy_allow",
                NetworkPolicyRuleAction::Deny => "denied_with_network_policy_deny",
            },
            Self::Denied { .. } => "denied",
            Self::TimedOut => "timed_out",
            Self::Abort => "abort",
        }
    }
}

/// Wire names of every decision, for "unknown variant" errors.
const DECISION_NAMES: &[&str] = &[
    "approved",
    "approved_execpolicy_amendment",
    "approved_for_session",
    "approved_mcp_policy_amendment",
    "network_policy_amendment",
    "denied",
    "timed_out",
    "abort",
];

/// Reads the decisions written as a bare string, including the legacy bare `"denied"`.
fn decision_from_name<E: de::Error>(name: &str) -> Result<ReviewDecision, E> {
    match name {
        "approved" => Ok(ReviewDecision::Approved),
        "approved_for_session" => Ok(ReviewDecision::ApprovedForSession),
        "approved_mcp_policy_amendment" => Ok(ReviewDecision::ApprovedMcpPolicyAmendment),
        "denied" => Ok(ReviewDecision::denied()),
        "timed_out" => Ok(ReviewDecision::TimedOut),
        "abort" => Ok(ReviewDecision::Abort),
        "approved_execpolicy_amendment" | "network_policy_amendment" => Err(E::custom(
            format_args!("review decision `{name}` needs a payload: {{\"{name}\":{{...}}}}"),
        )),
        other => Err(E::unknown_variant(other, DECISION_NAMES)),
    }
}

/// Payload of `{"approved_execpolicy_amendment":{...}}`.
#[derive(Deserialize)]
struct ExecAmendmentPayload {
    proposed_execpolicy_amendment: ExecPolicyAmendment,
}

/// Payload of `{"network_policy_amendment":{...}}`.
#[derive(Deserialize)]
struct NetworkAmendmentPayload {
    network_policy_amendment: NetworkPolicyAmendment,
}

/// Payload of `{"denied":{...}}`; a missing `rejection` means no reason.
#[derive(Deserialize)]
struct DeniedPayload {
    #[serde(default)]
    rejection: Rejection,
}

/// Accepts both the bare-string and the one-key-object forms (see [`ReviewDecision`]).
struct DecisionVisitor;

impl<'de> Visitor<'de> for DecisionVisitor {
    type Value = ReviewDecision;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .write_str("a review decision: a name such as \"approved\" or an object with one key")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
        decision_from_name(name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(name) = map.next_key::<String>()? else {
            return Err(de::Error::invalid_length(
                0,
                &"an object with exactly one key",
            ));
        };
        let decision = match name.as_str() {
            "approved_execpolicy_amendment" => {
                let payload: ExecAmendmentPayload = map.next_value()?;
                ReviewDecision::ApprovedExecpolicyAmendment {
                    proposed_execpolicy_amendment: payload.proposed_execpolicy_amendment,
                }
            }
            "network_policy_amendment" => {
                let payload: NetworkAmendmentPayload = map.next_value()?;
                ReviewDecision::NetworkPolicyAmendment {
                    network_policy_amendment: payload.network_policy_amendment,
                }
            }
            "denied" => {
                let payload: DeniedPayload = map.next_value()?;
                ReviewDecision::Denied {
                    rejection: payload.rejection,
                }
            }
            "approved"
            | "approved_for_session"
            | "approved_mcp_policy_amendment"
            | "timed_out"
            | "abort" => {
                return Err(de::Error::custom(format_args!(
                    "review decision `{name}` is written as the bare string \"{name}\""
                )));
            }
            other => return Err(de::Error::unknown_variant(other, DECISION_NAMES)),
        };
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom(
                "a review decision object must have exactly one key",
            ));
        }
        Ok(decision)
    }
}

impl<'de> Deserialize<'de> for ReviewDecision {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: Deserializer<'de>,
    {
        deserializer.deserialize_any(DecisionVisitor)
    }
}
