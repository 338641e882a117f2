//! Network approvals through the session's reviewer chain (spec 12 §Network approvals):
//! the proxy of an `airlock exec` session holds a request for an unlisted host and asks
//! here; the question is an ordinary approval (hooks → automatic reviewer → user) of the
//! command `network-access <protocol>://<host>:<port>` with a network context, so the
//! user's "always/never" answers persist `network_rule(...)` through the approval layer's
//! amendment target (spec 02 locking).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::Weak;

use airlock_approval::ApprovalAction;
use airlock_approval::ApprovalContext;
use airlock_approval::ApprovalSession;
use airlock_approval::CommandAction;
use airlock_network_proxy::Protocol;
use airlock_network_proxy::approval::NetworkApprovalDecision;
use airlock_network_proxy::approval::NetworkApprovalRequest;
use airlock_network_proxy::approval::NetworkDecider;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkApprovalProtocol;
use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::PermissionProfile;
use airlock_protocol::ReviewDecision;

/// Where the decider finds the session, filled in once the session exists.
pub(crate) type SessionSlot = Arc<Mutex<Option<Weak<ApprovalSession>>>>;

/// Asks the session's reviewer chain; without a session or an active turn it denies.
pub(crate) struct SessionDecider {
    /// The session, once created.
    pub(crate) session: SessionSlot,
    /// The command's working directory (shown to reviewers).
    pub(crate) cwd: PathBuf,
    /// The profile the command runs under.
    pub(crate) profile: PermissionProfile,
}

const fn protocol_of(protocol: Protocol) -> (NetworkApprovalProtocol, &'static str) {
    match protocol {
        Protocol::Http => (NetworkApprovalProtocol::Http, "http"),
        Protocol::HttpsConnect => (NetworkApprovalProtocol::Https, "https"),
        Protocol::Socks5Tcp => (NetworkApprovalProtocol::Socks5Tcp, "socks5_tcp"),
    }
}

impl NetworkDecider for SessionDecider {
    fn decide(
        &self,
        request: NetworkApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = NetworkApprovalDecision> + Send>> {
        let session = self
            .session
            .lock()
            .ok()
            .and_then(|slot| slot.as_ref().and_then(Weak::upgrade));
        let cwd = self.cwd.clone();
        let profile = self.profile.clone();
        Box::pin(async move {
            let Some(session) = session else {
                return NetworkApprovalDecision::Denied;
            };
            let Some(turn) = session.active_turn() else {
                return NetworkApprovalDecision::Denied;
            };
            let (protocol, label) = protocol_of(request.protocol);
            let host = request.host.clone();
            let call_id = format!("network#{label}#{host}#{}", request.port);
            let target = format!("{label}://{host}:{}", request.port);
            let action = ApprovalAction::Shell(CommandAction::new(
                call_id.clone(),
                vec!["network-access".to_owned(), target],
                cwd,
            ));
            let mut ctx = ApprovalContext::new(call_id);
            ctx.approval_reason = Some(format!("{host} is not in the allowed_domains"));
            ctx.network_approval_context = Some(NetworkApprovalContext { host, protocol });
            ctx.permission_profile = Some(profile);
            let resolution = session.request_approval(&turn, &action, &ctx).await;
            match resolution.decision {
                ReviewDecision::Approved | ReviewDecision::ApprovedExecpolicyAmendment { .. } => {
                    NetworkApprovalDecision::Approved
                }
                ReviewDecision::ApprovedForSession => NetworkApprovalDecision::ApprovedForSession,
                ReviewDecision::NetworkPolicyAmendment {
                    network_policy_amendment,
                } => match network_policy_amendment.action {
                    NetworkPolicyRuleAction::Allow => NetworkApprovalDecision::AllowHost,
                    NetworkPolicyRuleAction::Deny => NetworkApprovalDecision::DenyHost,
                },
                _ => NetworkApprovalDecision::Denied,
            }
        })
    }
}
