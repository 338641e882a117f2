//! Host patterns of `[permissions.<id>.network.domains]` (spec 12 §Host patterns).
//!
//! `example.com` exact; `*.example.com` subdomains only; `**.example.com` the apex and its
//! subdomains; a `*` inside one label (`region*.example.com`) matches within that label only;
//! a bare `*` every host (allow list only). An optional `:port` (1-65535, no leading zero;
//! IPv6 in brackets) scopes the entry to that port. IP literals are canonicalised like
//! request hosts, and no wildcard ever matches an IP literal (`*` included), so a pattern can
//! only reach an address by naming it.

use std::fmt;
use std::net::IpAddr;

use serde::Deserialize;
use serde::Serialize;

use super::host::CanonicalHost;
use super::host::canonicalize_host;
use super::host::is_valid_label;

/// How the labels before a pattern's fixed tail may vary.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Prefix {
    /// No prefix: the labels must match one for one.
    Exact,
    /// `*.`: one or more labels.
    OneOrMore,
    /// `**.`: zero or more labels.
    ZeroOrMore,
}

/// What the host part of a pattern matches.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatcher {
    /// Bare `*`: every name (never an IP literal).
    Any,
    /// One IP address.
    Ip(IpAddr),
    /// Name labels, each possibly holding `*` wildcards, after an optional prefix.
    Labels { prefix: Prefix, labels: Vec<String> },
}

/// One parsed host pattern, optionally scoped to a port. Serialised as its source text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    source: String,
    host: HostMatcher,
    port: Option<u16>,
}

/// Why a pattern was refused (the config error names the entry).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The host part is invalid.
    #[error("{0}")]
    Host(#[from] super::host::HostError),
    /// `:port` is not 1-65535 without leading zeros.
    #[error("port must be a number from 1 to 65535")]
    BadPort,
    /// A wildcard where it has no meaning (an IP literal, `***`, a lone `*.`).
    #[error(
        "wildcards are allowed only as `*.`/`**.` prefixes, inside one name label, or as a bare `*`"
    )]
    BadWildcard,
    /// A bare `*` in the deny list.
    #[error("a bare `*` is allowed only in the allow list; deny specific hosts instead")]
    GlobalDeny,
}

impl HostPattern {
    /// Parses one pattern.
    ///
    /// # Errors
    /// [`PatternError`] for invalid hosts, ports and wildcards.
    pub fn parse(raw: &str) -> Result<Self, PatternError> {
        let (host, port) = split_port(raw)?;
        let matcher = if host == "*" {
            HostMatcher::Any
        } else if host.contains('*') {
            parse_wildcard(host)?
        } else {
            match canonicalize_host(host)? {
                CanonicalHost::Ip(ip) => HostMatcher::Ip(ip),
                CanonicalHost::Name(name) => HostMatcher::Labels {
                    prefix: Prefix::Exact,
                    labels: name.split('.').map(str::to_owned).collect(),
                },
            }
        };
        Ok(Self {
            source: raw.to_owned(),
            host: matcher,
            port,
        })
    }

    /// The entry as written in the config.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The port the entry is scoped to, if any.
    #[must_use]
    pub const fn port(&self) -> Option<u16> {
        self.port
    }

    /// A bare `*`.
    #[must_use]
    pub const fn is_global(&self) -> bool {
        matches!(self.host, HostMatcher::Any)
    }

    /// Names exactly `host` without any wildcard (an IP literal, or a name such as
    /// `localhost`): the only entries that may open a non-public destination.
    #[must_use]
    pub fn names_exactly(&self, host: &CanonicalHost) -> bool {
        match (&self.host, host) {
            (HostMatcher::Ip(ip), CanonicalHost::Ip(other)) => ip == other,
            (
                HostMatcher::Labels {
                    prefix: Prefix::Exact,
                    labels,
                },
                CanonicalHost::Name(name),
            ) => labels.iter().all(|l| !l.contains('*')) && labels.join(".") == *name,
            _ => false,
        }
    }

