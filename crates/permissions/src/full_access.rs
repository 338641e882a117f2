//! "YOLO" detection (spec 04 §Projections).

use airlock_protocol::AskForApproval;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::PermissionProfile;

/// `true` when nothing would ever be asked or confined: approval `never` and every selected
/// environment's profile is `Disabled` or managed-unrestricted with network enabled. An empty
/// list is `false` (no environment, nothing to judge; fail closed).
#[must_use]
pub fn has_full_access(approval: AskForApproval, profiles: &[PermissionProfile]) -> bool {
    approval == AskForApproval::Never
        && !profiles.is_empty()
        && profiles.iter().all(|profile| match profile {
            PermissionProfile::Disabled => true,
            PermissionProfile::Managed {
                file_system: ManagedFileSystemPermissions::Unrestricted,
                network,
            } => network.is_enabled(),
            PermissionProfile::Managed { .. } | PermissionProfile::External { .. } => false,
        })
}
