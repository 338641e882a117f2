//! Splitting a `PermissionProfile` into the runtime filesystem and network policies and back
//! (reference `protocol.md` §5 "Projections" and `from_runtime_permissions`).

use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxEnforcement;

/// The filesystem policy enforcement reads: `Disabled` → unrestricted; `External` →
/// external-sandbox; `Managed` → its own (restricted entries, or unrestricted).
#[must_use]
pub fn file_system_sandbox_policy(profile: &PermissionProfile) -> FileSystemSandboxPolicy {
    match profile {
        PermissionProfile::Disabled => FileSystemSandboxPolicy::unrestricted(),
        PermissionProfile::External { .. } => FileSystemSandboxPolicy::external_sandbox(),
        PermissionProfile::Managed { file_system, .. } => match file_system {
            ManagedFileSystemPermissions::Restricted {
                entries,
                glob_scan_max_depth,
            } => FileSystemSandboxPolicy {
                kind: FileSystemSandboxKind::Restricted,
                glob_scan_max_depth: *glob_scan_max_depth,
                entries: entries.clone(),
            },
            ManagedFileSystemPermissions::Unrestricted => FileSystemSandboxPolicy::unrestricted(),
        },
    }
}

/// The network policy: `Disabled` → enabled; otherwise the profile's.
#[must_use]
pub fn network_sandbox_policy(profile: &PermissionProfile) -> NetworkSandboxPolicy {
    profile.network()
}

/// Rebuilds a profile from runtime policies, keeping `enforcement`: an external-sandbox
/// filesystem → `External`; unrestricted under `Disabled` enforcement → `Disabled`; otherwise
/// `Managed` (an unrestricted filesystem under `Managed` stays managed + unrestricted). An
/// `External` enforcement always yields `External` (spec README invariant 10).
#[must_use]
pub fn from_runtime_permissions(
    file_system: &FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
    enforcement: SandboxEnforcement,
) -> PermissionProfile {
    match (enforcement, file_system.kind) {
        (SandboxEnforcement::External, _) | (_, FileSystemSandboxKind::ExternalSandbox) => {
            PermissionProfile::External { network }
        }
        (SandboxEnforcement::Disabled, FileSystemSandboxKind::Unrestricted) => {
            PermissionProfile::Disabled
        }
        (_, FileSystemSandboxKind::Unrestricted) => PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Unrestricted,
            network,
        },
        (_, FileSystemSandboxKind::Restricted) => PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries: file_system.entries.clone(),
                glob_scan_max_depth: file_system.glob_scan_max_depth,
            },
            network,
        },
    }
}
