//! Legacy `SandboxPolicy` projections (reference §4, spec 04 §Projections) and `has_full_access`.

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::PermissionProfile;
use airlock_permissions::has_full_access;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_permissions::permission_profile_from_legacy;
use airlock_permissions::to_legacy_sandbox_policy;
use airlock_protocol::AskForApproval;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkAccess;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::SandboxPolicy;
use pretty_assertions::assert_eq;

fn round_trip(policy: &SandboxPolicy) -> SandboxPolicy {
    let cwd = Path::new("/ws");
    let profile = materialize_project_roots_with_workspace_roots(
        &permission_profile_from_legacy(policy),
        &[cwd.to_path_buf()],
    );
    match to_legacy_sandbox_policy(&profile, cwd) {
        Ok(back) => back,
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn legacy_policies_round_trip() {
    let policies = [
        SandboxPolicy::DangerFullAccess,
        SandboxPolicy::new_read_only_policy(),
        SandboxPolicy::ReadOnly {
            network_access: true,
        },
        SandboxPolicy::ExternalSandbox {
            network_access: NetworkAccess::Enabled,
        },
        SandboxPolicy::ExternalSandbox {
            network_access: NetworkAccess::Restricted,
        },
        SandboxPolicy::new_workspace_write_policy(),
        SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![PathBuf::from("/x"), PathBuf::from("/y")],
            network_access: true,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: false,
        },
    ];
    for policy in policies {
        assert_eq!(round_trip(&policy), policy);
    }
}

#[test]
fn enforcement_mapping() {
    assert_eq!(
        permission_profile_from_legacy(&SandboxPolicy::DangerFullAccess),
        PermissionProfile::Disabled
    );
    assert_eq!(
        permission_profile_from_legacy(&SandboxPolicy::ExternalSandbox {
            network_access: NetworkAccess::Enabled
        }),
        PermissionProfile::External {
            network: NetworkSandboxPolicy::Enabled
        }
    );
    let unrestricted = |network| PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Unrestricted,
        network,
    };
    assert_eq!(
        to_legacy_sandbox_policy(&unrestricted(NetworkSandboxPolicy::Enabled), Path::new("/")).ok(),
        Some(SandboxPolicy::DangerFullAccess)
    );
    assert_eq!(
        to_legacy_sandbox_policy(
            &unrestricted(NetworkSandboxPolicy::Restricted),
            Path::new("/")
        )
        .ok(),
        Some(SandboxPolicy::ExternalSandbox {
            network_access: NetworkAccess::Restricted
        })
    );
}

#[test]
fn full_access_detection() {
    let managed = permission_profile_from_legacy(&SandboxPolicy::new_read_only_policy());
    let open = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Unrestricted,
        network: NetworkSandboxPolicy::Enabled,
    };
    assert!(has_full_access(
        AskForApproval::Never,
        &[PermissionProfile::Disabled, open.clone()]
    ));
    assert!(!has_full_access(
        AskForApproval::OnRequest,
        &[PermissionProfile::Disabled]
    ));
    assert!(!has_full_access(
        AskForApproval::Never,
        &[PermissionProfile::Disabled, managed]
    ));
    assert!(!has_full_access(
        AskForApproval::Never,
        &[PermissionProfile::External {
            network: NetworkSandboxPolicy::Enabled
        }]
    ));
    assert!(!has_full_access(AskForApproval::Never, &[]));
}
