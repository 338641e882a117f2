//! Errors of the requirement computation.

use airlock_shell::ShellError;
use thiserror::Error;

/// Why no requirement could be computed. Only input errors: anything the computation
/// does not understand makes the decision stricter instead (spec 03 preamble).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RequirementError {
    /// The argv is unusable: empty, an empty program, or a NUL byte (spec 03 edge case 16;
    /// `explain` exits 2, `exec` exits 125).
    #[error("invalid command: {0}")]
    InvalidCommand(#[from] ShellError),
}
