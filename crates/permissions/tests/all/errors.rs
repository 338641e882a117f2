//! One test per error message of reference `permissions-config.md` §2–4, plus bad input: each
//! names the file, the key and a fix, and nothing panics.

use std::path::Path;

use airlock_permissions::AirlockConfig;
use airlock_permissions::ConfigEnv;
use airlock_permissions::PermissionsError;
use airlock_permissions::select_permission_profile;
use airlock_permissions::to_legacy_sandbox_policy;

use crate::support::ORIGIN;
use crate::support::error;
use crate::support::select;

/// Asserts the message contains Codex's text, the file, the key and a fix.
fn assert_error(message: &str, codex: &str, key: &str) {
    assert!(message.contains(codex), "expected {codex:?} in {message:?}");
    assert!(message.contains(ORIGIN), "no file in {message:?}");
    assert!(
        message.contains(&format!("key `{key}`")),
        "no key {key} in {message:?}"
    );
    assert!(message.contains("fix:"), "no fix in {message:?}");
}

#[test]
fn inheritance_cycle() {
    let text = r#"
default_permissions = "a"
[permissions.a]
extends = "b"
[permissions.b]
extends = "c"
[permissions.c]
extends = "b"
"#;
    assert_error(
        &error(text, None),
        "permissions profile inheritance cycle detected: b -> c -> b",
        "permissions.c.extends",
    );
}

#[test]
fn self_cycle() {
    let text = "default_permissions = \"a\"\n[permissions.a]\nextends = \"a\"\n";
    assert_error(
        &error(text, None),
        "permissions profile inheritance cycle detected: a -> a",
        "permissions.a.extends",
    );
}

#[test]
fn undefined_profile() {
    let text = "default_permissions = \"nope\"\n[permissions.a]\n";
    assert_error(
        &error(text, None),
        "default_permissions refers to undefined profile `nope`",
        "default_permissions",
    );
}

#[test]
fn unknown_built_in() {
    let text = "default_permissions = \":danger-no-sandbox\"\n";
    assert_error(
        &error(text, None),
        "default_permissions refers to unknown built-in profile `:danger-no-sandbox`",
        "default_permissions",
    );
}

#[test]
fn missing_permissions_table() {
    let text = "default_permissions = \"x\"\n";
    assert_error(
        &error(text, None),
        "default_permissions requires a `[permissions]` table",
        "default_permissions",
    );
}

#[test]
fn unsupported_built_in_parent() {
    for parent in [":danger-full-access", ":danger-no-sandbox", ":nope"] {
        let text =
            format!("default_permissions = \"x\"\n[permissions.x]\nextends = \"{parent}\"\n");
        assert_error(
            &error(&text, None),
            &format!(
                "permissions profile `x` cannot extend unsupported built-in profile `{parent}`"
            ),
            "permissions.x.extends",
        );
    }
}

#[test]
fn undefined_parent() {
    let text = "default_permissions = \"x\"\n[permissions.x]\nextends = \"y\"\n";
    assert_error(
        &error(text, None),
        "permissions profile `x` extends undefined profile `y`",
        "permissions.x.extends",
    );
}

#[test]
fn permissions_without_default() {
    let text = "[permissions.x.filesystem]\n\":root\" = \"read\"\n";
    assert_error(
        &error(text, None),
        "config defines `[permissions]` profiles but does not set `default_permissions`",
        "default_permissions",
    );
}

#[test]
fn relative_filesystem_paths() {
    for key in ["foo/bar", "*.env", "./x", "relative"] {
        let text = format!(
            "default_permissions = \"x\"\n[permissions.x.filesystem]\n\"{key}\" = \"read\"\n"
        );
        assert_error(
            &error(&text, None),
            &format!("filesystem path `{key}` must be absolute, use `~/...`, or start with `:`"),
            &if key == "relative" {
                "permissions.x.filesystem.relative".to_owned()
            } else {
                format!("permissions.x.filesystem.\"{key}\"")
            },
        );
    }
}

