//! The managed network of a profile (spec 12 §Config): host allow/deny lists, `mode`,
//! `allow_local_binding` and the `unix_sockets` allowlist, as compiled from
//! `[permissions.<id>.network]` plus the `network_rule(...)` lines of the loaded `.rules`.
//!
//! This module only describes and matches; the proxy (`airlock-network-proxy`) resolves,
//! checks addresses and connects, and the Linux sandbox enforces that nothing else can.

mod config;
mod host;
mod pattern;

pub(crate) use config::managed_network;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde::Serialize;

pub use host::CanonicalHost;
pub use host::HostError;
pub use host::canonicalize_host;
pub use pattern::HostPattern;
pub use pattern::PatternError;

/// `mode` (spec 12): `limited` allows only `GET`/`HEAD`/`OPTIONS` over plain HTTP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    /// Every method, CONNECT and SOCKS5.
    #[default]
    Full,
    /// Read-only plain HTTP; CONNECT and SOCKS5 refused.
    Limited,
}

impl NetworkMode {
    /// The config spelling.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Limited => "limited",
        }
    }
}

/// Where a list entry came from (shown by `airlock permissions show` and in refusals).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntrySource {
    /// `[permissions.<id>.network.domains]`.
    Config,
    /// A `network_rule(...)` line of a loaded `.rules` file.
    NetworkRule,
    /// Added while the session runs (a network approval).
    Session,
}

/// One allow or deny entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkEntry {
    /// The pattern.
    pub pattern: HostPattern,
    /// Where it came from.
    pub source: EntrySource,
}

/// `[permissions.<id>.network.unix_sockets]` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnixSocketPermission {
    /// Reachable from the sandbox.
    Allow,
    /// Not reachable (the default for every socket).
    Deny,
}

/// The managed network of one profile: present exactly when the profile's network is
/// enabled **and** it has a `domains` table (spec 12: its presence turns the proxy on).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedNetwork {
    /// Allow entries, in order (config first, then network rules).
    pub allow: Vec<NetworkEntry>,
    /// Deny entries; a match is final (spec 12 decision step 2).
    pub deny: Vec<NetworkEntry>,
    /// `full` or `limited`.
    pub mode: NetworkMode,
    /// Loopback and private destinations reachable (default false).
    pub allow_local_binding: bool,
    /// Absolute socket path → permission.
    pub unix_sockets: BTreeMap<PathBuf, UnixSocketPermission>,
}

impl ManagedNetwork {
    /// Applies one `network_rule(host=…, decision=…)` in load order: `allow = true` adds the
    /// host to the allow list, `false` to the deny list. A later rule for the same host
    /// replaces an earlier *rule*; config entries are never removed, so a `.rules` file can
    /// add to the lists but cannot lift a deny written in the config.
    ///
    /// # Errors
    /// [`PatternError`] when the (already normalised) host is not a valid pattern.
    pub fn apply_network_rule(&mut self, host: &str, allow: bool) -> Result<(), PatternError> {
        let pattern = HostPattern::parse(host)?;
        let same = |entry: &NetworkEntry| {
            entry.source == EntrySource::NetworkRule && entry.pattern.source() == pattern.source()
        };
        self.allow.retain(|entry| !same(entry));
        self.deny.retain(|entry| !same(entry));
        let entry = NetworkEntry {
            pattern,
            source: EntrySource::NetworkRule,
        };
        if allow {
            self.allow.push(entry);
        } else {
            self.deny.push(entry);
        }
        Ok(())
    }

    /// Socket paths whose permission is `allow`.
    pub fn allowed_unix_sockets(&self) -> impl Iterator<Item = &PathBuf> {
        self.unix_sockets
            .iter()
            .filter(|(_, permission)| **permission == UnixSocketPermission::Allow)
            .map(|(path, _)| path)
    }

    /// Human-readable lines for `airlock permissions show` / `explain`.
    #[must_use]
    pub fn describe(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "network: managed proxy (mode {}, local destinations {})",
            self.mode.as_str(),
            if self.allow_local_binding {
                "allowed"
            } else {
                "refused unless an IP literal or localhost is allowed by name"
            }
        )];
        let source = |entry: &NetworkEntry| match entry.source {
            EntrySource::Config => "config",
            EntrySource::NetworkRule => "network_rule",
            EntrySource::Session => "session",
        };
        for entry in &self.deny {
            lines.push(format!("  deny  {} ({})", entry.pattern, source(entry)));
        }
        for entry in &self.allow {
            lines.push(format!("  allow {} ({})", entry.pattern, source(entry)));
        }
        if self.allow.is_empty() {
            lines.push("  (no allow entry: every host is refused)".to_owned());
        }
        for (path, permission) in &self.unix_sockets {
            let word = match permission {
                UnixSocketPermission::Allow => "allow",
                UnixSocketPermission::Deny => "deny",
            };
            lines.push(format!("  unix socket {word} {}", path.display()));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_rules_add_but_never_lift_config_denies() {
        let mut network = ManagedNetwork {
            deny: vec![NetworkEntry {
                pattern: HostPattern::parse("evil.test").unwrap(),
                source: EntrySource::Config,
            }],
            ..ManagedNetwork::default()
        };
        network.apply_network_rule("evil.test", true).unwrap();
        network.apply_network_rule("pypi.org", false).unwrap();
        network.apply_network_rule("pypi.org", true).unwrap();
        let deny: Vec<&str> = network.deny.iter().map(|e| e.pattern.source()).collect();
        let allow: Vec<&str> = network.allow.iter().map(|e| e.pattern.source()).collect();
        assert_eq!(deny, ["evil.test"]);
        assert_eq!(allow, ["evil.test", "pypi.org"]);
    }

    #[test]
    fn round_trips_through_json() {
        let mut network = ManagedNetwork::default();
        network.apply_network_rule("example.com", true).unwrap();
        let json = serde_json::to_string(&network).unwrap();
        let back: ManagedNetwork = serde_json::from_str(&json).unwrap();
        assert_eq!(back, network);
    }
}
