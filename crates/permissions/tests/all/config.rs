//! Config loading, selection, inheritance, overrides and warnings (reference §1–4, spec 10).

use std::path::Path;

use airlock_permissions::ConfigEnv;
use airlock_permissions::PermissionProfile;
use airlock_permissions::ProfileSource;
use airlock_permissions::load_config;
use airlock_protocol::AskForApproval;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use pretty_assertions::assert_eq;

use crate::support::config;
use crate::support::select;

fn entries(profile: &PermissionProfile) -> Vec<FileSystemSandboxEntry> {
    match profile {
        PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Restricted { entries, .. },
            ..
        } => entries.clone(),
        other => panic!("expected a restricted managed profile, got {other:?}"),
    }
}

fn special(value: FileSystemSpecialPath, access: FileSystemAccessMode) -> FileSystemSandboxEntry {
    FileSystemSandboxEntry::special(value, access)
}

#[test]
fn child_keys_replace_inherited_keys() {
    // 593df877: a child's `":tmpdir" = "read"` replaces the inherited write.
    let text = "default_permissions = \"x\"\n[permissions.x]\nextends = \":workspace\"\n[permissions.x.filesystem]\n\":tmpdir\" = \"read\"\n";
    let selected = select(text, None, "/ws");
    assert!(entries(&selected.materialized()).contains(&special(
        FileSystemSpecialPath::Tmpdir,
        FileSystemAccessMode::Read
    )));
    assert!(!entries(&selected.materialized()).contains(&special(
        FileSystemSpecialPath::Tmpdir,
        FileSystemAccessMode::Write
    )));
}

#[test]
fn multi_level_inheritance_and_description() {
    let text = r#"
default_permissions = "c"
[permissions.a]
description = "base"
extends = ":read-only"
[permissions.a.filesystem]
"/data" = "write"
[permissions.b]
extends = "a"
[permissions.b.network]
enabled = true
[permissions.c]
extends = "b"
description = "top"
[permissions.c.filesystem]
"/data" = { "secret" = "deny" }
"#;
    let selected = select(text, None, "/ws");
    assert_eq!(selected.compiled.description.as_deref(), Some("top"));
    assert_eq!(
        selected.compiled.active.extends.as_deref(),
        Some(":read-only")
    );
    let profile = selected.materialized();
    assert_eq!(profile.network(), NetworkSandboxPolicy::Enabled);
    // "/data" was a string in `a` and a table in `c`: the child's table replaces it.
    assert_eq!(
        entries(&profile),
        vec![
            FileSystemSandboxEntry::path("/data/secret", FileSystemAccessMode::Deny),
            special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
        ]
    );
}

#[test]
fn description_is_not_inherited() {
    let text = "default_permissions = \"b\"\n[permissions.a]\ndescription = \"a\"\n[permissions.a.filesystem]\n\":root\" = \"read\"\n[permissions.b]\nextends = \"a\"\n";
    assert_eq!(select(text, None, "/ws").compiled.description, None);
}

#[test]
fn workspace_roots_true_adds_false_ignores() {
    let text = "default_permissions = \"x\"\n[permissions.x]\nextends = \":workspace\"\n[permissions.x.workspace_roots]\n\"/ws2\" = true\n\"/opt\" = false\n\"~/code\" = true\n";
    let selected = select(text, None, "/ws");
    assert_eq!(
        selected.workspace_roots,
        vec![
            Path::new("/ws").to_path_buf(),
            "/ws2".into(),
            "/home/u/code".into()
        ]
    );
}

#[test]
fn project_roots_alias_and_subtree_globs() {
    let text = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":project_roots\" = \"write\"\n\"/opt/**\" = \"read\"\n";
    let selected = select(text, None, "/ws");
    assert_eq!(
        entries(&selected.materialized()),
        vec![
            FileSystemSandboxEntry::path("/opt", FileSystemAccessMode::Read),
            FileSystemSandboxEntry::path("/ws", FileSystemAccessMode::Write),
        ]
    );
    assert!(
        selected
            .warnings
            .iter()
            .any(|w| w.contains("whole subtree `/opt`"))
    );
}

