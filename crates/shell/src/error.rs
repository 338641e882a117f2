//! Input errors of the shell layer.
//!
//! Only input that cannot describe a command at all is an error (spec 03 edge case 16:
//! an empty argv or an empty first token). Scripts that merely fail to parse are not
//! errors: they are reported as non-plain commands with notes, because bash would still
//! run the lines before a syntax error (spec 03 edge case 15).

/// Why an argv cannot be segmented.
///
/// The CLI maps every variant to an input error (`airlock explain` exits 2, `airlock exec`
/// exits 125; spec 03 edge case 16). Messages are lowercase and name the offending token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShellError {
    /// The argv has no tokens at all (spec 03 edge case 16).
    #[error("empty command: no program to run")]
    EmptyArgv,
    /// The first token (the program) is the empty string (spec 03 edge case 16).
    #[error("empty command: the program name (first token) is empty")]
    EmptyProgram,
    /// A token contains a NUL byte. No process can receive such an argument (`execve`
    /// takes C strings), so the command cannot be what it claims to be.
    #[error("argument {index} contains a NUL byte")]
    NulByte {
        /// Zero-based position of the token in the argv.
        index: usize,
    },
    /// A token is not valid UTF-8 (only raised by [`crate::argv_from_os`]); rules and
    /// heuristics compare text, so such a token cannot be matched faithfully.
    #[error("argument {index} is not valid UTF-8")]
    InvalidUtf8 {
        /// Zero-based position of the token in the argv.
        index: usize,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, ShellError>;
