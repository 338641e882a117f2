//! Network approvals on the proxy side (spec 12 §Network approvals): a `not_allowed`
//! request is held while a [`NetworkDecider`] answers, concurrent requests for the same
//! key `{host, protocol, port}` share one question, and the answer is remembered as the
//! spec says (`approved` for the waiting requests only, `approved_for_session` per key,
//! amendments in the live lists).
//!
//! Only `not_allowed` ever reaches the decider: deny entries and local/metadata
//! destinations are final, and an approved host still goes through the address checks.
//! Persisting an amendment (`network_rule(...)` in `$AIRLOCK_HOME/rules/default.rules`)
//! is the decider's job: it knows the session's home and locking.

use std::collections::HashMap;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::policy::Protocol;

/// What the decider is asked about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NetworkApprovalRequest {
    /// The canonical host.
    pub host: String,
    /// The protocol.
    pub protocol: Protocol,
    /// The destination port.
    pub port: u16,
}

/// The decider's answer (spec 12 decisions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkApprovalDecision {
    /// `approved`: this request and those waiting on the same key.
    Approved,
    /// `approved_for_session`: the key, for the rest of the session.
    ApprovedForSession,
    /// `network_policy_amendment {host, allow}`: the host joins the live allow list.
    AllowHost,
    /// `network_policy_amendment {host, deny}`: the host joins the live deny list.
    DenyHost,
    /// `denied` / `abort`.
    Denied,
}

impl NetworkApprovalDecision {
    /// Whether the held request may go on.
    #[must_use]
    pub const fn allows(self) -> bool {
        matches!(
            self,
            Self::Approved | Self::ApprovedForSession | Self::AllowHost
        )
    }
}

/// Answers network approval requests (the session's reviewer chain).
pub trait NetworkDecider: Send + Sync {
    /// Decides one request; the proxy holds the connection meanwhile.
    fn decide(
        &self,
        request: NetworkApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = NetworkApprovalDecision> + Send>>;
}

/// Per-session memory and the in-flight questions.
#[derive(Default)]
pub(crate) struct Approvals {
    /// Every decision taken, in order (for the audit log).
    log: Mutex<Vec<(NetworkApprovalRequest, NetworkApprovalDecision)>>,
    session_allowed: Mutex<HashSet<NetworkApprovalRequest>>,
    pending: Mutex<HashMap<NetworkApprovalRequest, Vec<oneshot::Sender<NetworkApprovalDecision>>>>,
}

impl Approvals {
    /// Every decision so far (a remembered session approval is logged again).
    pub(crate) fn log(&self) -> Vec<(NetworkApprovalRequest, NetworkApprovalDecision)> {
        self.log.lock().map(|log| log.clone()).unwrap_or_default()
    }

    fn record(&self, request: &NetworkApprovalRequest, decision: NetworkApprovalDecision) {
        if let Ok(mut log) = self.log.lock() {
            log.push((request.clone(), decision));
        }
    }

    /// Requests held right now (one asking per key plus those waiting on it).
    pub(crate) fn held(&self) -> usize {
        self.pending
            .lock()
            .map(|pending| pending.values().map(|waiters| waiters.len() + 1).sum())
            .unwrap_or(0)
    }

    /// The decision for `request`: remembered, shared with an in-flight question, or
    /// asked now.
    pub(crate) async fn decide(
        &self,
        decider: &Arc<dyn NetworkDecider>,
        request: NetworkApprovalRequest,
    ) -> NetworkApprovalDecision {
        if self
            .session_allowed
            .lock()
            .is_ok_and(|set| set.contains(&request))
        {
            self.record(&request, NetworkApprovalDecision::ApprovedForSession);
            return NetworkApprovalDecision::ApprovedForSession;
        }
        let waiter = {
            let Ok(mut pending) = self.pending.lock() else {
                return NetworkApprovalDecision::Denied;
            };
            match pending.get_mut(&request) {
                Some(waiters) => {
                    let (send, receive) = oneshot::channel();
                    waiters.push(send);
                    Some(receive)
                }
                None => {
                    pending.insert(request.clone(), Vec::new());
                    None
                }
            }
        };
        if let Some(receive) = waiter {
            // The owner's question answers this request too; a lost owner denies.
            return receive.await.unwrap_or(NetworkApprovalDecision::Denied);
        }
        let guard = Owner {
            approvals: self,
            request: request.clone(),
        };
        let decision = decider.decide(request.clone()).await;
        self.record(&request, decision);
        if decision == NetworkApprovalDecision::ApprovedForSession
            && let Ok(mut set) = self.session_allowed.lock()
        {
            set.insert(request);
        }
        for waiter in guard.waiters() {
            let _ = waiter.send(decision);
        }
        decision
    }
}

/// The asking request's hold on its key: if it is dropped before the answer (the client
/// went away), the key is released and its waiters are denied rather than left hanging.
struct Owner<'a> {
    approvals: &'a Approvals,
    request: NetworkApprovalRequest,
}

impl Owner<'_> {
    fn waiters(&self) -> Vec<oneshot::Sender<NetworkApprovalDecision>> {
        self.approvals
            .pending
            .lock()
            .ok()
            .and_then(|mut pending| pending.remove(&self.request))
            .unwrap_or_default()
    }
}

impl Drop for Owner<'_> {
    fn drop(&mut self) {
        drop(self.waiters());
    }
}
