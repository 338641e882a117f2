//! Canonical hosts: the one spelling every network check compares (spec 12 §Host patterns).
//!
//! A host from a request (HTTP target, CONNECT authority, SOCKS5 domain) or from a config
//! entry is turned into either an IP address or a lowercase DNS name before anything matches
//! it. Anything that a resolver or a peer's parser could read differently is refused here
//! instead of being guessed at: control characters and NUL (the SOCKS5 `evil\0.allowed`
//! bypass), spaces, `/`, `@`, `\`, `%` (scope ids, percent escapes), a scheme, non-ASCII
//! names (no IDNA: write the `xn--` form), empty labels. IPv4 literals are read the way
//! `inet_aton` and browsers read them (WHATWG URL "IPv4 parser"): `127.1`, `2130706433`,
//! `0x7f.1` and `0177.0.0.1` are all `127.0.0.1`; a name whose last label is numeric must be
//! such a literal, so `1.2.3.4.5` is refused rather than sent to DNS.

use std::fmt;
use std::net::IpAddr;
use std::net::Ipv4Addr;
use std::net::Ipv6Addr;

/// A host in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CanonicalHost {
    /// An IP literal (IPv4 from any `inet_aton` spelling; IPv6 without brackets).
    Ip(IpAddr),
    /// A DNS name: lowercase ASCII labels of `a-z0-9-_`, no trailing dot.
    Name(String),
}

impl CanonicalHost {
    /// The name, when this is not an IP literal.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Name(name) => Some(name),
            Self::Ip(_) => None,
        }
    }

    /// `localhost` or a name under `.localhost` (RFC 6761: always loopback).
    #[must_use]
    pub fn is_localhost(&self) -> bool {
        self.name()
            .is_some_and(|name| name == "localhost" || name.ends_with(".localhost"))
    }
}

impl fmt::Display for CanonicalHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ip(ip) => write!(f, "{ip}"),
            Self::Name(name) => f.write_str(name),
        }
    }
}

/// Why a host was refused. The message names the problem; callers add the host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// Nothing left after trimming brackets and trailing dots.
    #[error("host is empty")]
    Empty,
    /// A control character, NUL or whitespace.
    #[error("host contains a control character, NUL or whitespace")]
    ControlOrSpace,
    /// A scheme, path, user info or other URL syntax.
    #[error("host contains URL syntax (`{0}`); give only the host name")]
    UrlSyntax(char),
    /// Not ASCII.
    #[error("host is not ASCII; write internationalised names in their `xn--` form")]
    NotAscii,
    /// `[...]` that is not an IPv6 address.
    #[error("bracketed host is not an IPv6 address")]
    BadIpv6,
    /// The last label is numeric but the whole is no IPv4 address.
    #[error("host looks like an IPv4 address but is not a valid one")]
    BadIpv4,
    /// An empty, too long or badly formed label.
    #[error("host has an invalid label (labels are 1-63 of a-z 0-9 - _)")]
    BadLabel,
    /// Longer than 253 characters.
    #[error("host is longer than 253 characters")]
    TooLong,
}

/// Characters that never belong in a host; `*` is handled by patterns before this runs.
const URL_SYNTAX: [char; 8] = ['/', '@', '\\', '?', '#', '%', ',', ';'];

