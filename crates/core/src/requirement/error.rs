//! Errors of the requirement computation and its settings.

use airlock_shell::ShellError;
use thiserror::Error;

/// Why no requirement could be computed. Only input and configuration errors: anything
/// the computation does not understand makes the decision stricter instead (spec 03
/// preamble).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RequirementError {
    /// The argv is unusable: empty, an empty program, a NUL byte or invalid UTF-8 (spec 03
    /// edge case 16; `explain` exits 2, `exec` exits 125).
    #[error("invalid command: {0}")]
    InvalidCommand(#[from] ShellError),
    /// A configuration value the computation reads is invalid.
    #[error("{file}: invalid `{key}`: {message}")]
    Config {
        /// The config file (or `-c overrides`).
        file: String,
        /// The dotted key.
        key: String,
        /// What is wrong.
        message: String,
    },
}