#[test]
fn bad_subpaths() {
    for subpath in ["../x", "", "/etc", "a/../b", "a/./b", ".."] {
        let text = format!(
            "default_permissions = \"x\"\n[permissions.x.filesystem]\n\"/tmp\" = {{ \"{subpath}\" = \"read\" }}\n"
        );
        let message = error(&text, None);
        assert!(
            message.contains(&format!(
                "filesystem subpath `{subpath}` must be a descendant path without `.` or `..` components"
            )),
            "{message}"
        );
        assert!(
            message.contains(ORIGIN) && message.contains("fix:"),
            "{message}"
        );
    }
    let text = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":workspace_roots\" = { \"../up\" = \"write\" }\n";
    assert_error(
        &error(text, None),
        "filesystem subpath `../up` must be a descendant path",
        "permissions.x.filesystem.\":workspace_roots\".\"../up\"",
    );
}

#[test]
fn nested_entries_on_plain_tokens() {
    for token in [":tmpdir", ":root", ":slash_tmp", ":minimal"] {
        let text = format!(
            "default_permissions = \"x\"\n[permissions.x.filesystem]\n\"{token}\" = {{ \"a\" = \"read\" }}\n"
        );
        assert_error(
            &error(&text, None),
            &format!("filesystem path `{token}` does not support nested entries"),
            &format!("permissions.x.filesystem.\"{token}\""),
        );
    }
}

#[test]
fn globs_need_deny() {
    let text = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\"/opt/*/x\" = \"read\"\n";
    assert_error(
        &error(text, None),
        "filesystem glob path `/opt/*/x` only supports `deny` access; use an exact path or trailing `/**` for `read` subtree access",
        "permissions.x.filesystem.\"/opt/*/x\"",
    );
    let scoped = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":workspace_roots\" = { \"*.log\" = \"write\" }\n";
    assert!(
        error(scoped, None).contains("filesystem glob path `*.log` only supports `deny` access")
    );
}

#[test]
fn glob_scan_max_depth_below_one() {
    for depth in ["0", "-3"] {
        let text = format!(
            "default_permissions = \"x\"\n[permissions.x.filesystem]\nglob_scan_max_depth = {depth}\n\":root\" = \"read\"\n"
        );
        assert_error(
            &error(&text, None),
            "glob_scan_max_depth must be at least 1",
            "permissions.x.filesystem.glob_scan_max_depth",
        );
    }
}

#[test]
fn writes_outside_workspace_cannot_project_to_legacy() {
    let text = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":root\" = \"read\"\n\"/opt\" = \"write\"\n";
    let selected = select(text, None, "/ws");
    match to_legacy_sandbox_policy(&selected.materialized(), Path::new("/ws")) {
        Err(PermissionsError::Projection(problem)) => assert_eq!(
            problem.to_string(),
            "permissions profile requests filesystem writes outside the workspace root, which is not supported until the runtime enforces FileSystemSandboxPolicy directly"
        ),
        other => panic!("expected a projection error, got {other:?}"),
    }
}

#[test]
fn invalid_toml_names_file_and_position() {
    let Err(error) = AirlockConfig::from_toml_str(
        "default_permissions = \"x\n",
        Path::new(ORIGIN),
        &ConfigEnv::from_process(),
    ) else {
        panic!("invalid TOML must fail");
    };
    let message = error.to_string();
    assert!(
        message.starts_with("invalid TOML in /cfg/config.toml"),
        "{message}"
    );
    assert!(message.contains("line 1"), "{message}");
}

#[test]
fn wrong_types_name_key_and_expected_type() {
    let cases = [
        (
            "default_permissions = 5\n",
            "default_permissions",
            "expected a string, found an integer",
        ),
        (
            "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":root\" = 5\n",
            "permissions.x.filesystem.\":root\"",
            "found an integer",
        ),
        (
            "default_permissions = \"x\"\n[permissions.x]\nfilesystem = \"read\"\n",
            "permissions.x.filesystem",
            "expected a table, found a string",
        ),
        (
            "default_permissions = \"x\"\n[permissions.x]\nextends = 1\n",
            "permissions.x.extends",
            "found an integer",
        ),
        (
            "default_permissions = \"x\"\n[permissions.x.network]\nenabled = \"yes\"\n",
            "permissions.x.network.enabled",
            "expected a boolean, found a string",
        ),
        (
            "default_permissions = \"x\"\n[permissions.x.filesystem]\nglob_scan_max_depth = \"3\"\n",
            "permissions.x.filesystem.glob_scan_max_depth",
            "found a string",
        ),
        (
            "default_permissions = \"x\"\n[permissions.x.workspace_roots]\n\"/a\" = \"yes\"\n",
            "permissions.x.workspace_roots.\"/a\"",
            "expected a boolean",
        ),
        (
            "permissions = 3\ndefault_permissions = \"x\"\n",
            "permissions",
            "found an integer",
        ),
        (
            "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nnetwork_access = \"on\"\n",
            "sandbox_workspace_write.network_access",
            "expected a boolean",
        ),
    ];
    for (text, key, expected) in cases {
        assert_error(&error(text, None), expected, key);
    }
}

