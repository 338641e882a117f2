//! Errors of the approval layer.

use std::path::PathBuf;

/// A configuration problem in `[hooks]`, `[auto_review]` or `hooks.json` (spec 10
/// §Configuration: invalid values fail with file, key and the allowed values).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A key has a value of the wrong type or range.
    #[error("{origin}: `{key}`: {problem}")]
    Invalid {
        /// The file (or `-c overrides`) the value came from.
        origin: String,
        /// The dotted key, e.g. `hooks.permission_request[0].timeout`.
        key: String,
        /// What is wrong and what is allowed.
        problem: String,
    },
    /// `hooks.json` exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `hooks.json` is not valid JSON.
    #[error("{}: invalid JSON: {message}", path.display())]
    InvalidJson {
        /// The file.
        path: PathBuf,
        /// The parser's message with line and column.
        message: String,
    },
}

impl ConfigError {
    pub(crate) fn invalid(
        origin: &str,
        key: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            origin: origin.to_owned(),
            key: key.into(),
            problem: problem.into(),
        }
    }
}