/// Canonicalises `raw` (no port: callers split it off first).
///
/// # Errors
/// [`HostError`] for every spelling that is not safely understood.
pub fn canonicalize_host(raw: &str) -> Result<CanonicalHost, HostError> {
    if raw
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\u{7f}')
    {
        return Err(HostError::ControlOrSpace);
    }
    if let Some(c) = raw.chars().find(|c| URL_SYNTAX.contains(c)) {
        return Err(HostError::UrlSyntax(c));
    }
    if !raw.is_ascii() {
        return Err(HostError::NotAscii);
    }
    if let Some(inner) = raw.strip_prefix('[') {
        let inner = inner.strip_suffix(']').ok_or(HostError::BadIpv6)?;
        let ip: Ipv6Addr = inner.parse().map_err(|_| HostError::BadIpv6)?;
        return Ok(CanonicalHost::Ip(IpAddr::V6(ip)));
    }
    if raw.contains(':') {
        // Only an unbracketed IPv6 literal may contain colons here.
        return raw
            .parse::<Ipv6Addr>()
            .map(|ip| CanonicalHost::Ip(IpAddr::V6(ip)))
            .map_err(|_| HostError::UrlSyntax(':'));
    }
    let lower = raw.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if name.is_empty() {
        return Err(HostError::Empty);
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.last().is_some_and(|last| is_numeric_label(last)) {
        return parse_ipv4(&labels)
            .map(|ip| CanonicalHost::Ip(IpAddr::V4(ip)))
            .ok_or(HostError::BadIpv4);
    }
    if name.len() > 253 {
        return Err(HostError::TooLong);
    }
    if !labels.iter().all(|label| is_valid_label(label)) {
        return Err(HostError::BadLabel);
    }
    Ok(CanonicalHost::Name(name.to_owned()))
}

/// A DNS label: 1-63 of `a-z0-9-_`, not starting or ending with `-`.
pub(crate) fn is_valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && !label.starts_with('-')
        && !label.ends_with('-')
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// WHATWG "ends in a number": all decimal digits, or `0x` followed by hex digits.
fn is_numeric_label(label: &str) -> bool {
    if label.is_empty() {
        return false;
    }
    if let Some(hex) = label.strip_prefix("0x") {
        return hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    label.bytes().all(|b| b.is_ascii_digit())
}

/// One `inet_aton` part: `0x` hex, leading-`0` octal, else decimal.
fn parse_part(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x") {
        (hex, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() {
        // `0x` alone is zero, as browsers read it.
        return (radix == 16).then_some(0);
    }
    // Bounded length so the value cannot overflow u64 before the range check.
    if digits.len() > 24 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// 1-4 parts; every part but the last is one byte, the last fills the remaining bytes.
fn parse_ipv4(labels: &[&str]) -> Option<Ipv4Addr> {
    if labels.is_empty() || labels.len() > 4 {
        return None;
    }
    let parts: Vec<u64> = labels
        .iter()
        .map(|part| parse_part(part))
        .collect::<Option<_>>()?;
    let (last, head) = parts.split_last()?;
    if head.iter().any(|part| *part > 255) {
        return None;
    }
    let remaining_bits = 8 * (4 - head.len() as u32);
    if *last >= 1u64 << remaining_bits {
        return None;
    }
    let mut value: u64 = *last;
    for (index, part) in head.iter().enumerate() {
        value |= part << (24 - 8 * index as u32);
    }
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(raw: &str) -> CanonicalHost {
        CanonicalHost::Ip(raw.parse().unwrap())
    }

    #[test]
    fn canonicalises_every_ipv4_spelling() {
        for spelling in [
            "127.0.0.1",
            "127.1",
            "127.0.1",
            "2130706433",
            "0x7f000001",
            "0x7f.1",
            "0177.0.0.1",
            "0177.1",
            "0x7F.0.0.1",
            "127.0.0.1.",
        ] {
            assert_eq!(
                canonicalize_host(spelling),
                Ok(ip("127.0.0.1")),
                "{spelling}"
            );
        }
        assert_eq!(canonicalize_host("2852039166"), Ok(ip("169.254.169.254")));
        assert_eq!(canonicalize_host("0"), Ok(ip("0.0.0.0")));
    }

    #[test]
    fn canonicalises_ipv6_and_names() {
        assert_eq!(canonicalize_host("[::1]"), Ok(ip("::1")));
        assert_eq!(
            canonicalize_host("[::FFFF:127.0.0.1]"),
            Ok(ip("::ffff:127.0.0.1"))
        );
        assert_eq!(canonicalize_host("::1"), Ok(ip("::1")));
        assert_eq!(
            canonicalize_host("Example.COM."),
            Ok(CanonicalHost::Name("example.com".into()))
        );
        assert_eq!(
            canonicalize_host("0x7f.example"),
            Ok(CanonicalHost::Name("0x7f.example".into()))
        );
    }

    #[test]
    fn refuses_what_is_not_safely_understood() {
        for (raw, want) in [
            ("evil.com\0.allowed.com", HostError::ControlOrSpace),
            ("evil.com\n", HostError::ControlOrSpace),
            ("a b", HostError::ControlOrSpace),
            ("user@host", HostError::UrlSyntax('@')),
            ("http://host", HostError::UrlSyntax('/')),
            ("fe80::1%25eth0", HostError::UrlSyntax('%')),
            ("[fe80::1%eth0]", HostError::UrlSyntax('%')),
            ("host:80", HostError::UrlSyntax(':')),
            ("bücher.de", HostError::NotAscii),
            ("[1.2.3.4]", HostError::BadIpv6),
            ("1.2.3.4.5", HostError::BadIpv4),
            ("256.1.1.1", HostError::BadIpv4),
            ("1.2.3.256", HostError::BadIpv4),
            ("4294967296", HostError::BadIpv4),
            ("08.1.1.1", HostError::BadIpv4),
            ("a..b", HostError::BadLabel),
            ("-a.com", HostError::BadLabel),
            ("", HostError::Empty),
            (".", HostError::Empty),
            ("com..", HostError::BadLabel),
        ] {
            assert_eq!(canonicalize_host(raw), Err(want), "{raw:?}");
        }
    }
}
