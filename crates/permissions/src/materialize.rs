//! Materialisation of symbolic workspace-root entries (spec 04 §Compilation and
//! materialisation; reference `permissions-config.md` §5).

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::PermissionProfile;

use crate::paths::join_pattern;
use crate::paths::normalize_lexically;

/// Rewrites every workspace-rooted entry — `project_roots{subpath}` and relative glob patterns —
/// into concrete per-root entries; everything else is kept as is.
///
/// Order (matches Codex 0.169's helper arguments): each workspace-rooted entry is replaced in
/// place by its expansion for the first root; the expansions for every further root follow at
/// the end, root by root, in entry order. Repeated roots count once. With no roots the
/// workspace-rooted entries are dropped (there is nothing for them to name, so nothing widens).
/// `Disabled` and `External` profiles are returned unchanged.
#[must_use]
pub fn materialize_project_roots_with_workspace_roots(
    profile: &PermissionProfile,
    roots: &[PathBuf],
) -> PermissionProfile {
    match profile {
        PermissionProfile::Managed {
            file_system:
                ManagedFileSystemPermissions::Restricted {
                    entries,
                    glob_scan_max_depth,
                },
            network,
        } => PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries: materialize_entries(entries, roots),
                glob_scan_max_depth: *glob_scan_max_depth,
            },
            network: *network,
        },
        other => other.clone(),
    }
}

/// The entry-list form of [`materialize_project_roots_with_workspace_roots`].
#[must_use]
pub fn materialize_entries(
    entries: &[FileSystemSandboxEntry],
    roots: &[PathBuf],
) -> Vec<FileSystemSandboxEntry> {
    let mut unique: Vec<PathBuf> = Vec::new();
    for root in roots {
        let root = normalize_lexically(root);
        if !unique.contains(&root) {
            unique.push(root);
        }
    }
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        match unique.first() {
            _ if !is_workspace_rooted(entry) => out.push(entry.clone()),
            Some(first) => out.extend(for_root(entry, first)),
            None => {}
        }
    }
    for root in unique.iter().skip(1) {
        out.extend(entries.iter().filter_map(|entry| for_root(entry, root)));
    }
    out
}

/// Whether the entry names something relative to the workspace roots.
pub(crate) fn is_workspace_rooted(entry: &FileSystemSandboxEntry) -> bool {
    match &entry.path {
        FileSystemPath::Special {
            value: FileSystemSpecialPath::ProjectRoots { .. },
        } => true,
        FileSystemPath::GlobPattern { pattern } => !Path::new(pattern).is_absolute(),
        _ => false,
    }
}

/// The concrete entry for one root, or `None` when `entry` is not workspace-rooted.
fn for_root(entry: &FileSystemSandboxEntry, root: &Path) -> Option<FileSystemSandboxEntry> {
    let path = match &entry.path {
        FileSystemPath::Special {
            value: FileSystemSpecialPath::ProjectRoots { subpath },
        } => FileSystemPath::Path {
            path: subpath.as_ref().map_or_else(
                || root.to_path_buf(),
                |sub| normalize_lexically(&root.join(sub)),
            ),
        },
        FileSystemPath::GlobPattern { pattern } if !Path::new(pattern).is_absolute() => {
            FileSystemPath::GlobPattern {
                pattern: join_pattern(root, pattern),
            }
        }
        _ => return None,
    };
    Some(FileSystemSandboxEntry {
        path,
        ..entry.clone()
    })
}
