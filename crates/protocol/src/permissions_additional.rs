//! Per-command permission overlays: `AdditionalPermissionProfile` and its parts
//! (reference `protocol.md` §7, spec 04 §Additional permissions).

use std::num::NonZeroUsize;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;

use crate::FileSystemAccessMode;
use crate::FileSystemPath;
use crate::FileSystemSandboxEntry;

/// Extra network permission requested or granted for one command.
///
/// JSON: `{"enabled":true}`; `enabled` omitted when absent. Unknown fields are rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkPermissions {
    /// `Some(true)` asks for (or grants) network access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Extra filesystem entries requested or granted for one command.
///
/// Two JSON forms (reference `protocol.md` §7):
/// - legacy `{"read"?:["/abs",...],"write"?:["/abs",...]}`, written whenever every entry is an
///   exact `path` with `read` or `write`, no entry has `missing_path_behavior` and there is no
///   glob depth (empty lists omitted, so no entries at all is `{}`);
/// - canonical `{"entries"?:[FileSystemSandboxEntry...],"glob_scan_max_depth"?:n}` otherwise.
///
/// Reading accepts either, or both mixed (legacy `read`, then `write`, then `entries`, in that
/// order). Unknown fields and a `glob_scan_max_depth` of 0 are rejected.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, JsonSchema)]
#[schemars(with = "FileSystemPermissionsWire")]
pub struct FileSystemPermissions {
    /// The entries, in order.
    pub entries: Vec<FileSystemSandboxEntry>,
    /// Directory depth for expanding deny globs (≥ 1), if set.
    pub glob_scan_max_depth: Option<NonZeroUsize>,
}

/// Both JSON forms of [`FileSystemPermissions`] in one shape (serde mirror).
#[derive(Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FileSystemPermissionsWire {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    read: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    write: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    entries: Vec<FileSystemSandboxEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    glob_scan_max_depth: Option<NonZeroUsize>,
}

impl FileSystemPermissions {
    /// The exact path and access of an entry that the legacy form can carry, or `None`.
    fn legacy_part(entry: &FileSystemSandboxEntry) -> Option<(&PathBuf, FileSystemAccessMode)> {
        match (&entry.path, entry.access, entry.missing_path_behavior) {
            (FileSystemPath::Path { path }, access, None)
                if access != FileSystemAccessMode::Deny =>
            {
                Some((path, access))
            }
            _ => None,
        }
    }

    /// Whether serialisation uses the legacy `{read, write}` form.
    #[must_use]
    pub fn uses_legacy_form(&self) -> bool {
        self.glob_scan_max_depth.is_none()
            && self
                .entries
                .iter()
                .all(|entry| Self::legacy_part(entry).is_some())
    }
}

impl Serialize for FileSystemPermissions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut wire = FileSystemPermissionsWire::default();
        if self.uses_legacy_form() {
            for (path, access) in self.entries.iter().filter_map(Self::legacy_part) {
                match access {
                    FileSystemAccessMode::Write => wire.write.push(path.clone()),
                    _ => wire.read.push(path.clone()),
                }
            }
        } else {
            wire.entries.clone_from(&self.entries);
            wire.glob_scan_max_depth = self.glob_scan_max_depth;
        }
        wire.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FileSystemPermissions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = FileSystemPermissionsWire::deserialize(deserializer)?;
        let legacy = |paths: Vec<PathBuf>, access| {
            paths
                .into_iter()
                .map(move |path| FileSystemSandboxEntry::path(path, access))
        };
        let mut entries: Vec<FileSystemSandboxEntry> =
            legacy(wire.read, FileSystemAccessMode::Read)
                .chain(legacy(wire.write, FileSystemAccessMode::Write))
                .collect();
        entries.extend(wire.entries);
        Ok(Self {
            entries,
            glob_scan_max_depth: wire.glob_scan_max_depth,
        })
    }
}

/// Permissions added to (or requested on top of) the turn's profile for one command
/// (`additional_permissions` with `sandbox_permissions = "with_additional_permissions"`).
///
/// JSON: `{"network"?:NetworkPermissions,"file_system"?:FileSystemPermissions}`; absent parts
/// omitted. Called `PermissionProfile` in Codex ≤ 0.125 (reference `protocol.md` §7).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdditionalPermissionProfile {
    /// Extra network permission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkPermissions>,
    /// Extra filesystem entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_system: Option<FileSystemPermissions>,
}

impl AdditionalPermissionProfile {
    /// `true` when neither part is present.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.network.is_none() && self.file_system.is_none()
    }
}
