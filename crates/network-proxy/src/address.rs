//! Which destination addresses count as non-public (spec 12 decision step 3).
//!
//! Embedded IPv4 is decoded first, so an IPv6 spelling never hides a private IPv4:
//! IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and
//! 6to4 `2002:AABB:CCDD::/48` are all checked as the IPv4 they carry.

use std::net::IpAddr;
use std::net::Ipv4Addr;
use std::net::Ipv6Addr;

/// Cloud metadata and similar endpoints outside link-local (spec 12, "+ cloud metadata").
const METADATA_V4: [Ipv4Addr; 3] = [
    Ipv4Addr::new(168, 63, 129, 16),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(192, 0, 0, 192),
];

/// The IPv4 address an IPv6 address carries, if it is one of the embedding forms.
#[must_use]
pub fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    let head_zero = s[..5].iter().all(|x| *x == 0);
    if head_zero && (s[5] == 0xffff || s[5] == 0) && !(s[5] == 0 && s[6] == 0) {
        // Mapped, or compatible (`::` and `::1` are IPv6's own and checked as such).
        return Some(tail);
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|x| *x == 0) {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            (s[1] & 0xff) as u8,
            (s[2] >> 8) as u8,
            (s[2] & 0xff) as u8,
        ));
    }
    None
}

/// Why `ip` is not public, or `None` when it is. `own` lists the host's own interface
/// addresses (a service bound to `0.0.0.0` answers on them).
#[must_use]
pub fn non_public_reason(ip: IpAddr, own: &[IpAddr]) -> Option<&'static str> {
    if own.contains(&ip) {
        return Some("an address of this machine");
    }
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                if own.contains(&IpAddr::V4(v4)) {
                    return Some("an address of this machine");
                }
                return non_public_v4(v4);
            }
            non_public_v6(v6)
        }
    }
}

/// Cloud metadata endpoints, refused even with `allow_local_binding`.
#[must_use]
pub fn is_metadata(ip: IpAddr) -> bool {
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => embedded_ipv4(v6),
    };
    if let Some(v4) = v4 {
        return METADATA_V4.contains(&v4) || v4 == Ipv4Addr::new(169, 254, 169, 254);
    }
    let IpAddr::V6(v6) = ip else { return false };
    let s = v6.segments();
    (s[0] == 0xfd00 && s[1] == 0x0ec2) || v6 == Ipv6Addr::new(0xfd20, 0xce, 0, 0, 0, 0, 0, 0x254)
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    let reason = if ip.is_loopback() {
        "a loopback address"
    } else if ip.is_unspecified() || o[0] == 0 {
        "an unspecified (0.0.0.0/8) address"
    } else if ip.is_private() {
        "a private (RFC 1918) address"
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        "a shared (CGNAT 100.64.0.0/10) address"
    } else if ip.is_link_local() {
        "a link-local address (cloud metadata lives here)"
    } else if ip.is_multicast() {
        "a multicast address"
    } else if ip.is_broadcast() {
        "the broadcast address"
    } else if o[0] >= 240 {
        "a reserved (240.0.0.0/4) address"
    } else if (o[0], o[1], o[2]) == (192, 0, 0)
        || (o[0], o[1], o[2]) == (192, 0, 2)
        || (o[0], o[1], o[2]) == (198, 51, 100)
        || (o[0], o[1], o[2]) == (203, 0, 113)
    {
        "a documentation or protocol-assignment address"
    } else if o[0] == 198 && (o[1] & 0xfe) == 18 {
        "a benchmarking (198.18.0.0/15) address"
    } else if METADATA_V4.contains(&ip) {
        "a cloud metadata address"
    } else {
        return None;
    };
    Some(reason)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let reason = if ip.is_loopback() {
        "a loopback address"
    } else if ip.is_unspecified() {
        "the unspecified address"
    } else if ip.is_multicast() {
        "a multicast address"
    } else if (s[0] & 0xfe00) == 0xfc00 {
        if is_metadata(IpAddr::V6(ip)) {
            "a cloud metadata address"
        } else {
            "a unique local (fc00::/7) address"
        }
    } else if (s[0] & 0xffc0) == 0xfe80 || (s[0] & 0xffc0) == 0xfec0 {
        "a link-local or site-local address"
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        "a documentation (2001:db8::/32) address"
    } else {
        return None;
    };
    Some(reason)
}

/// The host's own interface addresses, read from `/proc` (IPv4 from `fib_trie` `LOCAL`
/// entries, IPv6 from `if_inet6`). Empty where `/proc` does not have them.
#[must_use]
pub fn own_addresses() -> Vec<IpAddr> {
    let mut own = Vec::new();
    if let Ok(trie) = std::fs::read_to_string("/proc/net/fib_trie") {
        let mut last: Option<Ipv4Addr> = None;
        for line in trie.lines() {
            let trimmed = line.trim_start_matches([' ', '|', '+', '-']).trim();
            if let Ok(ip) = trimmed.parse::<Ipv4Addr>() {
                last = Some(ip);
            } else if trimmed.starts_with("/32 host LOCAL")
                && let Some(ip) = last
                && !own.contains(&IpAddr::V4(ip))
            {
                own.push(IpAddr::V4(ip));
            }
        }
    }
    if let Ok(table) = std::fs::read_to_string("/proc/net/if_inet6") {
        for line in table.lines() {
            let Some(hex) = line.split_whitespace().next() else {
                continue;
            };
            if let Ok(value) = u128::from_str_radix(hex, 16) {
                let ip = IpAddr::V6(Ipv6Addr::from(value));
                if !own.contains(&ip) {
                    own.push(ip);
                }
            }
        }
    }
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(raw: &str) -> Option<&'static str> {
        non_public_reason(raw.parse().unwrap(), &[])
    }

    #[test]
    fn every_private_and_metadata_range_is_non_public() {
        for raw in [
            "127.0.0.1",
            "127.255.0.9",
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "100.100.100.200",
            "169.254.169.254",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.2.1",
            "198.51.100.1",
            "203.0.113.1",
            "198.18.0.1",
            "192.0.0.192",
            "168.63.129.16",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "fc00::1",
            "fd00:ec2::254",
            "fd20:ce::254",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
        ] {
            assert!(reason(raw).is_some(), "{raw} must be non-public");
        }
        for raw in ["93.184.215.14", "2606:4700::1111", "1.1.1.1"] {
            assert_eq!(reason(raw), None, "{raw} is public");
        }
    }

    #[test]
    fn own_addresses_are_non_public() {
        let own: Vec<IpAddr> = vec!["93.184.215.14".parse().unwrap()];
        assert!(non_public_reason("93.184.215.14".parse().unwrap(), &own).is_some());
        assert!(non_public_reason("::ffff:93.184.215.14".parse().unwrap(), &own).is_some());
        assert!(own_addresses().iter().any(|ip| ip.is_loopback()) || own_addresses().is_empty());
    }

    #[test]
    fn metadata_is_recognised_in_every_spelling() {
        for raw in [
            "169.254.169.254",
            "::ffff:169.254.169.254",
            "fd00:ec2::254",
            "168.63.129.16",
        ] {
            assert!(is_metadata(raw.parse().unwrap()), "{raw}");
        }
    }
}
