//! Errors of parsing and verifying a patch, with Codex's texts (reference §A2, §A3).

/// A patch that does not follow the grammar (reference §A2 "Error format").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The whole patch is unusable: shown as `invalid patch: <msg>`.
    #[error("invalid patch: {0}")]
    InvalidPatch(String),
    /// One hunk is unusable: shown as `invalid hunk at line N, <msg>`; `line_number` is 1-based
    /// in the trimmed patch text (line 1 is `*** Begin Patch`).
    #[error("invalid hunk at line {line_number}, {message}")]
    InvalidHunk {
        /// What is wrong.
        message: String,
        /// The 1-based line.
        line_number: usize,
    },
}

/// A patch that parses but cannot be applied to the files as they are (reference §A3 "Error
/// messages"). Paths in messages are spelled as in the patch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The patch does not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A file to update cannot be read or is not UTF-8 text.
    #[error("Failed to read file to update {path}: {reason}")]
    ReadUpdate {
        /// The path as spelled in the patch.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// A file to delete cannot be read (missing, a directory, unreadable).
    #[error("Failed to read {path}: {reason}")]
    ReadDelete {
        /// The path as spelled in the patch.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// An `@@` context line is not in the file (after the previous chunk).
    #[error("Failed to find context '{context}' in {path}")]
    ContextNotFound {
        /// The context line.
        context: String,
        /// The path as spelled in the patch.
        path: String,
    },
    /// A chunk's old lines are not in the file (after the previous chunk).
    #[error("Failed to find expected lines in {path}:\n{lines}")]
    LinesNotFound {
        /// The path as spelled in the patch.
        path: String,
        /// The old lines, joined with `\n`.
        lines: String,
    },
    /// Airlock: an `*** End of File` chunk whose old lines exist, but not as the last lines.
    #[error(
        "Failed to find expected lines at the end of {path} (the chunk is marked '*** End of File', \
         but these lines are not the last lines of the file; drop the marker or fix the lines):\n{lines}"
    )]
    NotAtEndOfFile {
        /// The path as spelled in the patch.
        path: String,
        /// The old lines, joined with `\n`.
        lines: String,
    },
    /// `*** Begin Patch` / `*** End Patch` with nothing between (reference §A6 step 1).
    #[error("empty patch")]
    EmptyPatch,
}
