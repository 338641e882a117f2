//! Persisting amendment decisions before they are delivered (spec 06 §User approval
//! "Responses"): the rule goes to the user's rules file first, then into the live policy.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::RwLock;

use airlock_execpolicy::Decision;
use airlock_execpolicy::NetworkRule;
use airlock_execpolicy::NetworkRuleProtocol;
use airlock_execpolicy::Policy;
use airlock_protocol::NetworkApprovalProtocol;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::NetworkPolicyRuleAction;

/// Where accepted amendments go: the rules file appended to (`$AIRLOCK_HOME/rules/default.rules`
/// for `airlock exec`, spec 10) and the policy the session evaluates commands with.
#[derive(Debug, Clone)]
pub struct AmendmentTarget {
    /// The rules file amendments are appended to (created with its folder when missing).
    pub rules_file: PathBuf,
    /// The live exec policy, updated after a successful append.
    pub policy: Arc<RwLock<Policy>>,
}

impl AmendmentTarget {
    /// A target for `rules_file` and `policy`.
    #[must_use]
    pub const fn new(rules_file: PathBuf, policy: Arc<RwLock<Policy>>) -> Self {
        Self { rules_file, policy }
    }

    /// Appends `prefix_rule(pattern=prefix, decision="allow")` via
    /// `airlock_execpolicy::blocking_append_allow_prefix_rule` (on a blocking thread), then adds
    /// it to the live policy with `Policy::add_allow_prefix_rule`.
    ///
    /// # Errors
    /// The append error's text (empty prefix, I/O error naming the file).
    pub async fn persist_exec_amendment(&self, prefix: &[String]) -> Result<(), String> {
        let path = self.rules_file.clone();
        let owned = prefix.to_vec();
        tokio::task::spawn_blocking(move || {
            airlock_execpolicy::blocking_append_allow_prefix_rule(&path, &owned)
        })
        .await
        .map_err(|error| format!("the append task failed: {error}"))?
        .map_err(|error| error.to_string())?;
        self.policy
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add_allow_prefix_rule(prefix);
        Ok(())
    }

    /// Appends `network_rule(host, protocol, decision)` via
    /// `airlock_execpolicy::blocking_append_network_rule`, then adds the rule to the live policy.
    ///
    /// # Errors
    /// The append error's text (invalid host, I/O error naming the file).
    pub async fn persist_network_amendment(
        &self,
        amendment: &NetworkPolicyAmendment,
        protocol: NetworkApprovalProtocol,
    ) -> Result<(), String> {
        let protocol = rule_protocol(protocol);
        let decision = match amendment.action {
            NetworkPolicyRuleAction::Allow => Decision::Allow,
            NetworkPolicyRuleAction::Deny => Decision::Forbidden,
        };
        let path = self.rules_file.clone();
        let host = amendment.host.clone();
        tokio::task::spawn_blocking(move || {
            airlock_execpolicy::blocking_append_network_rule(&path, &host, protocol, decision, None)
        })
        .await
        .map_err(|error| format!("the append task failed: {error}"))?
        .map_err(|error| error.to_string())?;
        let action = match amendment.action {
            NetworkPolicyRuleAction::Allow => "allow",
            NetworkPolicyRuleAction::Deny => "deny",
        };
        let rule = NetworkRule::parse(&amendment.host, protocol.as_str(), action, None)
            .map_err(|error| error.to_string())?;
        self.policy
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_network_rule(rule);
        Ok(())
    }
}

const fn rule_protocol(protocol: NetworkApprovalProtocol) -> NetworkRuleProtocol {
    match protocol {
        NetworkApprovalProtocol::Http => NetworkRuleProtocol::Http,
        NetworkApprovalProtocol::Https => NetworkRuleProtocol::Https,
        NetworkApprovalProtocol::Socks5Tcp => NetworkRuleProtocol::Socks5Tcp,
        NetworkApprovalProtocol::Socks5Udp => NetworkRuleProtocol::Socks5Udp,
    }
}
