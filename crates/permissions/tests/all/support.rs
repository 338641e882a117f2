//! Helpers: configs from text, selection, and error text.

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::AirlockConfig;
use airlock_permissions::ConfigEnv;
use airlock_permissions::SelectedPermissions;
use airlock_permissions::select_permission_profile;

/// The config file name used in messages.
pub const ORIGIN: &str = "/cfg/config.toml";

/// An environment with `HOME=/home/u`.
pub fn env() -> ConfigEnv {
    ConfigEnv {
        airlock_home: PathBuf::from("/cfg"),
        home: Some(PathBuf::from("/home/u")),
    }
}

/// Parses `text` as `/cfg/config.toml`.
pub fn config(text: &str) -> AirlockConfig {
    match AirlockConfig::from_toml_str(text, Path::new(ORIGIN), &env()) {
        Ok(config) => config,
        Err(error) => panic!("config should parse: {error}\n{text}"),
    }
}

/// Selects the profile (`-P` when `profile` is given) for `cwd`.
pub fn select(text: &str, profile: Option<&str>, cwd: &str) -> SelectedPermissions {
    match select_permission_profile(&config(text), profile, Path::new(cwd)) {
        Ok(selected) => selected,
        Err(error) => panic!("selection should succeed: {error}\n{text}"),
    }
}

/// The error message of selecting `profile` from `text`.
pub fn error(text: &str, profile: Option<&str>) -> String {
    let parsed = match AirlockConfig::from_toml_str(text, Path::new(ORIGIN), &env()) {
        Ok(config) => config,
        Err(error) => return error.to_string(),
    };
    match select_permission_profile(&parsed, profile, Path::new("/ws")) {
        Ok(selected) => panic!("should fail, got {:?}\n{text}", selected.compiled.profile),
        Err(error) => error.to_string(),
    }
}

/// The materialised profile as JSON text.
pub fn json(selected: &SelectedPermissions) -> String {
    match serde_json::to_string(&selected.materialized()) {
        Ok(text) => text,
        Err(error) => panic!("profile should serialise: {error}"),
    }
}
