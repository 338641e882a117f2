//! One request's decision (spec 12 §Decision order) and the exact addresses it may dial.
//!
//! Order: an unparsable host is refused (`not_allowed`); a deny entry is final (`denied`);
//! an IP literal or `localhost` that is non-public is refused (`not_allowed_local`) unless an
//! allow entry names it exactly (with its port where given); a host no allow entry covers is
//! `not_allowed`; only then is a name resolved — **once** — and every address checked: a
//! non-public one refuses the whole request unless an allow entry names that IP literal, an
//! IP on the deny list refuses it, a DNS failure refuses it (fail closed). The addresses
//! returned are the only ones the proxy dials: no second resolution, so no DNS rebinding
//! between check and connect.
//!
//! Resolving only hosts that some allow entry covers is deliberate: a sandboxed command
//! cannot make the proxy query arbitrary names (DNS exfiltration through the proxy).

use std::future::Future;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::RwLock;
use std::time::Duration;

use airlock_permissions::network::CanonicalHost;
use airlock_permissions::network::ManagedNetwork;
use airlock_permissions::network::NetworkEntry;
use airlock_permissions::network::canonicalize_host;

use airlock_permissions::network::EntrySource;
use airlock_permissions::network::HostPattern;

use crate::address::is_metadata;
use crate::address::non_public_reason;
use crate::address::own_addresses;
use crate::approval::Approvals;
use crate::approval::NetworkApprovalDecision;
use crate::approval::NetworkApprovalRequest;
use crate::approval::NetworkDecider;

/// Codex's reason codes (`reasons.rs`), also used in blocked-request events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockReason {
    /// Not on the allow list (or unparsable): the only outcome that may prompt.
    NotAllowed,
    /// A deny entry matched: final.
    Denied,
    /// A local, private or metadata destination: final.
    NotAllowedLocal,
    /// `mode = "limited"` refuses this method or protocol.
    MethodNotAllowed,
}

impl BlockReason {
    /// The wire code.
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            Self::NotAllowed => "not_allowed",
            Self::Denied => "denied",
            Self::NotAllowedLocal => "not_allowed_local",
            Self::MethodNotAllowed => "method_not_allowed",
        }
    }
}

/// The traffic a request is (Codex's protocol labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Plain HTTP forwarding.
    Http,
    /// `CONNECT` tunnel.
    HttpsConnect,
    /// SOCKS5 `CONNECT`.
    Socks5Tcp,
}

impl Protocol {
    /// The label in events and messages.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::HttpsConnect => "https_connect",
            Self::Socks5Tcp => "socks5_tcp",
        }
    }
}

/// A refused request: the reason code and one line that names the host and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The reason code.
    pub reason: BlockReason,
    /// The host as requested (escaped for display).
    pub host: String,
    /// The destination port.
    pub port: u16,
    /// Why, naming the entry or the address.
    pub detail: String,
}

impl Refusal {
    /// `Network access to "<host>" was blocked: <why>.` (spec 12, the model-facing line).
    #[must_use]
    pub fn message(&self) -> String {
        format!(
            "Network access to \"{}\" was blocked: {} ({}).",
            self.host,
            self.detail,
            self.reason.code()
        )
    }
}

/// Resolves a name to addresses (a seam for tests; the default is the system resolver).
pub type Resolver = Arc<
    dyn Fn(String, u16) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send>>
        + Send
        + Sync,
>;

/// How long one resolution may take before the request is refused.
const DNS_TIMEOUT: Duration = Duration::from_secs(5);

/// The system resolver (`getaddrinfo` on tokio's blocking pool).
#[must_use]
pub fn system_resolver() -> Resolver {
    Arc::new(|name, port| {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name.as_str(), port)).await?;
            Ok(addrs.collect())
        })
    })
}

/// The policy the proxy enforces: the managed network, the host's own addresses and a
/// resolver.
#[derive(Clone)]
pub struct NetworkPolicy {
    network: Arc<RwLock<ManagedNetwork>>,
    own: Vec<IpAddr>,
    resolver: Resolver,
    decider: Option<Arc<dyn NetworkDecider>>,
    approvals: Arc<Approvals>,
}

