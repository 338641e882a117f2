//! `network_rule(host, protocol, decision, justification=None)`: parsed, validated
//! and stored for the network policy. Network rules never affect command decisions.
//!
//! Source: reference `execpolicy.md` §4.4 (validation order: protocol, decision,
//! justification, host) and §7 (amendment line format).

use std::net::Ipv6Addr;

use serde::Serialize;

use crate::decision::Decision;
use crate::error::RuleError;

/// The traffic a network rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkRuleProtocol {
    /// Plain HTTP through the proxy.
    Http,
    /// HTTPS (`CONNECT`); also spelled `https_connect` and `http-connect`.
    Https,
    /// SOCKS5 TCP.
    Socks5Tcp,
    /// SOCKS5 UDP.
    Socks5Udp,
}

impl NetworkRuleProtocol {
    /// Parses the exact, case-sensitive spellings Codex accepts.
    ///
    /// # Errors
    /// `invalid rule: network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got X)`.
    pub fn parse(raw: &str) -> Result<Self, RuleError> {
        match raw {
            "http" => Ok(Self::Http),
            "https" | "https_connect" | "http-connect" => Ok(Self::Https),
            "socks5_tcp" => Ok(Self::Socks5Tcp),
            "socks5_udp" => Ok(Self::Socks5Udp),
            other => Err(RuleError::InvalidRule(format!(
                "network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got {other})"
            ))),
        }
    }

    /// The canonical spelling written to amendments.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Https => "https",
            Self::Socks5Tcp => "socks5_tcp",
            Self::Socks5Udp => "socks5_udp",
        }
    }
}

/// One validated network rule with its host normalised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkRule {
    /// Lowercase host without port or trailing dots (IPv6 without brackets).
    pub host: String,
    /// Which traffic.
    pub protocol: NetworkRuleProtocol,
    /// `deny` is stored as [`Decision::Forbidden`].
    pub decision: Decision,
    /// Why, if given.
    pub justification: Option<String>,
}

impl NetworkRule {
    /// Validates the raw builtin arguments in Codex's order: protocol, decision,
    /// justification, host.
    ///
    /// # Errors
    /// The first failing check's [`RuleError`].
    pub fn parse(
        host: &str,
        protocol: &str,
        decision: &str,
        justification: Option<&str>,
    ) -> Result<Self, RuleError> {
        let protocol = NetworkRuleProtocol::parse(protocol)?;
        let decision = parse_network_decision(decision)?;
        let justification = validate_justification(justification)?;
        let host = normalize_network_host(host)?;
        Ok(Self {
            host,
            protocol,
            decision,
            justification,
        })
    }
}

/// `allow`, `prompt`, `forbidden`, or `deny` (an alias of forbidden).
///
/// # Errors
/// `invalid decision: X` otherwise (`ask` included).
pub fn parse_network_decision(raw: &str) -> Result<Decision, RuleError> {
    if raw == "deny" {
        Ok(Decision::Forbidden)
    } else {
        Decision::parse(raw)
    }
}

/// Rejects a justification that is empty after trimming; keeps it verbatim otherwise.
///
/// # Errors
/// `invalid rule: justification cannot be empty`.
pub fn validate_justification(raw: Option<&str>) -> Result<Option<String>, RuleError> {
    match raw {
        Some(text) if text.trim().is_empty() => Err(RuleError::InvalidRule(
            "justification cannot be empty".into(),
        )),
        other => Ok(other.map(str::to_string)),
    }
}

fn host_error(message: impl std::fmt::Display) -> RuleError {
    RuleError::InvalidRule(format!("network_rule host {message}"))
}

