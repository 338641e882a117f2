//! Compiled + materialised profiles equal Codex 0.169's helper argument (tests/golden/README.md).

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::AirlockConfig;
use airlock_permissions::ConfigEnv;
use airlock_permissions::select_permission_profile;
use pretty_assertions::assert_eq;

const CWD: &str = "/srv/golden/ws";

fn golden(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => text.trim_end().to_owned(),
        Err(error) => panic!("cannot read {}: {error}", path.display()),
    }
}

/// `airlock permissions show --json` for the golden config `config` (or none) and `-P id`.
fn show(config: Option<&str>, id: &str) -> String {
    let env = ConfigEnv {
        airlock_home: PathBuf::from("/root/oh/home"),
        home: Some(PathBuf::from("/root/oh")),
    };
    let parsed = match config {
        Some(name) => match AirlockConfig::from_toml_str(&golden(name), Path::new(name), &env) {
            Ok(parsed) => parsed,
            Err(error) => panic!("{name}: {error}"),
        },
        None => AirlockConfig::embedded_default(&env),
    };
    match select_permission_profile(&parsed, Some(id), Path::new(CWD)) {
        Ok(selected) => crate::support::json(&selected),
        Err(error) => panic!("{id}: {error}"),
    }
}

#[test]
fn read_only_equals_codex() {
    assert_eq!(show(None, ":read-only"), golden("read_only.json"));
}

#[test]
fn workspace_equals_codex() {
    assert_eq!(show(None, ":workspace"), golden("workspace.json"));
}

#[test]
fn workspace_extension_with_denies_roots_and_network_equals_codex() {
    assert_eq!(show(Some("dev.config.toml"), "dev"), golden("dev.json"));
}

#[test]
fn mixed_tokens_scopes_and_home_equal_codex() {
    assert_eq!(show(Some("mixed.config.toml"), "p"), golden("mixed.json"));
}

#[test]
fn embedded_default_is_workspace() {
    let env = ConfigEnv {
        airlock_home: PathBuf::from("/nonexistent"),
        home: None,
    };
    let selected =
        select_permission_profile(&AirlockConfig::embedded_default(&env), None, Path::new(CWD));
    match selected {
        Ok(selected) => assert_eq!(crate::support::json(&selected), golden("workspace.json")),
        Err(error) => panic!("{error}"),
    }
}
