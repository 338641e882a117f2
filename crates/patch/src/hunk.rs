//! The parsed form of a patch (reference §A2 "Error format and result shape").

use std::path::PathBuf;

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// `*** Add File: P` with its `+` lines; `contents` ends with `\n` unless empty.
    AddFile {
        /// The path as written (relative to the cwd, or absolute).
        path: PathBuf,
        /// The new file's text.
        contents: String,
    },
    /// `*** Delete File: P`.
    DeleteFile {
        /// The path as written.
        path: PathBuf,
    },
    /// `*** Update File: P`, optionally `*** Move to: Q`, then chunks.
    UpdateFile {
        /// The path as written.
        path: PathBuf,
        /// The destination of a move, as written.
        move_path: Option<PathBuf>,
        /// The chunks, in file order.
        chunks: Vec<UpdateChunk>,
    },
}

impl Hunk {
    /// The path the hunk names first (the source of an update).
    #[must_use]
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::AddFile { path, .. }
            | Self::DeleteFile { path }
            | Self::UpdateFile { path, .. } => path,
        }
    }
}

/// One `@@` chunk of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdateChunk {
    /// The `@@ X` context lines, outermost first (Codex allows one; Airlock lets consecutive
    /// `@@` lines narrow the search). Empty for a bare `@@` or a first chunk without one.
    pub change_context: Vec<String>,
    /// Context and `-` lines: what the file holds now.
    pub old_lines: Vec<String>,
    /// Context and `+` lines: what it holds afterwards.
    pub new_lines: Vec<String>,
    /// `*** End of File` closed the chunk: the old lines must be the file's last lines.
    pub is_end_of_file: bool,
}

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPatch {
    /// The patch text without any heredoc wrapper (trimmed, lines joined with `\n`).
    pub patch: String,
    /// The hunks in order; empty for `*** Begin Patch` / `*** End Patch` alone.
    pub hunks: Vec<Hunk>,
}
