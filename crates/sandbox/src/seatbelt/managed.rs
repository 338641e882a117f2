//! The Seatbelt side of a profile's managed network (spec 12 §Enforcement "macOS: the
//! generated Seatbelt policy allows only the proxy's loopback ports").

use std::net::SocketAddr;

use airlock_permissions::network::ManagedNetwork;
use airlock_permissions::network::UnixSocketPermission;

use super::options::ManagedProxy;
use super::options::UnixSocketAccess;

/// The TCP endpoints of the managed proxy that a macOS command can reach. macOS has no
/// network namespace to hide them in, so they are loopback listeners of the launcher's
/// (reachable by other local processes too, unlike the Linux proxy's Unix socket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyEndpoints {
    /// HTTP/1.1 forwarding and `CONNECT` (`127.0.0.1:<port>`).
    pub http: SocketAddr,
    /// SOCKS5 (`127.0.0.1:<port>`).
    pub socks: SocketAddr,
}

impl ManagedProxy {
    /// The Seatbelt inputs for `network`: the proxy variables of `endpoints` (their loopback
    /// ports become the only IP endpoints the policy opens; `None`: no endpoint, so the
    /// command gets no IP network at all — fail closed), `allow_local_binding`, and the
    /// `unix_sockets` entries (allow entries granted, deny entries refused inside them).
    /// `GIT_SSH_COMMAND` is left out: it names the Linux bridge's connector.
    #[must_use]
    pub fn for_managed_network(
        network: &ManagedNetwork,
        endpoints: Option<&ProxyEndpoints>,
    ) -> Self {
        let env = endpoints
            .map(|endpoints| {
                airlock_linux_sandbox::proxy_env::proxy_env(
                    &endpoints.http.to_string(),
                    &endpoints.socks.to_string(),
                )
            })
            .unwrap_or_default()
            .into_iter()
            .filter(|(name, _)| name != "GIT_SSH_COMMAND")
            .collect();
        let allowed: Vec<_> = network.allowed_unix_sockets().cloned().collect();
        let denied = network
            .unix_sockets
            .iter()
            .filter(|(_, permission)| **permission == UnixSocketPermission::Deny)
            .map(|(path, _)| path.clone())
            .collect();
        Self {
            env,
            allow_local_binding: network.allow_local_binding,
            unix_sockets: if allowed.is_empty() {
                UnixSocketAccess::None
            } else {
                UnixSocketAccess::Paths(allowed)
            },
            denied_unix_sockets: denied,
        }
    }
}

impl super::options::SeatbeltOptions {
    /// These options for a launch with `network` (a profile's managed network, if any):
    /// managed network enforced and [`ManagedProxy::for_managed_network`] as the proxy.
    /// `None` leaves the options as they are.
    #[must_use]
    pub fn with_managed_network(
        mut self,
        network: Option<&ManagedNetwork>,
        endpoints: Option<&ProxyEndpoints>,
    ) -> Self {
        if let Some(network) = network {
            self.enforce_managed_network = true;
            self.managed_proxy = Some(ManagedProxy::for_managed_network(network, endpoints));
        }
        self
    }
}
