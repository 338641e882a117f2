//! Verification: a parsed patch against the files as they are (spec 11 §Verification;
//! reference §A4 `maybe_parse_apply_patch_verified`).

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use serde::Deserialize;
use serde::Serialize;

use crate::diff::unified_diff;
use crate::error::VerifyError;
use crate::hunk::Hunk;
use crate::lexical::normalize_lexically;
use crate::parser::parse_patch;
use crate::update::apply_chunks;

/// How the verifier reads a file (the only I/O of this crate). Crate `core` wraps it with the
/// deny-read check; the sandboxed child reads through the kernel's view.
pub trait ReadFile {
    /// The bytes of the file at the absolute path `path`.
    ///
    /// # Errors
    /// Whatever the read fails with (missing file, a directory, permission).
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>>;
}

/// One hunk's effect (spec 01 `FileChange`, plus what applying needs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChangeKind {
    /// A new (or overwritten) file.
    Add {
        /// Its whole content.
        content: String,
    },
    /// A removed file.
    Delete {
        /// What it held.
        content: String,
    },
    /// An edited, possibly moved, file.
    Update {
        /// The edit as a unified diff (1 line of context, no headers).
        unified_diff: String,
        /// The absolute destination of a move.
        move_path: Option<PathBuf>,
        /// The complete new text.
        new_content: String,
    },
}

/// One hunk, verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifiedChange {
    /// Absolute, lexically normalised path (the source of an update).
    pub path: PathBuf,
    /// The path as spelled in the patch (for messages and the summary).
    pub display: String,
    /// The move destination as spelled in the patch.
    pub move_display: Option<String>,
    /// What happens to the file.
    pub kind: ChangeKind,
}

/// What one path holds once the whole patch is applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalWrite {
    /// Absolute path.
    pub path: PathBuf,
    /// The new content, or `None` when the file is removed.
    pub content: Option<String>,
}

/// A patch checked against the files: every change and the end state of every path
/// (spec 11 §Verification).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifiedPatch {
    /// The patch text (without a heredoc wrapper).
    pub patch: String,
    /// The directory relative paths were resolved against.
    pub cwd: PathBuf,
    /// One entry per hunk, in patch order.
    pub changes: Vec<VerifiedChange>,
    /// Per affected path, its final content (`None` = removed), sorted by path. Later hunks
    /// see earlier hunks' results, as when Codex applies hunk by hunk.
    pub final_writes: Vec<FinalWrite>,
}

impl VerifiedPatch {
    /// Every absolute path the patch writes or removes: sources and move destinations, sorted,
    /// without repeats (spec 11: the session-cache keys; reference §A6 "all paths writable").
    #[must_use]
    pub fn affected_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = Vec::new();
        for change in &self.changes {
            paths.push(change.path.clone());
            if let ChangeKind::Update {
                move_path: Some(dest),
                ..
            } = &change.kind
            {
                paths.push(dest.clone());
            }
        }
        paths.sort();
        paths.dedup();
        paths
    }

    /// The model-facing success text (reference §A4): `Success. Updated the following files:`
    /// then `A`, `M`, `D` lines in that order, paths as in the patch, a move under its
    /// destination.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut added = Vec::new();
        let mut modified = Vec::new();
        let mut deleted = Vec::new();
        for change in &self.changes {
            match &change.kind {
                ChangeKind::Add { .. } => added.push(&change.display),
                ChangeKind::Delete { .. } => deleted.push(&change.display),
                ChangeKind::Update { .. } => {
                    modified.push(change.move_display.as_ref().unwrap_or(&change.display));
                }
            }
        }
        let mut out = String::from("Success. Updated the following files:\n");
        for (letter, paths) in [("A", added), ("M", modified), ("D", deleted)] {
            for path in paths {
                out.push_str(&format!("{letter} {path}\n"));
            }
        }
        out
    }
}

/// Parses `patch` and verifies it against the files under `cwd` read through `fs` (spec 11
/// §Verification): Add records the content, Delete reads the file, Update reads it and
/// computes the new text and a unified diff. Each hunk sees the results of the earlier ones.
///
/// # Errors
/// [`VerifyError`]: the parse error, [`VerifyError::EmptyPatch`] for no hunks, a read or
/// match failure (naming the path as spelled in the patch).
pub fn verify_patch(
    patch: &str,
    cwd: &Path,
    fs: &dyn ReadFile,
) -> Result<VerifiedPatch, VerifyError> {
    let parsed = parse_patch(patch)?;
    if parsed.hunks.is_empty() {
        return Err(VerifyError::EmptyPatch);
    }
    let mut state = Overlay {
        fs,
        files: BTreeMap::new(),
    };
    let mut changes = Vec::new();
    for hunk in &parsed.hunks {
        let path = normalize_lexically(cwd, hunk.path());
        let display = hunk.path().display().to_string();
        let change = match hunk {
            Hunk::AddFile { contents, .. } => {
                state.files.insert(path.clone(), Some(contents.clone()));
                VerifiedChange {
                    path,
                    display,
                    move_display: None,
                    kind: ChangeKind::Add {
                        content: contents.clone(),
                    },
                }
            }
            Hunk::DeleteFile { .. } => {
                let content = state
                    .read(&path)
                    .map_err(|reason| VerifyError::ReadDelete {
                        path: display.clone(),
                        reason,
                    })?;
                state.files.insert(path.clone(), None);
                VerifiedChange {
                    path,
                    display,
                    move_display: None,
                    kind: ChangeKind::Delete { content },
                }
            }
            Hunk::UpdateFile {
                move_path, chunks, ..
            } => {
                let original = state
                    .read(&path)
                    .map_err(|reason| VerifyError::ReadUpdate {
                        path: display.clone(),
                        reason,
                    })?;
                let new_content = apply_chunks(&original, chunks, &display)?;
                let dest = move_path
                    .as_ref()
                    .map(|dest| normalize_lexically(cwd, dest));
                match &dest {
                    Some(dest) if *dest != path => {
                        state.files.insert(path.clone(), None);
                        state.files.insert(dest.clone(), Some(new_content.clone()));
                    }
                    _ => {
                        state.files.insert(path.clone(), Some(new_content.clone()));
                    }
                }
                VerifiedChange {
                    path,
                    display,
                    move_display: move_path.as_ref().map(|dest| dest.display().to_string()),
                    kind: ChangeKind::Update {
                        unified_diff: unified_diff(&original, &new_content),
                        move_path: dest,
                        new_content,
                    },
                }
            }
        };
        changes.push(change);
    }
    let final_writes = state
        .files
        .into_iter()
        .map(|(path, content)| FinalWrite { path, content })
        .collect();
    Ok(VerifiedPatch {
        patch: parsed.patch,
        cwd: cwd.to_path_buf(),
        changes,
        final_writes,
    })
}

/// The files as earlier hunks left them, over the real ones.
struct Overlay<'a> {
    fs: &'a dyn ReadFile,
    files: BTreeMap<PathBuf, Option<String>>,
}

impl Overlay<'_> {
    /// The text at `path`, or why it cannot be had (missing, removed by an earlier hunk, not
    /// UTF-8).
    fn read(&self, path: &Path) -> Result<String, String> {
        match self.files.get(path) {
            Some(Some(text)) => Ok(text.clone()),
            Some(None) => {
                Err("No such file or directory (removed earlier in this patch)".to_owned())
            }
            None => {
                let bytes = self.fs.read_file(path).map_err(|error| error.to_string())?;
                String::from_utf8(bytes)
                    .map_err(|_| "stream did not contain valid UTF-8".to_owned())
            }
        }
    }
}
