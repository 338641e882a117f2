//! Permission-profile wire types (reference `protocol.md` §4–7, spec 01): every variant
//! round-trips, legacy input forms read as the canonical ones, invalid inputs are rejected, and
//! each type has a JSON Schema naming the canonical tags.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use airlock_protocol::ActivePermissionProfile;
use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemPermissions;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkAccess;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxEnforcement;
use airlock_protocol::SandboxPolicy;
use pretty_assertions::assert_eq;
use schemars::schema_for;

use crate::support::assert_reads_as;
use crate::support::assert_rejected;
use crate::support::assert_round_trip;

/// The profile Codex 0.169 passed to its helper for `-P :workspace -C /srv/golden/ws`.
const WORKSPACE: &str = r#"{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"/srv/golden/ws"},"access":"write"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"/srv/golden/ws/.git"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/srv/golden/ws/.agents"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/srv/golden/ws/.codex"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/srv/golden/ws/.aws"},"access":"read","missing_path_behavior":"skip"}]},"network":"restricted"}"#;

#[test]
fn access_modes() {
    assert_eq!(
        assert_round_trip::<FileSystemAccessMode>(r#""read""#),
        FileSystemAccessMode::Read
    );
    assert_eq!(
        assert_round_trip::<FileSystemAccessMode>(r#""write""#),
        FileSystemAccessMode::Write
    );
    assert_eq!(
        assert_round_trip::<FileSystemAccessMode>(r#""deny""#),
        FileSystemAccessMode::Deny
    );
    assert_reads_as::<FileSystemAccessMode>(r#""none""#, r#""deny""#);
    assert_rejected::<FileSystemAccessMode>(r#""rw""#);
    assert!(FileSystemAccessMode::Deny > FileSystemAccessMode::Write);
    assert!(FileSystemAccessMode::Write > FileSystemAccessMode::Read);
}

#[test]
fn special_paths() {
    for json in [
        r#"{"kind":"root"}"#,
        r#"{"kind":"minimal"}"#,
        r#"{"kind":"project_roots"}"#,
        r#"{"kind":"project_roots","subpath":"docs"}"#,
        r#"{"kind":"tmpdir"}"#,
        r#"{"kind":"slash_tmp"}"#,
        r#"{"kind":"unknown","path":":future"}"#,
        r#"{"kind":"unknown","path":":future","subpath":"x"}"#,
    ] {
        assert_round_trip::<FileSystemSpecialPath>(json);
    }
    assert_reads_as::<FileSystemSpecialPath>(
        r#"{"kind":"current_working_directory"}"#,
        r#"{"kind":"project_roots"}"#,
    );
    assert_rejected::<FileSystemSpecialPath>(r#"{"kind":"cwd"}"#);
}

#[test]
fn paths_and_entries() {
    assert_eq!(
        assert_round_trip::<FileSystemPath>(r#"{"type":"path","path":"/abs"}"#),
        FileSystemPath::Path {
            path: PathBuf::from("/abs")
        }
    );
    assert_round_trip::<FileSystemPath>(r#"{"type":"glob_pattern","pattern":"/ws/**/*.env"}"#);
    assert_round_trip::<FileSystemPath>(r#"{"type":"special","value":{"kind":"root"}}"#);
    assert_rejected::<FileSystemPath>(r#"{"type":"glob","pattern":"x"}"#);
    let entry = assert_round_trip::<FileSystemSandboxEntry>(
        r#"{"path":{"type":"path","path":"/ws/.git"},"access":"read","missing_path_behavior":"skip"}"#,
    );
    assert!(entry.missing_path_behavior.is_some());
    assert_reads_as::<FileSystemSandboxEntry>(
        r#"{"path":{"type":"path","path":"/x"},"access":"none"}"#,
        r#"{"path":{"type":"path","path":"/x"},"access":"deny"}"#,
    );
    assert_rejected::<FileSystemSandboxEntry>(
        r#"{"path":{"type":"path","path":"/x"},"access":"read","missing_path_behavior":"create"}"#,
    );
}

#[test]
fn file_system_policy() {
    let policy = assert_round_trip::<FileSystemSandboxPolicy>(
        r#"{"kind":"restricted","glob_scan_max_depth":3,"entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]}"#,
    );
    assert_eq!(policy.glob_scan_max_depth, NonZeroUsize::new(3));
    assert_round_trip::<FileSystemSandboxPolicy>(r#"{"kind":"unrestricted"}"#);
    assert_round_trip::<FileSystemSandboxPolicy>(r#"{"kind":"external-sandbox"}"#);
    assert_reads_as::<FileSystemSandboxPolicy>("{}", r#"{"kind":"restricted"}"#);
    assert_eq!(FileSystemSandboxPolicy::default().entries.len(), 1);
    assert_eq!(
        FileSystemSandboxPolicy::default().kind,
        FileSystemSandboxKind::Restricted
    );
    assert_rejected::<FileSystemSandboxPolicy>(r#"{"kind":"restricted","glob_scan_max_depth":0}"#);
    assert_rejected::<FileSystemSandboxPolicy>(r#"{"kind":"external_sandbox"}"#);
}

#[test]
fn network_policies() {
    assert_eq!(
        assert_round_trip::<NetworkSandboxPolicy>(r#""restricted""#),
        NetworkSandboxPolicy::Restricted
    );
    assert_eq!(
        assert_round_trip::<NetworkSandboxPolicy>(r#""enabled""#),
        NetworkSandboxPolicy::Enabled
    );
    assert_eq!(
        assert_round_trip::<NetworkAccess>(r#""enabled""#),
        NetworkAccess::Enabled
    );
    assert_rejected::<NetworkSandboxPolicy>(r#""full""#);
}

#[test]
fn permission_profiles() {
    let profile = assert_round_trip::<PermissionProfile>(WORKSPACE);
    assert_eq!(profile.enforcement(), SandboxEnforcement::Managed);
    assert_eq!(
        assert_round_trip::<PermissionProfile>(r#"{"type":"disabled"}"#),
        PermissionProfile::Disabled
    );
    assert_eq!(
        PermissionProfile::Disabled.network(),
        NetworkSandboxPolicy::Enabled
    );
    assert_eq!(
        assert_round_trip::<PermissionProfile>(r#"{"type":"external","network":"enabled"}"#),
        PermissionProfile::External {
            network: NetworkSandboxPolicy::Enabled
        }
    );
    assert_round_trip::<PermissionProfile>(
        r#"{"type":"managed","file_system":{"type":"unrestricted"},"network":"enabled"}"#,
    );
    assert_round_trip::<PermissionProfile>(
        r#"{"type":"managed","file_system":{"type":"restricted","entries":[],"glob_scan_max_depth":2},"network":"restricted"}"#,
    );
    assert_reads_as::<PermissionProfile>(
        r#"{"type":"managed","file_system":{"type":"restricted"},"network":"restricted"}"#,
        r#"{"type":"managed","file_system":{"type":"restricted","entries":[]},"network":"restricted"}"#,
    );
    assert_eq!(
        PermissionProfile::default(),
        PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries: Vec::new(),
                glob_scan_max_depth: None
            },
            network: NetworkSandboxPolicy::Restricted,
        }
    );
    assert_rejected::<PermissionProfile>(r#"{"type":"sandboxed"}"#);
    assert_rejected::<PermissionProfile>(r#"{"type":"external"}"#);
}

#[test]
fn permission_profile_reads_the_pre_tag_shape() {
    assert_reads_as::<PermissionProfile>(
        r#"{"network":{"enabled":true},"file_system":{"read":["/a"],"write":["/b"]}}"#,
        r#"{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"path","path":"/a"},"access":"read"},{"path":{"type":"path","path":"/b"},"access":"write"}]},"network":"enabled"}"#,
    );
    assert_reads_as::<PermissionProfile>(
        "{}",
        r#"{"type":"managed","file_system":{"type":"restricted","entries":[]},"network":"restricted"}"#,
    );
    assert_rejected::<PermissionProfile>(r#"{"network":{"enabled":true},"extra":1}"#);
}

#[test]
fn legacy_sandbox_policy() {
    assert_round_trip::<SandboxPolicy>(r#"{"type":"danger-full-access"}"#);
    assert_eq!(
        assert_round_trip::<SandboxPolicy>(r#"{"type":"read-only"}"#),
        SandboxPolicy::new_read_only_policy()
    );
    assert_round_trip::<SandboxPolicy>(r#"{"type":"read-only","network_access":true}"#);
    assert_round_trip::<SandboxPolicy>(
        r#"{"type":"external-sandbox","network_access":"restricted"}"#,
    );
    assert_round_trip::<SandboxPolicy>(
        r#"{"type":"workspace-write","writable_roots":["/x"],"network_access":true,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":true}"#,
    );
    assert_reads_as::<SandboxPolicy>(
        r#"{"type":"workspace-write"}"#,
        r#"{"type":"workspace-write","network_access":false,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":false}"#,
    );
    assert_reads_as::<SandboxPolicy>(
        r#"{"type":"read-only","network_access":false}"#,
        r#"{"type":"read-only"}"#,
    );
    assert_reads_as::<SandboxPolicy>(
        r#"{"type":"external-sandbox"}"#,
        r#"{"type":"external-sandbox","network_access":"restricted"}"#,
    );
    assert!(SandboxPolicy::DangerFullAccess.has_full_network_access());
    assert!(
        SandboxPolicy::ExternalSandbox {
            network_access: NetworkAccess::Restricted
        }
        .has_full_disk_write_access()
    );
    assert!(!SandboxPolicy::new_workspace_write_policy().has_full_disk_write_access());
    assert_rejected::<SandboxPolicy>(r#"{"type":"workspace_write"}"#);
}

#[test]
fn additional_permissions_both_forms() {
    let legacy = assert_round_trip::<AdditionalPermissionProfile>(
        r#"{"network":{"enabled":true},"file_system":{"read":["/a"],"write":["/b"]}}"#,
    );
    let file_system = legacy.file_system.clone().unwrap_or_default();
    assert!(file_system.uses_legacy_form());
    assert_eq!(
        file_system.entries,
        vec![
            FileSystemSandboxEntry::path("/a", FileSystemAccessMode::Read),
            FileSystemSandboxEntry::path("/b", FileSystemAccessMode::Write),
        ]
    );
    // A deny entry or a glob depth needs the canonical form.
    assert_round_trip::<AdditionalPermissionProfile>(
        r#"{"file_system":{"entries":[{"path":{"type":"glob_pattern","pattern":"/a/*.env"},"access":"deny"}],"glob_scan_max_depth":2}}"#,
    );
    // Canonical input that the legacy form can carry is written in the legacy form.
    assert_reads_as::<AdditionalPermissionProfile>(
        r#"{"file_system":{"entries":[{"path":{"type":"path","path":"/a"},"access":"write"}]}}"#,
        r#"{"file_system":{"write":["/a"]}}"#,
    );
    assert_round_trip::<AdditionalPermissionProfile>("{}");
    assert!(assert_round_trip::<AdditionalPermissionProfile>("{}").is_empty());
    assert_rejected::<AdditionalPermissionProfile>(r#"{"file_system":{"readonly":["/a"]}}"#);
    assert_rejected::<AdditionalPermissionProfile>(r#"{"file_system":{"glob_scan_max_depth":0}}"#);
    assert_rejected::<AdditionalPermissionProfile>(r#"{"network":{"enabled":true,"proxy":1}}"#);
    assert_eq!(FileSystemPermissions::default().entries.len(), 0);
}

#[test]
fn active_profile() {
    assert_round_trip::<ActivePermissionProfile>(r#"{"id":":workspace"}"#);
    assert_round_trip::<ActivePermissionProfile>(r#"{"id":"dev","extends":":workspace"}"#);
}

#[test]
fn schemas_name_canonical_forms() {
    let text = schema_for!(PermissionProfile).as_value().to_string();
    for name in [
        "managed",
        "disabled",
        "external",
        "file_system",
        "restricted",
        "unrestricted",
        "glob_pattern",
        "project_roots",
        "missing_path_behavior",
    ] {
        assert!(
            text.contains(&format!("\"{name}\"")),
            "{name} missing: {text}"
        );
    }
    assert!(!text.contains("\"none\""), "alias advertised: {text}");
    let text = schema_for!(AdditionalPermissionProfile)
        .as_value()
        .to_string();
    for name in ["read", "write", "entries", "glob_scan_max_depth", "enabled"] {
        assert!(
            text.contains(&format!("\"{name}\"")),
            "{name} missing: {text}"
        );
    }
    let text = schema_for!(SandboxPolicy).as_value().to_string();
    for name in [
        "danger-full-access",
        "read-only",
        "external-sandbox",
        "workspace-write",
        "writable_roots",
    ] {
        assert!(
            text.contains(&format!("\"{name}\"")),
            "{name} missing: {text}"
        );
    }
    for schema in [
        schema_for!(FileSystemSandboxPolicy),
        schema_for!(NetworkSandboxPolicy),
        schema_for!(NetworkAccess),
        schema_for!(SandboxEnforcement),
        schema_for!(ActivePermissionProfile),
    ] {
        assert!(schema.as_value().get("$schema").is_some());
    }
}
