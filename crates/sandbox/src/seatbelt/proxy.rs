//! Loopback ports of a managed proxy, read from its environment variables (reference
//! `seatbelt.md` §5).

use std::collections::BTreeMap;

/// Variable names that carry a proxy URL, compared case-insensitively.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "FTP_PROXY",
    "WS_PROXY",
    "WSS_PROXY",
];

/// Hosts that name this machine's loopback interface; a proxy elsewhere cannot be reached
/// from a sandbox that only opens loopback ports.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The non-empty proxy URLs among `env`, by recognised variable name.
fn proxy_values(env: &BTreeMap<String, String>) -> impl Iterator<Item = &str> {
    env.iter()
        .filter(|(name, _)| {
            PROXY_VARIABLES
                .iter()
                .any(|known| known.eq_ignore_ascii_case(name))
        })
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty())
}

/// Whether any proxy variable is set: the session is meant to go through a proxy.
pub(crate) fn has_proxy_config(env: &BTreeMap<String, String>) -> bool {
    proxy_values(env).next().is_some()
}

/// The sorted, distinct ports of proxy URLs that point at a loopback host.
pub(crate) fn loopback_proxy_ports(env: &BTreeMap<String, String>) -> Vec<u16> {
    let mut ports: Vec<u16> = proxy_values(env).filter_map(loopback_port).collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The port of a `scheme://[user@]host[:port][/…]` URL (no scheme: `http`) if its host is a
/// loopback name. Default ports: `https` 443, `socks*` 1080, anything else 80. `None` for a
/// non-loopback host or an unparsable port (fail closed: that endpoint is not opened).
fn loopback_port(url: &str) -> Option<u16> {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_owned(), url),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host_port)| host_port);
    let (host, port) = split_host_port(host_port)?;
    if !LOOPBACK_HOSTS
        .iter()
        .any(|loopback| loopback.eq_ignore_ascii_case(host))
    {
        return None;
    }
    match port {
        Some(port) => port.parse::<u16>().ok().filter(|port| *port != 0),
        None if scheme == "https" => Some(443),
        None if scheme.starts_with("socks") => Some(1080),
        None => Some(80),
    }
}

/// `host[:port]`, `[v6]`, `[v6]:port`, or a bare IPv6 address such as `::1`.
fn split_host_port(host_port: &str) -> Option<(&str, Option<&str>)> {
    if let Some(bracketed) = host_port.strip_prefix('[') {
        let (host, tail) = bracketed.split_once(']')?;
        return match tail {
            "" => Some((host, None)),
            _ => tail.strip_prefix(':').map(|port| (host, Some(port))),
        };
    }
    if host_port.matches(':').count() > 1 {
        return Some((host_port, None));
    }
    Some(match host_port.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (host_port, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn loopback_ports_with_defaults() {
        let vars = env(&[
            ("HTTP_PROXY", "http://127.0.0.1:3128"),
            ("https_proxy", "https://localhost"),
            ("ALL_PROXY", "socks5h://user:pw@[::1]"),
            ("FTP_PROXY", "localhost:8080/path"),
        ]);
        assert_eq!(loopback_proxy_ports(&vars), vec![443, 1080, 3128, 8080]);
        assert!(has_proxy_config(&vars));
    }

    #[test]
    fn remote_hosts_and_bad_ports_open_nothing() {
        let vars = env(&[
            ("HTTP_PROXY", "http://proxy.example.com:3128"),
            ("HTTPS_PROXY", "http://127.0.0.1:notaport"),
            ("ALL_PROXY", "http://127.0.0.1:0"),
            ("NO_PROXY", "localhost"),
        ]);
        assert_eq!(loopback_proxy_ports(&vars), Vec::<u16>::new());
        assert!(has_proxy_config(&vars));
    }

    #[test]
    fn unrelated_or_empty_variables_are_no_proxy_config() {
        let vars = env(&[("NO_PROXY", "localhost"), ("HTTP_PROXY", "  ")]);
        assert!(!has_proxy_config(&vars));
    }

    #[test]
    fn bare_ipv6_loopback_uses_the_default_port() {
        assert_eq!(loopback_port("::1"), Some(80));
        assert_eq!(loopback_port("http://[::1]:9000"), Some(9000));
    }
}
