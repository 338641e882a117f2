//! Amendments: rules a reviewer accepts to add to the persistent exec or network policy.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// An exec-policy amendment: an argv prefix to allow from now on (reference `protocol.md` §8).
///
/// Serialised transparently as the bare array of tokens, e.g. `["git","pull"]`; accepting it
/// appends `prefix_rule(pattern=[...], decision="allow")` (spec 02 "Amendments"). Anything other
/// than an array of strings fails to deserialise. The wire type does not reject an empty array;
/// whoever persists the amendment must refuse an empty prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ExecPolicyAmendment {
    /// The argv prefix, token by token.
    pub command: Vec<String>,
}

impl ExecPolicyAmendment {
    /// Wraps an argv prefix.
    #[must_use]
    pub const fn new(command: Vec<String>) -> Self {
        Self { command }
    }

    /// The argv prefix.
    #[must_use]
    pub fn command(&self) -> &[String] {
        &self.command
    }
}

impl From<Vec<String>> for ExecPolicyAmendment {
    fn from(command: Vec<String>) -> Self {
        Self::new(command)
    }
}

/// A network-policy amendment: a host rule to persist (reference `protocol.md` §8).
///
/// JSON: `{"host":"example.com","action":"allow"}`. Both fields are required; a missing field or
/// an unknown action fails to deserialise.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct NetworkPolicyAmendment {
    /// The host the rule is about, as the request named it.
    pub host: String,
    /// Whether later requests to the host are allowed or denied.
    pub action: NetworkPolicyRuleAction,
}

/// The action of a [`NetworkPolicyAmendment`] (reference `protocol.md` §8).
///
/// JSON: `"allow"` or `"deny"`; other strings fail with serde's "unknown variant" error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NetworkPolicyRuleAction {
    /// Allow the host from now on.
    Allow,
    /// Deny the host from now on.
    Deny,
}