/// Normalises a `network_rule` host: trims, strips an optional `:port` (or
/// `[v6]:port`), drops trailing dots and lowercases.
///
/// # Errors
/// `invalid rule: network_rule host ...` with one of: `cannot be empty`, `must be a
/// hostname or IP literal (without scheme or path)`, `cannot contain whitespace`,
/// `has an invalid bracketed IPv6 literal`, `contains an unsupported suffix: <raw>`,
/// `must be a specific host; wildcards are not allowed`.
pub fn normalize_network_host(raw: &str) -> Result<String, RuleError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(host_error("cannot be empty"));
    }
    if trimmed.contains("://") || trimmed.contains(['/', '?', '#']) {
        return Err(host_error(
            "must be a hostname or IP literal (without scheme or path)",
        ));
    }
    if trimmed.chars().any(char::is_whitespace) {
        return Err(host_error("cannot contain whitespace"));
    }
    let host = if let Some(after_bracket) = trimmed.strip_prefix('[') {
        let Some((inner, suffix)) = after_bracket.split_once(']') else {
            return Err(host_error("has an invalid bracketed IPv6 literal"));
        };
        if inner.parse::<Ipv6Addr>().is_err() {
            return Err(host_error("has an invalid bracketed IPv6 literal"));
        }
        if !suffix.is_empty() && !is_port_suffix(suffix) {
            return Err(host_error(format!(
                "contains an unsupported suffix: {trimmed}"
            )));
        }
        inner
    } else if trimmed.parse::<Ipv6Addr>().is_ok() {
        trimmed
    } else {
        match trimmed.split_once(':') {
            Some((name, port)) if is_port_suffix(&format!(":{port}")) => name,
            Some(_) => {
                return Err(host_error(format!(
                    "contains an unsupported suffix: {trimmed}"
                )));
            }
            None => trimmed,
        }
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err(host_error("cannot be empty"));
    }
    if host.contains('*') {
        return Err(host_error(
            "must be a specific host; wildcards are not allowed",
        ));
    }
    Ok(host)
}

fn is_port_suffix(suffix: &str) -> bool {
    suffix
        .strip_prefix(':')
        .is_some_and(|port| !port.is_empty() && port.parse::<u16>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_hosts() {
        for (raw, want) in [
            ("api.example.com", "api.example.com"),
            ("Evil.Example.COM.", "evil.example.com"),
            ("registry.npmjs.org:443", "registry.npmjs.org"),
            ("[::1]:8080", "::1"),
            ("[::1]", "::1"),
            ("::1", "::1"),
            (" 10.0.0.1 ", "10.0.0.1"),
        ] {
            assert_eq!(normalize_network_host(raw).unwrap(), want, "{raw}");
        }
    }

    #[test]
    fn rejects_bad_hosts_with_codex_messages() {
        for (raw, msg) in [
            (" . ", "cannot be empty"),
            ("", "cannot be empty"),
            (
                "https://x.com",
                "must be a hostname or IP literal (without scheme or path)",
            ),
            (
                "x.com/path",
                "must be a hostname or IP literal (without scheme or path)",
            ),
            ("a b.com", "cannot contain whitespace"),
            ("[::1", "has an invalid bracketed IPv6 literal"),
            ("[zz]", "has an invalid bracketed IPv6 literal"),
            ("[::1]x", "contains an unsupported suffix: [::1]x"),
            ("x.com:http", "contains an unsupported suffix: x.com:http"),
            (
                "*.example.com",
                "must be a specific host; wildcards are not allowed",
            ),
        ] {
            assert_eq!(
                normalize_network_host(raw).unwrap_err().to_string(),
                format!("invalid rule: network_rule host {msg}"),
                "{raw}"
            );
        }
    }

    #[test]
    fn protocols_and_decisions() {
        assert_eq!(
            NetworkRuleProtocol::parse("https_connect").unwrap(),
            NetworkRuleProtocol::Https
        );
        assert_eq!(
            NetworkRuleProtocol::parse("http-connect").unwrap(),
            NetworkRuleProtocol::Https
        );
        assert!(NetworkRuleProtocol::parse("HTTPS").is_err());
        assert_eq!(parse_network_decision("deny").unwrap(), Decision::Forbidden);
        assert_eq!(
            parse_network_decision("ask").unwrap_err().to_string(),
            "invalid decision: ask"
        );
    }

    #[test]
    fn validation_order_is_protocol_decision_justification_host() {
        let err = NetworkRule::parse("", "ftp", "ask", Some("")).unwrap_err();
        assert!(err.to_string().contains("protocol"));
        let err = NetworkRule::parse("", "http", "ask", Some("")).unwrap_err();
        assert_eq!(err.to_string(), "invalid decision: ask");
        let err = NetworkRule::parse("", "http", "allow", Some(" ")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid rule: justification cannot be empty"
        );
    }
}
