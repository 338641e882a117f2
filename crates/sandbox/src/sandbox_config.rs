//! `[sandbox]` keys of `config.toml` read by the enforcement layer (spec 10 §Configuration).

use std::path::PathBuf;

/// A malformed `[sandbox]` key.
#[derive(Debug, thiserror::Error)]
#[error("invalid config key `sandbox.{key}`: {message}")]
pub struct SandboxConfigError {
    /// The key under `[sandbox]`.
    pub key: &'static str,
    /// What is wrong and the fix.
    pub message: String,
}

/// `[sandbox] bwrap_path`: the bubblewrap executable to use (absolute; checked when a
/// sandbox is launched). `None` when absent: the default locations apply.
///
/// # Errors
/// [`SandboxConfigError`] when `[sandbox]` is not a table or the value is not a string.
pub fn bwrap_path_from_config(config: &toml::Table) -> Result<Option<PathBuf>, SandboxConfigError> {
    let Some(section) = config.get("sandbox") else {
        return Ok(None);
    };
    let invalid = |message: String| SandboxConfigError {
        key: "bwrap_path",
        message,
    };
    let table = section
        .as_table()
        .ok_or_else(|| invalid("`[sandbox]` must be a table".into()))?;
    match table.get("bwrap_path") {
        None => Ok(None),
        Some(toml::Value::String(path)) => Ok(Some(PathBuf::from(path))),
        Some(other) => Err(invalid(format!(
            "{other} is not a string; write an absolute path such as \"/usr/bin/bwrap\""
        ))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn reads_the_key() {
        let table: toml::Table =
            toml::from_str("[sandbox]\nbwrap_path = \"/opt/bwrap\"\n").unwrap();
        assert_eq!(
            bwrap_path_from_config(&table).unwrap(),
            Some(PathBuf::from("/opt/bwrap"))
        );
        assert_eq!(bwrap_path_from_config(&toml::Table::new()).unwrap(), None);
        let bad: toml::Table = toml::from_str("[sandbox]\nbwrap_path = 3\n").unwrap();
        assert!(
            bwrap_path_from_config(&bad)
                .unwrap_err()
                .to_string()
                .contains("sandbox.bwrap_path")
        );
    }
}
