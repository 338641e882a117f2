//! The network section (reference `seatbelt.md` §5).

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_protocol::NetworkSandboxPolicy;

use super::error::Result;
use super::options::SeatbeltOptions;
use super::options::UnixSocketAccess;
use super::params::SeatbeltParams;
use super::paths::canonicalize_for_seatbelt;
use super::proxy::has_proxy_config;
use super::proxy::loopback_proxy_ports;

/// Services and sockets that name resolution and TLS need once any network is allowed
/// (describes Codex's `seatbelt_network_policy.sbpl`).
const NETWORK_SERVICES: &str = include_str!("sbpl/network_services.sbpl");

/// The network section. In order of precedence:
/// 1. proxy-only, when the proxy has loopback ports or any proxy variable, when managed network
///    is enforced, or when the network is off but unix sockets are granted: local binding
///    rules (if allowed), one outbound rule per loopback proxy port, the unix-socket rules
///    (grants, then the refused sockets inside them), then the network services;
/// 2. open, when the network is enabled: all outbound and inbound, unix-socket rules, services;
/// 3. otherwise empty: no network rule at all, so `(deny default)` closes it.
///
/// Reference §5 also lists "proxy configured without a loopback endpoint, or managed network
/// enforced → empty"; both cases are already caught by case 1, which opens no remote endpoint
/// either, so that branch cannot be reached and is not written.
///
/// Unlike Codex (PR #17370), local binding with proxy ports does not open `*:53`: spec 12
/// allows only the proxy's loopback ports, and direct DNS to any host is the exfiltration
/// path of the peers' reports (srt #88); the proxy resolves names itself (`socks5h`, HTTP
/// absolute-form and `CONNECT` carry host names).
pub(crate) fn network_section(
    network: NetworkSandboxPolicy,
    options: &SeatbeltOptions,
    params: &mut SeatbeltParams,
) -> Result<String> {
    let no_env = BTreeMap::new();
    let proxy = options.managed_proxy.as_ref();
    let env = proxy.map_or(&no_env, |proxy| &proxy.env);
    let sockets = proxy.map_or(&UnixSocketAccess::None, |proxy| &proxy.unix_sockets);
    let allow_local_binding = proxy.is_some_and(|proxy| proxy.allow_local_binding);
    let ports = loopback_proxy_ports(env);
    let proxy_only = !ports.is_empty()
        || has_proxy_config(env)
        || options.enforce_managed_network
        || (!network.is_enabled() && sockets.is_granted());

    let mut lines: Vec<String> = Vec::new();
    if proxy_only {
        lines.push("; network: only the managed proxy and local endpoints".to_owned());
        if allow_local_binding {
            lines.push("(allow network-bind (local ip \"*:*\"))".to_owned());
            lines.push("(allow network-inbound (local ip \"localhost:*\"))".to_owned());
            lines.push("(allow network-outbound (remote ip \"localhost:*\"))".to_owned());
        }
        for port in &ports {
            lines.push(format!(
                "(allow network-outbound (remote ip \"localhost:{port}\"))"
            ));
        }
    } else if network.is_enabled() {
        lines.push("; network: open".to_owned());
        lines.push("(allow network-outbound)".to_owned());
        lines.push("(allow network-inbound)".to_owned());
    } else {
        return Ok(String::new());
    }
    // Parameter order of reference §1: the cache directory before the socket paths.
    let cache_rule = match &options.darwin_user_cache_dir {
        Some(dir) => {
            let param = params.define(
                "DARWIN_USER_CACHE_DIR".to_owned(),
                &canonicalize_for_seatbelt(dir),
            )?;
            Some(format!("(allow file-write* (subpath {param}))"))
        }
        None => None,
    };
    lines.extend(unix_socket_rules(sockets, params)?);
    if sockets.is_granted() {
        let denied = proxy.map_or(&[][..], |proxy| proxy.denied_unix_sockets.as_slice());
        lines.extend(unix_socket_denials(denied, params)?);
    }
    let mut section = lines.join("\n");
    section.push_str("\n\n");
    section.push_str(NETWORK_SERVICES);
    if let Some(rule) = cache_rule {
        section.push_str(&rule);
        section.push('\n');
    }
    Ok(section)
}

/// `AF_UNIX` socket creation plus bind/connect rules: unfiltered for [`UnixSocketAccess::AllowAll`],
/// one `UNIX_SOCKET_PATH_<n>` subtree each for [`UnixSocketAccess::Paths`].
fn unix_socket_rules(
    sockets: &UnixSocketAccess,
    params: &mut SeatbeltParams,
) -> Result<Vec<String>> {
    const UNIX_SOCKETS: &str = "(allow system-socket (socket-domain AF_UNIX))";
    match sockets {
        UnixSocketAccess::None => Ok(Vec::new()),
        UnixSocketAccess::AllowAll => Ok(vec![
            UNIX_SOCKETS.to_owned(),
            "(allow network-bind (local unix-socket))".to_owned(),
            "(allow network-outbound (remote unix-socket))".to_owned(),
        ]),
        UnixSocketAccess::Paths(paths) => {
            let mut canonical: Vec<PathBuf> = Vec::new();
            for path in paths.iter().filter(|path| path.is_absolute()) {
                let path = canonicalize_for_seatbelt(path);
                if !canonical.contains(&path) {
                    canonical.push(path);
                }
            }
            if canonical.is_empty() {
                return Ok(Vec::new());
            }
            let mut lines = vec![UNIX_SOCKETS.to_owned()];
            for (index, path) in canonical.iter().enumerate() {
                let param = params.define(format!("UNIX_SOCKET_PATH_{index}"), path)?;
                lines.push(format!(
                    "(allow network-bind (local unix-socket (subpath {param})))"
                ));
                lines.push(format!(
                    "(allow network-outbound (remote unix-socket (subpath {param})))"
                ));
            }
            Ok(lines)
        }
    }
}

/// One `UNIX_SOCKET_DENY_PATH_<n>` subtree each, refused for bind and connect; written after
/// the grants, so a deny entry inside a granted path wins (a later SBPL rule overrides an
/// earlier one).
fn unix_socket_denials(denied: &[PathBuf], params: &mut SeatbeltParams) -> Result<Vec<String>> {
    let mut canonical: Vec<PathBuf> = Vec::new();
    for path in denied.iter().filter(|path| path.is_absolute()) {
        let path = canonicalize_for_seatbelt(path);
        if !canonical.contains(&path) {
            canonical.push(path);
        }
    }
    let mut lines = Vec::new();
    for (index, path) in canonical.iter().enumerate() {
        let param = params.define(format!("UNIX_SOCKET_DENY_PATH_{index}"), path)?;
        lines.push(format!(
            "(deny network-bind (local unix-socket (subpath {param})))"
        ));
        lines.push(format!(
            "(deny network-outbound (remote unix-socket (subpath {param})))"
        ));
    }
    Ok(lines)
}