#[test]
fn none_is_deny_and_home_expands() {
    let text = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":root\" = \"read\"\n\"~/.ssh\" = \"none\"\n\"~\" = \"read\"\n";
    let selected = select(text, None, "/ws");
    assert_eq!(
        entries(&selected.materialized()),
        vec![
            special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
            FileSystemSandboxEntry::path("/home/u", FileSystemAccessMode::Read),
            FileSystemSandboxEntry::path("/home/u/.ssh", FileSystemAccessMode::Deny),
        ]
    );
}

#[test]
fn warnings_unknown_token_empty_filesystem_deep_glob_unknown_keys() {
    let text = r#"
default_permissions = "x"
model = "gpt"
[mcp_servers.x]
command = "y"
[permissions.x]
colour = "blue"
[permissions.x.filesystem]
":future" = "read"
[permissions.x.network]
enabled = false
speed = 3
"#;
    let selected = select(text, None, "/ws");
    let all = selected.warnings.join("\n");
    assert!(
        all.contains("ignoring keys Airlock does not use: mcp_servers, model"),
        "{all}"
    );
    assert!(all.contains("`permissions.x.colour`"), "{all}");
    assert!(all.contains("`permissions.x.network.speed`"), "{all}");
    assert!(all.contains("token `:future` is not known"), "{all}");
    assert!(
        all.contains("has no filesystem entries Airlock recognises"),
        "{all}"
    );
    assert_eq!(
        entries(selected.symbolic()),
        vec![special(
            FileSystemSpecialPath::Unknown {
                path: ":future".into(),
                subpath: None
            },
            FileSystemAccessMode::Read
        )]
    );

    let deep = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":root\" = \"read\"\n\"/s/**/*.pem\" = \"deny\"\n";
    assert!(
        select(deep, None, "/ws")
            .warnings
            .iter()
            .any(|w| w.contains("glob_scan_max_depth"))
    );
    let bounded = "default_permissions = \"x\"\n[permissions.x.filesystem]\nglob_scan_max_depth = 2\n\":root\" = \"read\"\n\"/s/**/*.pem\" = \"deny\"\n";
    assert!(select(bounded, None, "/ws").warnings.is_empty());
}

#[test]
fn default_permissions_wins_over_sandbox_mode() {
    // Observed in 0.169 (conformance/real-world hhs_tanf-app.toml): the profile is used.
    let text = "sandbox_mode = \"danger-full-access\"\ndefault_permissions = \":read-only\"\n";
    let selected = select(text, None, "/ws");
    assert_eq!(selected.source, ProfileSource::DefaultPermissions);
    assert!(
        selected
            .warnings
            .iter()
            .any(|w| w.contains("sandbox_mode is ignored"))
    );
    assert!(matches!(
        selected.materialized(),
        PermissionProfile::Managed { .. }
    ));
}

#[test]
fn legacy_modes() {
    assert_eq!(
        select("sandbox_mode = \"danger-full-access\"\n", None, "/ws").materialized(),
        PermissionProfile::Disabled
    );
    // A config that selects no profile keeps the embedded default, whatever the project's
    // trust (issue 17: only `sandbox_mode` selects the legacy mapping).
    for text in [
        "approval_policy = \"never\"\n",
        "[projects.\"/home\"]\ntrust_level = \"untrusted\"\n",
    ] {
        let selected = select(text, None, "/home/u/p");
        assert_eq!(selected.source, ProfileSource::EmbeddedDefault, "{text}");
        assert_eq!(selected.compiled.active.id, ":workspace");
        assert!(
            entries(&selected.materialized()).contains(&FileSystemSandboxEntry::path(
                "/home/u/p",
                FileSystemAccessMode::Write
            ))
        );
    }

    let text = "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nwritable_roots = [\"/x\", \"~/y\", \"rel\"]\nnetwork_access = true\nexclude_slash_tmp = true\n";
    let selected = select(text, None, "/ws");
    assert_eq!(selected.source, ProfileSource::LegacySandboxMode);
    let profile = selected.materialized();
    assert_eq!(profile.network(), NetworkSandboxPolicy::Enabled);
    let list = entries(&profile);
    for root in ["/ws", "/x", "/home/u/y", "/cfg/rel"] {
        assert!(
            list.contains(&FileSystemSandboxEntry::path(
                root,
                FileSystemAccessMode::Write
            )),
            "{root}: {list:?}"
        );
        assert!(list.iter().any(|entry| entry.path
            == FileSystemPath::Path {
                path: Path::new(root).join(".git")
            }));
    }
    assert!(!list.contains(&special(
        FileSystemSpecialPath::SlashTmp,
        FileSystemAccessMode::Write
    )));
    assert!(list.contains(&special(
        FileSystemSpecialPath::Tmpdir,
        FileSystemAccessMode::Write
    )));
}