impl std::fmt::Debug for NetworkPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkPolicy")
            .field("network", &self.network)
            .field("own", &self.own)
            .finish_non_exhaustive()
    }
}

impl NetworkPolicy {
    /// The policy of `network` with the system resolver and this host's addresses.
    #[must_use]
    pub fn new(network: ManagedNetwork) -> Self {
        Self {
            network: Arc::new(RwLock::new(network)),
            own: own_addresses(),
            resolver: system_resolver(),
            decider: None,
            approvals: Arc::new(Approvals::default()),
        }
    }

    /// Asks `decider` about `not_allowed` requests instead of refusing them at once.
    #[must_use]
    pub fn with_decider(mut self, decider: Arc<dyn NetworkDecider>) -> Self {
        self.decider = Some(decider);
        self
    }

    /// Replaces the resolver (tests: a name that resolves to loopback).
    #[must_use]
    pub fn with_resolver(mut self, resolver: Resolver) -> Self {
        self.resolver = resolver;
        self
    }

    /// Every network approval decision so far, in order (for the audit log).
    #[must_use]
    pub fn approval_log(
        &self,
    ) -> Vec<(
        crate::approval::NetworkApprovalRequest,
        crate::approval::NetworkApprovalDecision,
    )> {
        self.approvals.log()
    }

    /// Requests held for a network approval right now (status and tests).
    #[must_use]
    pub fn held_for_approval(&self) -> usize {
        self.approvals.held()
    }

    /// A snapshot of the live managed network (amendments included).
    #[must_use]
    pub fn network(&self) -> ManagedNetwork {
        self.network
            .read()
            .map(|network| network.clone())
            .unwrap_or_default()
    }

