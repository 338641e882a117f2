//! Property tests for the spec 04 invariants: intersection ⊆ request and ⊆ grant, constraining
//! denies of both sides survive, enforcement never changes, deny anywhere ⇒ no unsandboxed
//! execution, and materialise-then-resolve = resolve with the cwd as root.

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ResolveContext;
use airlock_permissions::effective_permission_profile;
use airlock_permissions::intersect_permission_profiles;
use airlock_permissions::materialize_entries;
use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPermissions;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use proptest::prelude::*;

const CWD: &str = "/p";

/// Paths over a tiny alphabet so that entries overlap often.
fn path() -> impl Strategy<Value = PathBuf> {
    prop::collection::vec(prop::sample::select(vec!["p", "a", "b", "c"]), 0..4)
        .prop_map(|parts| Path::new("/").join(parts.join("/")))
}

fn access() -> impl Strategy<Value = FileSystemAccessMode> {
    prop::sample::select(vec![
        FileSystemAccessMode::Read,
        FileSystemAccessMode::Write,
        FileSystemAccessMode::Deny,
    ])
}

fn entry() -> impl Strategy<Value = FileSystemSandboxEntry> {
    prop_oneof![
        6 => (path(), access()).prop_map(|(path, access)| FileSystemSandboxEntry::path(path, access)),
        1 => (path(), prop::sample::select(vec!["*.env", "**/b", "c"]))
            .prop_map(|(path, tail)| FileSystemSandboxEntry::deny_glob(format!("{}/{tail}", path.display()).replace("//", "/"))),
        1 => access().prop_map(|access| FileSystemSandboxEntry::special(FileSystemSpecialPath::ProjectRoots { subpath: None }, access)),
    ]
}

fn additional() -> impl Strategy<Value = AdditionalPermissionProfile> {
    (
        prop::collection::vec(entry(), 0..6),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(entries, network)| AdditionalPermissionProfile {
            network: network.map(|enabled| NetworkPermissions {
                enabled: Some(enabled),
            }),
            file_system: Some(FileSystemPermissions {
                entries,
                glob_scan_max_depth: None,
            }),
        })
}

/// Rank of what a path allows: deny 0 < read 1 < write 2.
fn rank(access: FileSystemAccessMode) -> u8 {
    match access {
        FileSystemAccessMode::Deny => 0,
        FileSystemAccessMode::Read => 1,
        FileSystemAccessMode::Write => 2,
    }
}

fn access_at(side: &AdditionalPermissionProfile, path: &Path) -> u8 {
    let entries = side
        .file_system
        .as_ref()
        .map(|fs| fs.entries.clone())
        .unwrap_or_default();
    let policy = FileSystemSandboxPolicy::restricted(entries);
    rank(policy.resolve_access(path, &ResolveContext::with_tmpdir(Path::new(CWD), None)))
}

fn network_on(side: &AdditionalPermissionProfile) -> bool {
    side.network.and_then(|network| network.enabled) == Some(true)
}

fn base_profile() -> impl Strategy<Value = PermissionProfile> {
    prop_oneof![
        Just(PermissionProfile::Disabled),
        any::<bool>().prop_map(|on| PermissionProfile::External {
            network: if on {
                NetworkSandboxPolicy::Enabled
            } else {
                NetworkSandboxPolicy::Restricted
            }
        }),
        prop::collection::vec(entry(), 0..5).prop_map(|entries| PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries,
                glob_scan_max_depth: None
            },
            network: NetworkSandboxPolicy::Restricted,
        }),
        Just(PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Unrestricted,
            network: NetworkSandboxPolicy::Restricted,
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn intersection_is_within_request_and_grant(requested in additional(), granted in additional(), probe in path()) {
        let result = intersect_permission_profiles(&requested, &granted, Path::new(CWD));
        let got = access_at(&result, &probe);
        prop_assert!(got <= access_at(&requested, &probe), "exceeds request at {}: {result:?}", probe.display());
        prop_assert!(got <= access_at(&granted, &probe), "exceeds grant at {}: {result:?}", probe.display());
        prop_assert!(!network_on(&result) || (network_on(&requested) && network_on(&granted)));
    }

    #[test]
    fn constraining_denies_of_both_sides_survive(requested in additional(), granted in additional()) {
        let result = intersect_permission_profiles(&requested, &granted, Path::new(CWD));
        let kept = result.file_system.map(|fs| fs.entries).unwrap_or_default();
        let allowed: Vec<PathBuf> = kept.iter().filter(|e| e.access != FileSystemAccessMode::Deny).filter_map(|e| match &e.path {
            airlock_protocol::FileSystemPath::Path { path } => Some(path.clone()),
            _ => None,
        }).collect();
        for side in [&requested, &granted] {
            for deny in side.file_system.iter().flat_map(|fs| fs.entries.iter()) {
                let airlock_protocol::FileSystemPath::Path { path } = &deny.path else { continue };
                if deny.access != FileSystemAccessMode::Deny { continue; }
                let constrains = allowed.iter().any(|a| path.starts_with(a) || a.starts_with(path));
                prop_assert!(!constrains || kept.contains(deny), "lost {deny:?}: {kept:?}");
            }
        }
    }

    #[test]
    fn effective_profile_never_changes_enforcement(base in base_profile(), extra in additional()) {
        let effective = effective_permission_profile(&base, Some(&extra));
        prop_assert_eq!(effective.enforcement(), base.enforcement());
        if let (PermissionProfile::Managed { file_system: ManagedFileSystemPermissions::Restricted { entries: before, .. }, .. },
                PermissionProfile::Managed { file_system: ManagedFileSystemPermissions::Restricted { entries: after, .. }, .. }) = (&base, &effective) {
            // Base denies are never lost.
            for deny in before.iter().filter(|e| e.access == FileSystemAccessMode::Deny) {
                prop_assert!(after.contains(deny));
            }
        }
    }

    #[test]
    fn any_deny_forbids_unsandboxed_execution(entries in prop::collection::vec(entry(), 0..6)) {
        let has_deny = entries.iter().any(|e| e.access == FileSystemAccessMode::Deny);
        let policy = FileSystemSandboxPolicy::restricted(entries);
        prop_assert_eq!(policy.unsandboxed_execution_allowed(), !has_deny);
    }

    #[test]
    fn materialise_then_resolve_equals_resolve_with_root(entries in prop::collection::vec(entry(), 0..6), probe in path()) {
        let ctx = ResolveContext::with_tmpdir(Path::new(CWD), None);
        let symbolic = FileSystemSandboxPolicy::restricted(entries.clone());
        let concrete = FileSystemSandboxPolicy::restricted(materialize_entries(&entries, &[PathBuf::from(CWD)]));
        prop_assert_eq!(symbolic.resolve_access(&probe, &ctx), concrete.resolve_access(&probe, &ctx));
    }
}