    /// Whether the entry covers `host` on `port`.
    #[must_use]
    pub fn matches(&self, host: &CanonicalHost, port: u16) -> bool {
        if self.port.is_some_and(|own| own != port) {
            return false;
        }
        match (&self.host, host) {
            (HostMatcher::Ip(ip), CanonicalHost::Ip(other)) => ip == other,
            (_, CanonicalHost::Ip(_)) | (HostMatcher::Ip(_), _) => false,
            (HostMatcher::Any, CanonicalHost::Name(_)) => true,
            (HostMatcher::Labels { prefix, labels }, CanonicalHost::Name(name)) => {
                let host_labels: Vec<&str> = name.split('.').collect();
                if host_labels.len() < labels.len() {
                    return false;
                }
                let extra = host_labels.len() - labels.len();
                let prefix_ok = match prefix {
                    Prefix::Exact => extra == 0,
                    Prefix::OneOrMore => extra >= 1,
                    Prefix::ZeroOrMore => true,
                };
                prefix_ok
                    && labels
                        .iter()
                        .zip(&host_labels[extra..])
                        .all(|(pattern, label)| label_matches(pattern, label))
            }
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Serialize for HostPattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for HostPattern {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// Splits `host:port` / `[v6]:port`; an unbracketed string with several colons is IPv6.
fn split_port(raw: &str) -> Result<(&str, Option<u16>), PatternError> {
    if raw.starts_with('[') {
        if let Some(end) = raw.find(']') {
            let (host, rest) = raw.split_at(end + 1);
            return match rest.strip_prefix(':') {
                Some(port) => Ok((host, Some(parse_port(port)?))),
                None if rest.is_empty() => Ok((host, None)),
                None => Err(PatternError::BadPort),
            };
        }
        return Ok((raw, None));
    }
    match raw.matches(':').count() {
        1 => {
            let (host, port) = raw.split_once(':').ok_or(PatternError::BadPort)?;
            Ok((host, Some(parse_port(port)?)))
        }
        _ => Ok((raw, None)),
    }
}

/// `1`-`65535`, decimal, no sign, no leading zero.
pub(crate) fn parse_port(raw: &str) -> Result<u16, PatternError> {
    if raw.is_empty() || raw.starts_with('0') || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PatternError::BadPort);
    }
    raw.parse::<u16>().map_err(|_| PatternError::BadPort)
}

fn parse_wildcard(host: &str) -> Result<HostMatcher, PatternError> {
    let (prefix, rest) = if let Some(rest) = host.strip_prefix("**.") {
        (Prefix::ZeroOrMore, rest)
    } else if let Some(rest) = host.strip_prefix("*.") {
        (Prefix::OneOrMore, rest)
    } else {
        (Prefix::Exact, host)
    };
    let lower = rest.to_ascii_lowercase();
    let rest = lower.strip_suffix('.').unwrap_or(&lower);
    if rest.is_empty() || rest.contains("**") {
        return Err(PatternError::BadWildcard);
    }
    let labels: Vec<String> = rest.split('.').map(str::to_owned).collect();
    for label in &labels {
        if label == "*" {
            // A whole-label `*` after the prefix would match across labels' meaning.
            return Err(PatternError::BadWildcard);
        }
        // The fixed characters must form a label once each `*` stands for one character.
        if !is_valid_label(&label.replace('*', "a")) {
            return Err(super::host::HostError::BadLabel.into());
        }
    }
    // The fixed tail must be a name, never an IP literal in disguise.
    let tail = labels.last().map(String::as_str).unwrap_or_default();
    if !tail.contains('*') && matches!(canonicalize_host(rest), Ok(CanonicalHost::Ip(_))) {
        return Err(PatternError::BadWildcard);
    }
    if tail.bytes().all(|b| b.is_ascii_digit() || b == b'*') {
        return Err(PatternError::BadWildcard);
    }
    Ok(HostMatcher::Labels { prefix, labels })
}

/// `*` in `pattern` matches any run (possibly empty) of characters within `label`.
fn label_matches(pattern: &str, label: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == label;
    }
    let pieces: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = pieces.split_first().unwrap_or((&"", &[]));
    let Some(mut remaining) = label.strip_prefix(first) else {
        return false;
    };
    let (last, middle) = rest.split_last().unwrap_or((&"", &[]));
    for piece in middle {
        match remaining.find(piece) {
            Some(at) => remaining = &remaining[at + piece.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(raw: &str) -> CanonicalHost {
        canonicalize_host(raw).unwrap()
    }

    fn matches(pattern: &str, raw: &str, port: u16) -> bool {
        HostPattern::parse(pattern)
            .unwrap()
            .matches(&host(raw), port)
    }

    #[test]
    fn matches_the_spec_forms() {
        assert!(matches("example.com", "EXAMPLE.com.", 80));
        assert!(!matches("example.com", "www.example.com", 80));
        assert!(matches("*.example.com", "a.b.example.com", 80));
        assert!(!matches("*.example.com", "example.com", 80));
        assert!(matches("**.example.com", "example.com", 80));
        assert!(matches("**.example.com", "a.example.com", 80));
        assert!(!matches("**.example.com", "badexample.com", 80));
        assert!(matches(
            "region*.v2.example.com",
            "region1.v2.example.com",
            80
        ));
        assert!(matches(
            "region*.v2.example.com",
            "region.v2.example.com",
            80
        ));
        assert!(!matches(
            "region*.v2.example.com",
            "xregion1.v2.example.com",
            80
        ));
        assert!(!matches(
            "region*.v2.example.com",
            "a.region1.v2.example.com",
            80
        ));
        assert!(matches("*", "anything.test", 80));
    }

    #[test]
    fn wildcards_never_match_ip_literals() {
        assert!(!matches("*", "127.0.0.1", 80));
        assert!(HostPattern::parse("*.0.0.1").is_err());
        assert!(!matches("**.localhost", "127.0.0.1", 80));
        assert!(matches("127.1", "2130706433", 80));
        assert!(matches("[::1]:8080", "::1", 8080));
    }

    #[test]
    fn ports_scope_entries() {
        assert!(matches("github.com:443", "github.com", 443));
        assert!(!matches("github.com:443", "github.com", 22));
        assert!(matches("github.com", "github.com", 22));
        assert!(matches("*.example.com:8443", "a.example.com", 8443));
        assert!(!matches("*.example.com:8443", "a.example.com", 443));
    }

    #[test]
    fn refuses_invalid_patterns() {
        for (raw, want) in [
            ("example.com:0", PatternError::BadPort),
            ("example.com:65536", PatternError::BadPort),
            ("example.com:080", PatternError::BadPort),
            ("example.com:", PatternError::BadPort),
            ("*.0.0.1", PatternError::BadWildcard),
            ("***.example.com", PatternError::BadWildcard),
            ("*.", PatternError::BadWildcard),
            ("a.*.example.com", PatternError::BadWildcard),
        ] {
            assert_eq!(HostPattern::parse(raw), Err(want), "{raw}");
        }
        assert!(matches!(
            HostPattern::parse("http://example.com"),
            Err(PatternError::Host(_)) | Err(PatternError::BadPort)
        ));
        assert!(matches!(
            HostPattern::parse("evil.com\0.ok.com"),
            Err(PatternError::Host(_))
        ));
        assert!(matches!(
            HostPattern::parse("user@example.com"),
            Err(PatternError::Host(_))
        ));
    }
}
