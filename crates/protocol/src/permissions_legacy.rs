//! The legacy `SandboxPolicy` and its `NetworkAccess` (reference `protocol.md` §4).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// Network setting of an external sandbox. JSON (kebab-case): `"restricted"` (default) or
/// `"enabled"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkAccess {
    /// No network.
    #[default]
    Restricted,
    /// Full network.
    Enabled,
}

/// The coarse sandbox policy that predates permission profiles; still the projection used by
/// older clients and by the model-facing `sandbox_mode` (spec 04 §Projections).
///
/// JSON, internally tagged by `"type"`, kebab-case (reference `protocol.md` §4):
/// - `{"type":"danger-full-access"}`
/// - `{"type":"read-only","network_access"?:true}` (`network_access` omitted when false)
/// - `{"type":"external-sandbox","network_access":"restricted"|"enabled"}`
/// - `{"type":"workspace-write","writable_roots"?:["/abs"],"network_access":false,
///   "exclude_tmpdir_env_var":false,"exclude_slash_tmp":false}` (`writable_roots` omitted when
///   empty; the booleans default to false on input).
///
/// The 0.125 `access` / `read_only_access` fields are not supported (removed in 0.169).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SandboxPolicy {
    /// No sandbox.
    DangerFullAccess,
    /// Read anywhere, write nowhere.
    ReadOnly {
        /// Whether the network is allowed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        network_access: bool,
    },
    /// A container or VM isolates the process.
    ExternalSandbox {
        /// Network setting.
        #[serde(default)]
        network_access: NetworkAccess,
    },
    /// Read anywhere; write in the cwd, the extra roots and (unless excluded) the temp dirs.
    WorkspaceWrite {
        /// Extra writable roots besides the cwd (absolute).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        writable_roots: Vec<PathBuf>,
        /// Whether the network is allowed.
        #[serde(default)]
        network_access: bool,
        /// `true` keeps `$TMPDIR` read-only.
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
        /// `true` keeps `/tmp` read-only.
        #[serde(default)]
        exclude_slash_tmp: bool,
    },
}

impl SandboxPolicy {
    /// `ReadOnly` without network.
    #[must_use]
    pub const fn new_read_only_policy() -> Self {
        Self::ReadOnly {
            network_access: false,
        }
    }

    /// `WorkspaceWrite` with every knob off.
    #[must_use]
    pub const fn new_workspace_write_policy() -> Self {
        Self::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: false,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }
    }

    /// Writes allowed everywhere: `DangerFullAccess` and `ExternalSandbox`.
    #[must_use]
    pub const fn has_full_disk_write_access(&self) -> bool {
        matches!(self, Self::DangerFullAccess | Self::ExternalSandbox { .. })
    }

    /// Full network: `DangerFullAccess`, `ExternalSandbox{enabled}`, or `network_access: true`.
    #[must_use]
    pub const fn has_full_network_access(&self) -> bool {
        match self {
            Self::DangerFullAccess => true,
            Self::ExternalSandbox { network_access } => {
                matches!(network_access, NetworkAccess::Enabled)
            }
            Self::ReadOnly { network_access } | Self::WorkspaceWrite { network_access, .. } => {
                *network_access
            }
        }
    }
}