#[test]
fn invalid_values_list_allowed_ones() {
    let message = error(
        "default_permissions = \"x\"\n[permissions.x.filesystem]\n\":root\" = \"rw\"\n",
        None,
    );
    assert_error(
        &message,
        "invalid filesystem access `rw`",
        "permissions.x.filesystem.\":root\"",
    );
    assert!(
        message.contains("\"read\", \"write\" or \"deny\""),
        "{message}"
    );

    let message = error("sandbox_mode = \"full\"\n", None);
    assert_error(&message, "invalid value `\"full\"`", "sandbox_mode");
    assert!(message.contains("\"workspace-write\""), "{message}");
}

#[test]
fn relative_workspace_root() {
    let text = "default_permissions = \"x\"\n[permissions.x.workspace_roots]\n\"other\" = true\n";
    assert_error(
        &error(text, None),
        "root `other` must be absolute",
        "permissions.x.workspace_roots.other",
    );
}

#[test]
fn reserved_ids_and_external_with_filesystem() {
    let text = "default_permissions = \":mine\"\n[permissions.\":mine\"]\n";
    assert_error(
        &error(text, None),
        "uses a name reserved for built-in profiles",
        "permissions.\":mine\"",
    );
    let text = "default_permissions = \"x\"\n[permissions.x]\nextends = \":external-sandbox\"\n[permissions.x.filesystem]\n\":root\" = \"read\"\n";
    assert_error(
        &error(text, None),
        "extends `:external-sandbox` but defines filesystem entries",
        "permissions.x.filesystem",
    );
}

#[test]
fn home_unset() {
    let env = ConfigEnv {
        airlock_home: "/cfg".into(),
        home: None,
    };
    let text = "default_permissions = \"x\"\n[permissions.x.filesystem]\n\"~/s\" = \"deny\"\n";
    let Ok(config) = AirlockConfig::from_toml_str(text, Path::new(ORIGIN), &env) else {
        panic!("parses");
    };
    let Err(error) = select_permission_profile(&config, None, Path::new("/ws")) else {
        panic!("must fail without HOME");
    };
    assert_error(
        &error.to_string(),
        "cannot expand `~` in `~/s`",
        "permissions.x.filesystem.\"~/s\"",
    );
}

#[test]
fn allowed_permission_profiles_errors() {
    let text = "default_permissions = \":workspace\"\n[allowed_permission_profiles]\n\":read-only\" = true\n";
    assert_error(
        &error(text, None),
        "permission profile `:workspace` is not allowed by allowed_permission_profiles",
        "default_permissions",
    );
    let text = "[allowed_permission_profiles]\nghost = true\n";
    assert_error(
        &error(text, None),
        "names unknown profile `ghost`",
        "allowed_permission_profiles.ghost",
    );
    let text = "[allowed_permission_profiles]\n\":read-only\" = true\n";
    assert_error(
        &error(text, None),
        "allowed_permission_profiles requires default_permissions",
        "default_permissions",
    );
    // -P is checked too.
    let text = "[allowed_permission_profiles]\n\":read-only\" = true\n\":workspace\" = true\n";
    assert_error(
        &error(text, Some(":danger-full-access")),
        "permission profile `:danger-full-access` is not allowed",
        "-P",
    );
}

#[test]
fn overrides_errors() {
    let mut config = crate::support::config("");
    for bad in ["novalue", "=x", "a..b=1", "\"open=1"] {
        let Err(error) = config.apply_overrides(&[bad.to_owned()]) else {
            panic!("{bad} must be rejected");
        };
        assert!(
            error
                .to_string()
                .starts_with(&format!("invalid -c override `{bad}`")),
            "{error}"
        );
    }
}