    /// Decides one request and returns the checked addresses to dial, in resolver order.
    ///
    /// # Errors
    /// A [`Refusal`] with its reason and the rule or address behind it.
    pub async fn check(
        &self,
        raw_host: &str,
        port: u16,
        protocol: Protocol,
    ) -> Result<Vec<SocketAddr>, Refusal> {
        let network = self.network();
        let shown = raw_host.escape_debug().to_string();
        let refuse = |reason, detail: String| Refusal {
            reason,
            host: shown.clone(),
            port,
            detail,
        };
        let host = canonicalize_host(raw_host)
            .map_err(|error| refuse(BlockReason::NotAllowed, format!("invalid host: {error}")))?;
        if port == 0 {
            return Err(refuse(
                BlockReason::NotAllowed,
                "port 0 is not a destination".into(),
            ));
        }
        if let Some(entry) = first_match(&network.deny, &host, port) {
            return Err(refuse(
                BlockReason::Denied,
                format!("matches deny entry `{}`", entry.pattern),
            ));
        }
        // Literal local destinations are refused before the allow list, without DNS.
        let literal_ip = match &host {
            CanonicalHost::Ip(ip) => Some(*ip),
            CanonicalHost::Name(_) => None,
        };
        if let Some(ip) = literal_ip {
            check_address(&network, &self.own, ip, port)
                .map_err(|detail| refuse(BlockReason::NotAllowedLocal, detail))?;
        } else if host.is_localhost()
            && !named_exactly(&network, &host, port)
            && !network.allow_local_binding
        {
            return Err(refuse(
                BlockReason::NotAllowedLocal,
                format!(
                    "{host}:{port} is a loopback destination that no allow entry names (with this port); local/private network addresses are blocked by the sandbox policy"
                ),
            ));
        }
        if first_match(&network.allow, &host, port).is_none()
            && !self
                .approved(&host, port, protocol)
                .await
                .map_err(|denied| refuse(denied.0, denied.1))?
        {
            return Err(refuse(
                BlockReason::NotAllowed,
                format!(
                    "{host}:{port} is not on the allow list; add \"{host}\" = \"allow\" (or \"{host}:{port}\") under [permissions.<id>.network.domains]"
                ),
            ));
        }
        if let Some(ip) = literal_ip {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let name = host.to_string();
        let resolved = tokio::time::timeout(DNS_TIMEOUT, (self.resolver)(name, port))
            .await
            .map_err(|_| {
                refuse(
                    BlockReason::NotAllowedLocal,
                    "DNS lookup timed out (refused: fail closed)".into(),
                )
            })?
            .map_err(|error| {
                refuse(
                    BlockReason::NotAllowedLocal,
                    format!("DNS lookup failed ({error}); refused: fail closed"),
                )
            })?;
        if resolved.is_empty() {
            return Err(refuse(
                BlockReason::NotAllowedLocal,
                "DNS lookup returned no address".into(),
            ));
        }
        for addr in &resolved {
            let ip = addr.ip();
            if let Some(entry) = first_match(&network.deny, &CanonicalHost::Ip(ip), port) {
                return Err(refuse(
                    BlockReason::Denied,
                    format!(
                        "resolves to {ip}, which matches deny entry `{}`",
                        entry.pattern
                    ),
                ));
            }
            if host.is_localhost() && !ip.is_loopback() {
                return Err(refuse(
                    BlockReason::NotAllowedLocal,
                    format!("{host} resolves to {ip}, which is not loopback"),
                ));
            }
            if host.is_localhost() && named_exactly(&network, &host, port) {
                continue;
            }
            check_address(&network, &self.own, ip, port).map_err(|detail| {
                refuse(
                    BlockReason::NotAllowedLocal,
                    format!("resolves to {ip}: {detail}"),
                )
            })?;
        }
        Ok(resolved)
    }

    /// Asks the decider (if any) about a host no allow entry covers: `Ok(true)` to go on,
    /// `Ok(false)` when nobody can be asked, `Err` for a refusal by the decider.
    async fn approved(
        &self,
        host: &CanonicalHost,
        port: u16,
        protocol: Protocol,
    ) -> Result<bool, (BlockReason, String)> {
        let Some(decider) = &self.decider else {
            return Ok(false);
        };
        let request = NetworkApprovalRequest {
            host: host.to_string(),
            protocol,
            port,
        };
        let decision = self.approvals.decide(decider, request).await;
        let amend = |allow: bool| {
            let Ok(pattern) = HostPattern::parse(&host.to_string()) else {
                return;
            };
            if let Ok(mut network) = self.network.write() {
                let entry = airlock_permissions::network::NetworkEntry {
                    pattern,
                    source: EntrySource::Session,
                };
                if allow {
                    network.allow.push(entry);
                } else {
                    network.deny.push(entry);
                }
            }
        };
        match decision {
            NetworkApprovalDecision::AllowHost => amend(true),
            NetworkApprovalDecision::DenyHost => {
                amend(false);
                return Err((
                    BlockReason::Denied,
                    format!("{host} was denied by the reviewer, and added to the deny list"),
                ));
            }
            NetworkApprovalDecision::Denied => {
                return Err((
                    BlockReason::NotAllowed,
                    format!(
                        "{host}:{port} is not on the allow list, and the reviewer denied access"
                    ),
                ));
            }
            NetworkApprovalDecision::Approved | NetworkApprovalDecision::ApprovedForSession => {}
        }
        Ok(true)
    }
}

/// An allow entry names `host` exactly (no wildcard), covering `port`.
fn named_exactly(network: &ManagedNetwork, host: &CanonicalHost, port: u16) -> bool {
    network.allow.iter().any(|entry| {
        entry.pattern.names_exactly(host) && entry.pattern.port().is_none_or(|p| p == port)
    })
}

/// `Err(detail)` when `ip` is a destination the policy refuses.
fn check_address(
    network: &ManagedNetwork,
    own: &[IpAddr],
    ip: IpAddr,
    port: u16,
) -> Result<(), String> {
    if named_exactly(network, &CanonicalHost::Ip(ip), port) {
        return Ok(());
    }
    if is_metadata(ip) {
        return Err(format!(
            "{ip} is a cloud metadata address; blocked by the sandbox policy"
        ));
    }
    if network.allow_local_binding {
        return Ok(());
    }
    match non_public_reason(ip, own) {
        Some(reason) => Err(format!(
            "{ip} is {reason}; local/private network addresses are blocked by the sandbox policy (allow the IP literal by name to reach it)"
        )),
        None => Ok(()),
    }
}

fn first_match<'a>(
    entries: &'a [NetworkEntry],
    host: &CanonicalHost,
    port: u16,
) -> Option<&'a NetworkEntry> {
    entries
        .iter()
        .find(|entry| entry.pattern.matches(host, port))
}
