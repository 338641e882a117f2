//! The legacy `SandboxPolicy` ↔ `PermissionProfile` projections (reference
//! `permissions-config.md` §4, spec 04 §Projections).

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::MissingPathBehavior;
use airlock_protocol::NetworkAccess;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxPolicy;

use crate::builtins::PROTECTED_METADATA_NAMES;
use crate::builtins::root_read;
use crate::builtins::workspace_entries;
use crate::context::ResolveContext;
use crate::context::Resolved;
use crate::context::resolve;
use crate::error::ConfigProblem;
use crate::error::PermissionsError;
use crate::error::Result;
use crate::paths::normalize_lexically;
use crate::queries::FileSystemPolicyQueries;
use crate::runtime::file_system_sandbox_policy;

const fn network_of(enabled: bool) -> NetworkSandboxPolicy {
    if enabled {
        NetworkSandboxPolicy::Enabled
    } else {
        NetworkSandboxPolicy::Restricted
    }
}

/// The symbolic profile of a legacy policy: `DangerFullAccess` → `Disabled`; `ExternalSandbox` →
/// `External`; `ReadOnly` → `:root` read; `WorkspaceWrite` → `:root` read, workspace roots write,
/// `/tmp` and `$TMPDIR` write unless excluded, each extra writable root write, then read-only
/// metadata (`missing_path_behavior = skip`) under the workspace roots and under each extra root.
/// Network enabled iff the legacy policy has full network access.
#[must_use]
pub fn permission_profile_from_legacy(policy: &SandboxPolicy) -> PermissionProfile {
    let network = network_of(policy.has_full_network_access());
    let entries = match policy {
        SandboxPolicy::DangerFullAccess => return PermissionProfile::Disabled,
        SandboxPolicy::ExternalSandbox { .. } => return PermissionProfile::External { network },
        SandboxPolicy::ReadOnly { .. } => vec![root_read()],
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
            ..
        } => {
            let mut entries = workspace_entries(!exclude_slash_tmp, !exclude_tmpdir_env_var);
            // Extra roots go before the metadata block, as in Codex's legacy conversion.
            let metadata_start = entries.len() - PROTECTED_METADATA_NAMES.len();
            let mut unique: Vec<PathBuf> = Vec::new();
            for root in writable_roots {
                let root = normalize_lexically(root);
                if !unique.contains(&root) {
                    unique.push(root);
                }
            }
            let extra = unique.iter().map(|root| {
                FileSystemSandboxEntry::path(root.clone(), FileSystemAccessMode::Write)
            });
            entries.splice(metadata_start..metadata_start, extra);
            for root in &unique {
                entries.extend(PROTECTED_METADATA_NAMES.into_iter().map(|name| {
                    FileSystemSandboxEntry {
                        missing_path_behavior: Some(MissingPathBehavior::Skip),
                        ..FileSystemSandboxEntry::path(root.join(name), FileSystemAccessMode::Read)
                    }
                }));
            }
            entries
        }
    };
    PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries,
            glob_scan_max_depth: None,
        },
        network,
    }
}

/// Projects a profile onto the legacy policy (reference §4 "Reverse"): `Disabled` →
/// `DangerFullAccess`; `External` → `ExternalSandbox`; managed unrestricted or full-disk-write →
/// `DangerFullAccess` with network, else `ExternalSandbox{restricted}`; a writable workspace root
/// (the cwd or `project_roots` without subpath) → `WorkspaceWrite` with the other writable paths;
/// no writes → `ReadOnly`.
///
/// # Errors
/// [`PermissionsError::Projection`] with [`ConfigProblem::WritesOutsideWorkspace`] when writes
/// are allowed elsewhere but not in the workspace root.
pub fn to_legacy_sandbox_policy(profile: &PermissionProfile, cwd: &Path) -> Result<SandboxPolicy> {
    let network = profile.network();
    let external = |network: NetworkSandboxPolicy| SandboxPolicy::ExternalSandbox {
        network_access: if network.is_enabled() {
            NetworkAccess::Enabled
        } else {
            NetworkAccess::Restricted
        },
    };
    let unrestricted = if network.is_enabled() {
        SandboxPolicy::DangerFullAccess
    } else {
        external(network)
    };
    let policy = match profile {
        PermissionProfile::Disabled => return Ok(SandboxPolicy::DangerFullAccess),
        PermissionProfile::External { network } => return Ok(external(*network)),
        PermissionProfile::Managed { .. } => file_system_sandbox_policy(profile),
    };
    if policy.kind != FileSystemSandboxKind::Restricted || policy.has_full_disk_write_access() {
        return Ok(unrestricted);
    }
    let ctx = ResolveContext::with_tmpdir(cwd, None);
    let cwd = normalize_lexically(cwd);
    let writes: Vec<&FileSystemSandboxEntry> = policy
        .entries
        .iter()
        .filter(|entry| entry.access == FileSystemAccessMode::Write)
        .collect();
    let is_special = |entry: &FileSystemSandboxEntry, want: &FileSystemSpecialPath| matches!(&entry.path, FileSystemPath::Special { value } if value == want);
    let workspace = FileSystemSpecialPath::ProjectRoots { subpath: None };
    let workspace_writable = writes.iter().any(|entry| {
        is_special(entry, &workspace)
            || matches!(&entry.path, FileSystemPath::Path { path } if normalize_lexically(path) == cwd)
    });
    if !workspace_writable {
        if writes.is_empty() {
            return Ok(SandboxPolicy::ReadOnly {
                network_access: network.is_enabled(),
            });
        }
        return Err(PermissionsError::Projection(
            ConfigProblem::WritesOutsideWorkspace,
        ));
    }
    let mut writable_roots: Vec<PathBuf> = Vec::new();
    for entry in &writes {
        if is_special(entry, &workspace)
            || is_special(entry, &FileSystemSpecialPath::Tmpdir)
            || is_special(entry, &FileSystemSpecialPath::SlashTmp)
        {
            continue;
        }
        if let Resolved::Path(path) = resolve(&entry.path, &ctx)
            && path != cwd
            && !writable_roots.contains(&path)
        {
            writable_roots.push(path);
        }
    }
    Ok(SandboxPolicy::WorkspaceWrite {
        writable_roots,
        network_access: network.is_enabled(),
        exclude_tmpdir_env_var: !writes
            .iter()
            .any(|entry| is_special(entry, &FileSystemSpecialPath::Tmpdir)),
        exclude_slash_tmp: !writes
            .iter()
            .any(|entry| is_special(entry, &FileSystemSpecialPath::SlashTmp)),
    })
}