#[test]
fn allowed_profiles_default_to_workspace() {
    let text = "sandbox_mode = \"danger-full-access\"\n[allowed_permission_profiles]\n\":read-only\" = true\n\":workspace\" = true\n\":danger-full-access\" = false\n";
    let selected = select(text, None, "/ws");
    assert_eq!(selected.source, ProfileSource::AllowedProfilesDefault);
    assert_eq!(selected.compiled.active.id, ":workspace");
}

#[test]
fn external_sandbox_built_in_and_extension() {
    assert_eq!(
        select("", Some(":external-sandbox"), "/ws").materialized(),
        PermissionProfile::External {
            network: NetworkSandboxPolicy::Restricted
        }
    );
    let text = "default_permissions = \"box\"\n[permissions.box]\nextends = \":external-sandbox\"\n[permissions.box.network]\nenabled = true\n";
    assert_eq!(
        select(text, None, "/ws").materialized(),
        PermissionProfile::External {
            network: NetworkSandboxPolicy::Enabled
        }
    );
}

#[test]
fn overrides_use_codex_syntax() {
    let mut parsed = config("default_permissions = \":read-only\"\n");
    let overrides = [
        "default_permissions=dev",
        "permissions.dev.extends=\":workspace\"",
        "permissions.dev.network.enabled=true",
        "permissions.dev.filesystem.\"/srv/data\"=deny",
        "permissions.dev.filesystem.glob_scan_max_depth=2",
    ]
    .map(str::to_owned);
    if let Err(error) = parsed.apply_overrides(&overrides) {
        panic!("{error}");
    }
    let selected =
        match airlock_permissions::select_permission_profile(&parsed, None, Path::new("/ws")) {
            Ok(selected) => selected,
            Err(error) => panic!("{error}"),
        };
    assert_eq!(selected.compiled.active.id, "dev");
    let profile = selected.materialized();
    assert_eq!(profile.network(), NetworkSandboxPolicy::Enabled);
    assert!(entries(&profile).contains(&FileSystemSandboxEntry::path(
        "/srv/data",
        FileSystemAccessMode::Deny
    )));
}

#[test]
fn load_config_reads_airlock_home_and_falls_back_to_default() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("{error}"),
    };
    let env = ConfigEnv {
        airlock_home: dir.path().to_path_buf(),
        home: None,
    };
    let loaded = match load_config(&env, &[]) {
        Ok(loaded) => loaded,
        Err(error) => panic!("{error}"),
    };
    assert!(!loaded.file_exists);
    assert!(matches!(
        loaded.approval_policy(),
        Ok(AskForApproval::OnRequest)
    ));

    if let Err(error) = std::fs::write(
        dir.path().join("config.toml"),
        "approval_policy = \"never\"\n",
    ) {
        panic!("{error}");
    }
    let loaded = match load_config(&env, &["sandbox_mode=read-only".to_owned()]) {
        Ok(loaded) => loaded,
        Err(error) => panic!("{error}"),
    };
    assert!(loaded.file_exists);
    assert!(matches!(
        loaded.approval_policy(),
        Ok(AskForApproval::Never)
    ));
    assert_eq!(
        loaded.table.get("sandbox_mode").and_then(|v| v.as_str()),
        Some("read-only")
    );
}
