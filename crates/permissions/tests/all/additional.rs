//! Additional permissions: normalisation, intersection and the effective profile (spec 04).

use std::num::NonZeroUsize;
use std::path::Path;

use airlock_permissions::effective_permission_profile;
use airlock_permissions::intersect_permission_profiles;
use airlock_permissions::normalize_additional_permissions;
use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::FileSystemAccessMode::Deny;
use airlock_protocol::FileSystemAccessMode::Read;
use airlock_protocol::FileSystemAccessMode::Write;
use airlock_protocol::FileSystemPermissions;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use pretty_assertions::assert_eq;

fn fs(entries: Vec<FileSystemSandboxEntry>, depth: Option<usize>) -> AdditionalPermissionProfile {
    AdditionalPermissionProfile {
        network: None,
        file_system: Some(FileSystemPermissions {
            entries,
            glob_scan_max_depth: depth.and_then(NonZeroUsize::new),
        }),
    }
}

#[test]
fn normalisation_drops_what_cannot_be_honoured() {
    let raw = AdditionalPermissionProfile {
        network: Some(NetworkPermissions { enabled: None }),
        file_system: Some(FileSystemPermissions {
            entries: vec![
                FileSystemSandboxEntry::path("relative", Write),
                FileSystemSandboxEntry::path("", Read),
                FileSystemSandboxEntry::path("/a/./b/../c", Read),
                FileSystemSandboxEntry::deny_glob("*.env"),
                FileSystemSandboxEntry {
                    access: Write,
                    ..FileSystemSandboxEntry::deny_glob("/x/*")
                },
                FileSystemSandboxEntry::special(
                    FileSystemSpecialPath::Unknown {
                        path: ":new".into(),
                        subpath: None,
                    },
                    Read,
                ),
            ],
            glob_scan_max_depth: NonZeroUsize::new(3),
        }),
    };
    assert_eq!(
        normalize_additional_permissions(&raw),
        fs(vec![FileSystemSandboxEntry::path("/a/c", Read)], None).clone_without_network()
    );
    let empty = AdditionalPermissionProfile {
        network: Some(NetworkPermissions { enabled: None }),
        file_system: Some(FileSystemPermissions::default()),
    };
    assert!(normalize_additional_permissions(&empty).is_empty());
}

trait WithoutNetwork {
    fn clone_without_network(self) -> Self;
}

impl WithoutNetwork for AdditionalPermissionProfile {
    fn clone_without_network(mut self) -> Self {
        self.network = None;
        self
    }
}

#[test]
fn grant_is_limited_to_request_and_keeps_both_sides_denies() {
    let requested = fs(
        vec![
            FileSystemSandboxEntry::path("/proj", Write),
            FileSystemSandboxEntry::path("/proj/secrets", Deny),
            FileSystemSandboxEntry::deny_glob("/proj/**/*.pem"),
            FileSystemSandboxEntry::path("/elsewhere/x", Deny),
        ],
        Some(2),
    );
    let granted = fs(
        vec![
            FileSystemSandboxEntry::path("/proj/src", Write),
            FileSystemSandboxEntry::path("/", Write),
            FileSystemSandboxEntry::path("/proj/src/gen", Deny),
        ],
        None,
    );
    let result = intersect_permission_profiles(&requested, &granted, Path::new("/proj"));
    assert_eq!(
        result,
        fs(
            vec![
                FileSystemSandboxEntry::path("/proj/src", Write),
                FileSystemSandboxEntry::deny_glob("/proj/**/*.pem"),
                FileSystemSandboxEntry::path("/proj/src/gen", Deny),
            ],
            Some(2),
        )
    );
}

#[test]
fn read_grant_inside_write_request_and_write_grant_inside_read_request() {
    let requested = fs(vec![FileSystemSandboxEntry::path("/d", Read)], None);
    let granted = fs(vec![FileSystemSandboxEntry::path("/d/x", Write)], None);
    assert!(intersect_permission_profiles(&requested, &granted, Path::new("/")).is_empty());
    let requested = fs(vec![FileSystemSandboxEntry::path("/d", Write)], None);
    let granted = fs(vec![FileSystemSandboxEntry::path("/d/x", Read)], None);
    assert_eq!(
        intersect_permission_profiles(&requested, &granted, Path::new("/")),
        granted
    );
}

#[test]
fn network_needs_both_sides() {
    let on = AdditionalPermissionProfile {
        network: Some(NetworkPermissions {
            enabled: Some(true),
        }),
        file_system: None,
    };
    let off = AdditionalPermissionProfile {
        network: Some(NetworkPermissions {
            enabled: Some(false),
        }),
        file_system: None,
    };
    assert_eq!(intersect_permission_profiles(&on, &on, Path::new("/")), on);
    assert!(intersect_permission_profiles(&on, &off, Path::new("/")).is_empty());
    assert!(intersect_permission_profiles(&off, &on, Path::new("/")).is_empty());
}

#[test]
fn effective_profile_keeps_enforcement() {
    let extra = AdditionalPermissionProfile {
        network: Some(NetworkPermissions {
            enabled: Some(true),
        }),
        file_system: Some(FileSystemPermissions {
            entries: vec![
                FileSystemSandboxEntry::path("/data", Write),
                FileSystemSandboxEntry::deny_glob("/data/*.key"),
            ],
            glob_scan_max_depth: None,
        }),
    };
    assert_eq!(
        effective_permission_profile(
            &PermissionProfile::External {
                network: NetworkSandboxPolicy::Restricted
            },
            Some(&extra)
        ),
        PermissionProfile::External {
            network: NetworkSandboxPolicy::Enabled
        }
    );
    assert_eq!(
        effective_permission_profile(&PermissionProfile::Disabled, Some(&extra)),
        PermissionProfile::Disabled
    );
    let base = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries: vec![FileSystemSandboxEntry::special(
                FileSystemSpecialPath::Root,
                Read,
            )],
            glob_scan_max_depth: NonZeroUsize::new(4),
        },
        network: NetworkSandboxPolicy::Restricted,
    };
    assert_eq!(
        effective_permission_profile(&base, Some(&extra)),
        PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries: vec![
                    FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, Read),
                    FileSystemSandboxEntry::path("/data", Write),
                    FileSystemSandboxEntry::deny_glob("/data/*.key"),
                ],
                glob_scan_max_depth: None,
            },
            network: NetworkSandboxPolicy::Enabled,
        }
    );
    assert_eq!(effective_permission_profile(&base, None), base);
}
