//! `PermissionProfile`: the canonical runtime permissions of one environment
//! (reference `protocol.md` §5, spec 04 §Types).

use std::num::NonZeroUsize;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;

use crate::FileSystemPermissions;
use crate::FileSystemSandboxEntry;
use crate::NetworkPermissions;
use crate::NetworkSandboxPolicy;

/// The filesystem part of a managed profile.
///
/// JSON tagged by `"type"`: `{"type":"restricted","entries":[...],"glob_scan_max_depth"?:n}`
/// (`entries` always written, read as empty when missing) or `{"type":"unrestricted"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ManagedFileSystemPermissions {
    /// Only what the entries allow.
    Restricted {
        /// The rules, in compilation order.
        #[serde(default)]
        entries: Vec<FileSystemSandboxEntry>,
        /// Directory depth scanned when expanding deny globs (≥ 1), if set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        glob_scan_max_depth: Option<NonZeroUsize>,
    },
    /// No filesystem limits, but Airlock still owns enforcement (network, seccomp).
    Unrestricted,
}

/// Who enforces isolation, as a plain enum (reference `protocol.md` §5). JSON snake_case:
/// `"managed"` (default), `"disabled"`, `"external"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxEnforcement {
    /// Airlock's own sandbox applies the profile.
    #[default]
    Managed,
    /// No outer sandbox at all.
    Disabled,
    /// A container or VM isolates the process; Airlock only owns the network setting.
    External,
}

/// The compiled permissions of one environment (spec 04 §Types).
///
/// JSON, internally tagged by `"type"`, snake_case (reference `protocol.md` §5):
/// - `{"type":"managed","file_system":ManagedFileSystemPermissions,"network":"restricted"|"enabled"}`
/// - `{"type":"disabled"}`
/// - `{"type":"external","network":"restricted"|"enabled"}`
///
/// Reading also accepts the untagged pre-0.130 shape `{"network"?:{"enabled":bool},
/// "file_system"?:FileSystemPermissions}` (unknown fields rejected), which becomes a managed,
/// restricted profile with those entries and network enabled only for `enabled: true`.
/// `Disabled` and `External` are different and never collapse into each other (spec 04).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PermissionProfile {
    /// Airlock enforces the filesystem part itself.
    Managed {
        /// Filesystem rules.
        file_system: ManagedFileSystemPermissions,
        /// Network rule.
        network: NetworkSandboxPolicy,
    },
    /// No sandbox (`:danger-full-access`).
    Disabled,
    /// Isolation is the caller's job; Airlock still owns the network setting.
    External {
        /// Network rule.
        network: NetworkSandboxPolicy,
    },
}

impl Default for PermissionProfile {
    /// Managed, restricted with no entries (nothing readable), network restricted.
    fn default() -> Self {
        Self::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries: Vec::new(),
                glob_scan_max_depth: None,
            },
            network: NetworkSandboxPolicy::Restricted,
        }
    }
}

impl PermissionProfile {
    /// Who enforces this profile.
    #[must_use]
    pub const fn enforcement(&self) -> SandboxEnforcement {
        match self {
            Self::Managed { .. } => SandboxEnforcement::Managed,
            Self::Disabled => SandboxEnforcement::Disabled,
            Self::External { .. } => SandboxEnforcement::External,
        }
    }

    /// The network rule; `Disabled` means full network.
    #[must_use]
    pub const fn network(&self) -> NetworkSandboxPolicy {
        match self {
            Self::Managed { network, .. } | Self::External { network } => *network,
            Self::Disabled => NetworkSandboxPolicy::Enabled,
        }
    }
}

/// The tagged form, read first (mirror of [`PermissionProfile`] for deserialisation).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedProfile {
    Managed {
        file_system: ManagedFileSystemPermissions,
        network: NetworkSandboxPolicy,
    },
    Disabled,
    External {
        network: NetworkSandboxPolicy,
    },
}

/// The untagged pre-0.130 shape.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LegacyProfile {
    #[serde(default)]
    network: Option<NetworkPermissions>,
    #[serde(default)]
    file_system: Option<FileSystemPermissions>,
}

impl<'de> Deserialize<'de> for PermissionProfile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        // Buffer once so the tag can be inspected: with a tag the error names the tagged
        // variants, without one it names the legacy fields (better than "no variant matched").
        let value = serde_json::Value::deserialize(deserializer)?;
        if value.get("type").is_some() {
            let tagged = TaggedProfile::deserialize(value).map_err(D::Error::custom)?;
            return Ok(match tagged {
                TaggedProfile::Managed {
                    file_system,
                    network,
                } => Self::Managed {
                    file_system,
                    network,
                },
                TaggedProfile::Disabled => Self::Disabled,
                TaggedProfile::External { network } => Self::External { network },
            });
        }
        let legacy = LegacyProfile::deserialize(value).map_err(D::Error::custom)?;
        let file_system = legacy.file_system.unwrap_or_default();
        let enabled = legacy.network.and_then(|network| network.enabled) == Some(true);
        Ok(Self::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries: file_system.entries,
                glob_scan_max_depth: file_system.glob_scan_max_depth,
            },
            network: if enabled {
                NetworkSandboxPolicy::Enabled
            } else {
                NetworkSandboxPolicy::Restricted
            },
        })
    }
}

/// Display metadata for the selected profile: its id and the built-in it extends, if any
/// (reference `protocol.md` §5). JSON: `{"id":":workspace"}` or `{"id":"dev","extends":":workspace"}`.
/// The runtime honours the compiled [`PermissionProfile`], never this.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct ActivePermissionProfile {
    /// The selected id.
    pub id: String,
    /// The built-in ancestor, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
}
