//! `sandbox_mode`: the legacy coarse sandbox setting.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// The legacy sandbox mode (`sandbox_mode` in config, `-s/--sandbox` on the CLI).
///
/// JSON / TOML forms (reference `protocol.md` §3): `"read-only"` (the default),
/// `"workspace-write"`, `"danger-full-access"`. Other strings fail with serde's "unknown
/// variant" error. Permission profiles (spec 04) supersede this setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read anywhere, write nowhere.
    #[default]
    ReadOnly,
    /// Read anywhere, write inside the workspace roots (and temporary directories).
    WorkspaceWrite,
    /// No sandbox at all.
    DangerFullAccess,
}
