//! Additional permissions: normalisation, intersection of a request with a grant, and the
//! effective profile (spec 04 §Additional permissions; spec README invariants 1 and 10).

use std::num::NonZeroUsize;
use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemPermissions;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;

use crate::context::ResolveContext;
use crate::context::Resolved;
use crate::context::resolve;
use crate::paths::normalize_lexically;
use crate::queries::FileSystemPolicyQueries;

/// Drops what cannot be honoured: exact paths that are relative or empty, glob patterns that are
/// relative, empty or not `deny`, unknown special tokens; then empty structures (a network part
/// without `enabled`, a file-system part without entries). A glob depth is kept only while a deny
/// glob remains. Paths are normalised lexically.
#[must_use]
pub fn normalize_additional_permissions(
    permissions: &AdditionalPermissionProfile,
) -> AdditionalPermissionProfile {
    let network = permissions
        .network
        .filter(|network| network.enabled.is_some());
    let file_system = permissions.file_system.as_ref().and_then(|file_system| {
        let entries: Vec<FileSystemSandboxEntry> = file_system
            .entries
            .iter()
            .filter_map(normalize_entry)
            .collect();
        if entries.is_empty() {
            return None;
        }
        let has_glob = entries
            .iter()
            .any(|entry| matches!(entry.path, FileSystemPath::GlobPattern { .. }));
        Some(FileSystemPermissions {
            entries,
            glob_scan_max_depth: file_system.glob_scan_max_depth.filter(|_| has_glob),
        })
    });
    AdditionalPermissionProfile {
        network,
        file_system,
    }
}

fn normalize_entry(entry: &FileSystemSandboxEntry) -> Option<FileSystemSandboxEntry> {
    let path = match &entry.path {
        FileSystemPath::Path { path } if path.is_absolute() => FileSystemPath::Path {
            path: normalize_lexically(path),
        },
        FileSystemPath::GlobPattern { pattern }
            if entry.access == FileSystemAccessMode::Deny && Path::new(pattern).is_absolute() =>
        {
            entry.path.clone()
        }
        FileSystemPath::Special { value }
            if !matches!(value, FileSystemSpecialPath::Unknown { .. }) =>
        {
            entry.path.clone()
        }
        _ => return None,
    };
    Some(FileSystemSandboxEntry {
        path,
        ..entry.clone()
    })
}

/// An entry resolved for comparison: a concrete path, a glob's literal directory prefix, or a
/// symbol that only equals itself.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    Path(PathBuf),
    Glob(PathBuf),
    Opaque(FileSystemPath),
}

fn scope(entry: &FileSystemSandboxEntry, ctx: &ResolveContext) -> Scope {
    match resolve(&entry.path, ctx) {
        Resolved::Path(path) => Scope::Path(path),
        Resolved::Glob(pattern) => Scope::Glob(glob_prefix(&pattern)),
        Resolved::Nothing => Scope::Opaque(entry.path.clone()),
    }
}

/// The directory before the first component with a glob character.
fn glob_prefix(pattern: &str) -> PathBuf {
    Path::new(pattern)
        .components()
        .take_while(|component| !crate::paths::is_glob(&component.as_os_str().to_string_lossy()))
        .collect()
}

/// Whether `have` allows at least `want` (write covers read; deny allows nothing).
fn covers(have: FileSystemAccessMode, want: FileSystemAccessMode) -> bool {
    have != FileSystemAccessMode::Deny
        && (have == FileSystemAccessMode::Write || want == FileSystemAccessMode::Read)
}

/// Whether a deny scope may affect an accepted scope: either contains the other, or one of them
/// cannot be resolved here (then the deny is kept, to be safe).
fn overlaps(deny: &Scope, accepted: &Scope) -> bool {
    match (deny, accepted) {
        (Scope::Path(deny) | Scope::Glob(deny), Scope::Path(accepted)) => {
            deny.starts_with(accepted) || accepted.starts_with(deny)
        }
        (_, Scope::Glob(_)) => false,
        (Scope::Opaque(_), _) | (_, Scope::Opaque(_)) => true,
    }
}

