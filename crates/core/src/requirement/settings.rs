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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use airlock_permissions::ConfigEnv;

    fn config(text: &str) -> AirlockConfig {
        let env = ConfigEnv {
            airlock_home: PathBuf::from("/home/u/.airlock"),
            home: Some(PathBuf::from("/home/u")),
        };
        AirlockConfig::from_toml_str(text, Path::new("/home/u/.airlock/config.toml"), &env).unwrap()
    }

    #[test]
    fn reads_extra_safe_commands_in_every_form() {
        let config = config(
            "[shell]\nextra_safe_commands = [\"make lint\", [\"cargo\", \"check\"], \
             { command = \"just fmt\", forbidden_args = [\"--exec\"] }]\n",
        );
        let extra = extra_safe_commands_from_config(&config).unwrap();
        assert_eq!(extra.len(), 3);
        let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert!(extra[0].matches(&argv(&["make", "lint"])));
        assert!(extra[2].matches(&argv(&["just", "fmt"])));
        assert!(!extra[2].matches(&argv(&["just", "fmt", "--exec"])));
        assert!(
            extra_safe_commands_from_config(&self::config(""))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn rejects_invalid_extra_safe_commands_with_file_and_key() {
        let error =
            extra_safe_commands_from_config(&config("[shell]\nextra_safe_commands = [\"\"]\n"))
                .unwrap_err()
                .to_string();
        assert!(
            error.starts_with("/home/u/.airlock/config.toml: invalid `shell.extra_safe_commands`"),
            "{error}"
        );
        assert!(
            extra_safe_commands_from_config(&config("[shell]\nextra_safe_commands = 3\n")).is_err()
        );
    }

    #[test]
    fn finds_the_nearest_trusted_project() {
        let config = config(
            "[projects.\"/work/repo\"]\ntrust_level = \"trusted\"\n\
             [projects.\"/work/repo/vendor\"]\ntrust_level = \"untrusted\"\n",
        );
        assert_eq!(
            trusted_project(&config, Path::new("/work/repo/src")),
            Some(PathBuf::from("/work/repo"))
        );
        assert_eq!(trusted_project(&config, Path::new("/work/other")), None);
    }
}
