//! Settings of the requirement computation read from the configuration (spec 10
//! §Configuration): `[shell] extra_safe_commands` and trusted projects.

use std::path::{Path, PathBuf};

use airlock_permissions::AirlockConfig;
use airlock_shell::ExtraSafeCommand;

use super::error::RequirementError;

/// `[shell] extra_safe_commands` (spec 03 "Known-safe commands"); empty when absent.
///
/// # Errors
/// [`RequirementError::Config`] naming the file and key when the value is not a list of
/// valid entries (the string, word-list and table forms of [`ExtraSafeCommand`]).
pub fn extra_safe_commands_from_config(
    config: &AirlockConfig,
) -> Result<Vec<ExtraSafeCommand>, RequirementError> {
    let Some(shell) = config.table.get("shell") else {
        return Ok(Vec::new());
    };
    let Some(entries) = shell.get("extra_safe_commands") else {
        return Ok(Vec::new());
    };
    let invalid = |message: String| RequirementError::Config {
        file: config.origin.clone(),
        key: "shell.extra_safe_commands".to_owned(),
        message,
    };
    let json = serde_json::to_value(entries).map_err(|error| invalid(error.to_string()))?;
    serde_json::from_value(json).map_err(|error| invalid(error.to_string()))
}

/// The nearest ancestor of `cwd` (itself included) marked `trust_level = "trusted"` under
/// `[projects."<abs path>"]`: its `.airlock/rules/` are loaded (spec 10, spec 02).
#[must_use]
pub fn trusted_project(config: &AirlockConfig, cwd: &Path) -> Option<PathBuf> {
    let projects = config.table.get("projects")?.as_table()?;
    cwd.ancestors()
        .find(|dir| {
            projects
                .get(dir.to_string_lossy().as_ref())
                .and_then(|project| project.get("trust_level"))
                .and_then(|level| level.as_str())
                == Some("trusted")
        })
        .map(Path::to_path_buf)
}