/// What a reviewer's grant leaves once limited to the request (spec 04, invariant 1).
///
/// Both sides are normalised first. Kept: each granted read/write entry whose path the request
/// (resolved as enforcement resolves it) allows with at least the same access (write covers
/// read; unresolvable specials must appear in the request as such); each deny entry of either
/// side that overlaps a kept entry; the request's read entries strictly inside a kept write
/// entry, where the grant allows reading; the larger `glob_scan_max_depth` of the sides that
/// contributed a kept deny glob (unset on such a side = unbounded scan, which wins); network only
/// when both sides say `enabled = true`. An empty file-system part is dropped. `cwd` resolves
/// special paths (`project_roots` → the cwd).
#[must_use]
pub fn intersect_permission_profiles(
    requested: &AdditionalPermissionProfile,
    granted: &AdditionalPermissionProfile,
    cwd: &Path,
) -> AdditionalPermissionProfile {
    let requested = normalize_additional_permissions(requested);
    let granted = normalize_additional_permissions(granted);
    let ctx = ResolveContext::with_tmpdir(cwd, None);
    let enabled = |side: &AdditionalPermissionProfile| {
        side.network.and_then(|network| network.enabled) == Some(true)
    };
    let network = (enabled(&requested) && enabled(&granted)).then_some(NetworkPermissions {
        enabled: Some(true),
    });

    let empty = FileSystemPermissions::default();
    let request_fs = requested.file_system.as_ref().unwrap_or(&empty);
    let grant_fs = granted.file_system.as_ref().unwrap_or(&empty);
    let allows = |fs: &FileSystemPermissions| -> Vec<(FileSystemSandboxEntry, Scope)> {
        fs.entries
            .iter()
            .filter(|entry| entry.access != FileSystemAccessMode::Deny)
            .map(|entry| (entry.clone(), scope(entry, &ctx)))
            .collect()
    };
    let requested_allows = allows(request_fs);
    // A granted entry is accepted when the request, resolved the way enforcement resolves it
    // (most specific entry wins, deny globs deny), allows at least that access at its path.
    let request_policy = FileSystemSandboxPolicy::restricted(request_fs.entries.clone());
    let grant_policy = FileSystemSandboxPolicy::restricted(grant_fs.entries.clone());
    let accepted: Vec<(FileSystemSandboxEntry, Scope)> = allows(grant_fs)
        .into_iter()
        .filter(|(entry, entry_scope)| match entry_scope {
            Scope::Path(path) => covers(request_policy.resolve_access(path, &ctx), entry.access),
            Scope::Opaque(_) => request_fs
                .entries
                .iter()
                .any(|request| request.path == entry.path && covers(request.access, entry.access)),
            Scope::Glob(_) => false,
        })
        .collect();
    let mut entries: Vec<FileSystemSandboxEntry> =
        accepted.iter().map(|(entry, _)| entry.clone()).collect();
    let mut depth: Option<Option<NonZeroUsize>> = None;
    for side in [request_fs, grant_fs] {
        for entry in side
            .entries
            .iter()
            .filter(|entry| entry.access == FileSystemAccessMode::Deny)
        {
            let deny_scope = scope(entry, &ctx);
            let constrains = accepted
                .iter()
                .any(|(_, accepted_scope)| overlaps(&deny_scope, accepted_scope));
            if !constrains || entries.contains(entry) {
                continue;
            }
            if matches!(entry.path, FileSystemPath::GlobPattern { .. }) {
                depth = Some(merge_depth(depth, side.glob_scan_max_depth));
            }
            entries.push(entry.clone());
        }
    }
    // The request's narrower read entries inside an accepted write entry keep their limit.
    for (entry, entry_scope) in &requested_allows {
        let Scope::Path(path) = entry_scope else {
            continue;
        };
        // Only where the grant itself allows reading: otherwise the grant's deny already holds
        // there and a deeper read entry would re-open it.
        let narrows = entry.access == FileSystemAccessMode::Read
            && covers(grant_policy.resolve_access(path, &ctx), FileSystemAccessMode::Read)
            && accepted.iter().any(|(accepted_entry, accepted_scope)| {
                accepted_entry.access == FileSystemAccessMode::Write
                    && matches!(accepted_scope, Scope::Path(outer) if path.starts_with(outer) && path != outer)
            });
        if narrows && !entries.contains(entry) {
            entries.push(entry.clone());
        }
    }
    let file_system = (!accepted.is_empty()).then(|| FileSystemPermissions {
        entries,
        glob_scan_max_depth: depth.flatten(),
    });
    AdditionalPermissionProfile {
        network,
        file_system,
    }
}

/// Deeper scans enforce more of a deny glob; `None` (unbounded) beats any bound.
fn merge_depth(
    current: Option<Option<NonZeroUsize>>,
    side: Option<NonZeroUsize>,
) -> Option<NonZeroUsize> {
    match (current, side) {
        (None, side) => side,
        (Some(None), _) | (Some(Some(_)), None) => None,
        (Some(Some(a)), Some(b)) => Some(a.max(b)),
    }
}

/// The base profile widened by `additional`, keeping the base's enforcement (invariant 10):
/// `Disabled` stays `Disabled`; `External` stays `External` (network enabled if added);
/// `Managed` restricted gets the normalised additional entries appended (deny entries keep
/// narrowing) and the deeper glob depth; `Managed` unrestricted keeps its filesystem; network is
/// enabled when either side enables it.
#[must_use]
pub fn effective_permission_profile(
    base: &PermissionProfile,
    additional: Option<&AdditionalPermissionProfile>,
) -> PermissionProfile {
    let Some(additional) = additional.map(normalize_additional_permissions) else {
        return base.clone();
    };
    let widen_network = |network: NetworkSandboxPolicy| {
        if additional.network.and_then(|network| network.enabled) == Some(true) {
            NetworkSandboxPolicy::Enabled
        } else {
            network
        }
    };
    match base {
        PermissionProfile::Disabled => PermissionProfile::Disabled,
        PermissionProfile::External { network } => PermissionProfile::External {
            network: widen_network(*network),
        },
        PermissionProfile::Managed {
            file_system,
            network,
        } => {
            let file_system = match (file_system, &additional.file_system) {
                (
                    ManagedFileSystemPermissions::Restricted {
                        entries,
                        glob_scan_max_depth,
                    },
                    Some(extra),
                ) => {
                    let mut merged = entries.clone();
                    merged.extend(extra.entries.iter().cloned());
                    let has_extra_glob = extra
                        .entries
                        .iter()
                        .any(|entry| matches!(entry.path, FileSystemPath::GlobPattern { .. }));
                    let depth = if has_extra_glob {
                        merge_depth(Some(*glob_scan_max_depth), extra.glob_scan_max_depth)
                    } else {
                        *glob_scan_max_depth
                    };
                    ManagedFileSystemPermissions::Restricted {
                        entries: merged,
                        glob_scan_max_depth: depth,
                    }
                }
                (other, _) => other.clone(),
            };
            PermissionProfile::Managed {
                file_system,
                network: widen_network(*network),
            }
        }
    }
}