/// One `key = value` line of a `[permissions.<id>.filesystem]` table, good or bad.
fn filesystem_line() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "\":root\"",
        "\":minimal\"",
        "\":tmpdir\"",
        "\":slash_tmp\"",
        "\":workspace_roots\"",
        "\":project_roots\"",
        "\":future\"",
        "\"/etc\"",
        "\"/a/b\"",
        "\"~/x\"",
        "\"rel/path\"",
        "\"/opt/**\"",
        "\"/o/*/x\"",
        "\"*.env\"",
        "glob_scan_max_depth",
        "\"\"",
    ]);
    let values = prop::sample::select(vec![
        "\"read\"",
        "\"write\"",
        "\"deny\"",
        "\"none\"",
        "\"rw\"",
        "0",
        "3",
        "-1",
        "true",
        "[]",
        "{ \".\" = \"write\" }",
        "{ \"**/*.env\" = \"deny\" }",
        "{ \"../x\" = \"read\" }",
        "{ \"sub\" = \"write\", \"*.k\" = \"read\" }",
        "{ \"\" = \"read\" }",
        "{ \"a\" = 1 }",
    ]);
    (keys, values).prop_map(|(key, value)| format!("{key} = {value}\n"))
}

/// A whole config made of random selections, inheritance and filesystem lines.
fn config_text() -> impl Strategy<Value = String> {
    let ids = || {
        prop::sample::select(vec![
            "a",
            "b",
            "c",
            ":read-only",
            ":workspace",
            ":danger-full-access",
            ":external-sandbox",
            ":nope",
        ])
    };
    (
        prop::option::of(ids()),
        prop::collection::vec(
            (
                prop::sample::select(vec!["a", "b", "c"]),
                prop::option::of(ids()),
                prop::collection::vec(filesystem_line(), 0..4),
                prop::option::of(any::<bool>()),
            ),
            0..4,
        ),
        prop::option::of(prop::sample::select(vec![
            "\"read-only\"",
            "\"workspace-write\"",
            "\"danger-full-access\"",
            "\"bogus\"",
            "1",
        ])),
    )
        .prop_map(|(default, profiles, mode)| {
            let mut text = String::new();
            if let Some(default) = default {
                text.push_str(&format!("default_permissions = \"{default}\"\n"));
            }
            if let Some(mode) = mode {
                text.push_str(&format!("sandbox_mode = {mode}\n"));
            }
            let mut seen = Vec::new();
            for (id, extends, lines, network) in profiles {
                if seen.contains(&id) {
                    continue;
                }
                seen.push(id);
                text.push_str(&format!("[permissions.{id}]\n"));
                if let Some(parent) = extends {
                    text.push_str(&format!("extends = \"{parent}\"\n"));
                }
                if let Some(enabled) = network {
                    text.push_str(&format!(
                        "[permissions.{id}.network]\nenabled = {enabled}\n"
                    ));
                }
                text.push_str(&format!("[permissions.{id}.filesystem]\n"));
                let mut keys = Vec::new();
                for line in lines {
                    let key = line.split(" = ").next().unwrap_or_default().to_owned();
                    if !keys.contains(&key) {
                        keys.push(key);
                        text.push_str(&line);
                    }
                }
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any config either selects a profile or fails with a message; nothing panics, and a
    /// selected profile serialises and materialises.
    #[test]
    fn configs_never_panic(text in config_text(), requested in prop::option::of(prop::sample::select(vec!["a", ":workspace", ":nope"]))) {
        let env = airlock_permissions::ConfigEnv { airlock_home: PathBuf::from("/cfg"), home: Some(PathBuf::from("/home/u")) };
        let Ok(config) = airlock_permissions::AirlockConfig::from_toml_str(&text, Path::new("/cfg/config.toml"), &env) else {
            return Ok(());
        };
        match airlock_permissions::select_permission_profile(&config, requested, Path::new(CWD)) {
            Ok(selected) => {
                let profile = selected.materialized();
                prop_assert!(serde_json::to_string(&profile).is_ok());
                let policy = airlock_permissions::file_system_sandbox_policy(&profile);
                let ctx = ResolveContext::with_tmpdir(Path::new(CWD), None);
                for root in policy.get_writable_roots(&ctx) {
                    prop_assert!(root.root.is_absolute());
                }
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }
}
