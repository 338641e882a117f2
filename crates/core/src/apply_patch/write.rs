//! Applying a verified patch's end state atomically (spec 11 §Enforcement: "all new contents
//! are written to temporary files beside their targets and renamed into place only when every
//! file succeeded; on failure nothing changed and the error says which file failed").
//!
//! Runs in the sandboxed child, so every write is judged by the kernel. A target is always
//! *replaced* by `rename`, never written into: a hard link or symlink in the workspace that
//! points outside is swapped for a new file, and the outside inode is never touched.

use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;

use airlock_patch::FinalWrite;

/// Why applying stopped; the message names the file and the OS error (which is what sandbox
/// denial detection reads, spec 05).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Preparing failed; nothing was changed (temporary files and created folders removed).
    #[error("cannot write {path}: {source}; nothing was changed")]
    Prepare {
        /// The file that could not be prepared.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A rename or removal failed after every file was prepared (another process raced us).
    #[error(
        "cannot write {path}: {source}; already changed: {}",
        display_paths(changed)
    )]
    Commit {
        /// The file whose rename or removal failed.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
        /// Files already replaced or removed.
        changed: Vec<PathBuf>,
    },
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "none".to_owned();
    }
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One prepared write.
struct Prepared {
    target: PathBuf,
    temp: Option<PathBuf>,
}

/// Writes `writes` all-or-nothing: phase 1 writes every new content to a temporary file in
/// the target's directory (creating missing folders) and proves every removal's directory is
/// writable; any failure undoes phase 1 and returns [`WriteError::Prepare`]. Phase 2 renames
/// the temporary files over the targets and removes deleted files.
///
/// # Errors
/// [`WriteError`], naming the file.
pub fn write_atomically(writes: &[FinalWrite]) -> Result<(), WriteError> {
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut prepared: Vec<Prepared> = Vec::new();
    for (index, write) in writes.iter().enumerate() {
        match prepare(write, index, &mut created_dirs) {
            Ok(item) => prepared.push(item),
            Err(source) => {
                undo(&prepared, &created_dirs);
                return Err(WriteError::Prepare {
                    path: write.path.clone(),
                    source,
                });
            }
        }
    }
    let mut changed = Vec::new();
    for (position, item) in prepared.iter().enumerate() {
        let result = match &item.temp {
            Some(temp) => fs::rename(temp, &item.target),
            None => match fs::remove_file(&item.target) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        if let Err(source) = result {
            undo(prepared.get(position..).unwrap_or_default(), &[]);
            return Err(WriteError::Commit {
                path: item.target.clone(),
                source,
                changed,
            });
        }
        changed.push(item.target.clone());
    }
    Ok(())
}

fn prepare(
    write: &FinalWrite,
    index: usize,
    created_dirs: &mut Vec<PathBuf>,
) -> std::io::Result<Prepared> {
    let target = &write.path;
    let parent = target
        .parent()
        .ok_or_else(|| std::io::Error::other("path has no parent directory"))?;
    if fs::symlink_metadata(target).is_ok_and(|meta| meta.is_dir()) {
        return Err(std::io::Error::other("path is a directory"));
    }
    let Some(content) = &write.content else {
        if !parent.exists() {
            return Ok(Prepared {
                target: target.clone(),
                temp: None,
            });
        }
        // A removal needs a writable directory: prove it now, so phase 2 cannot fail on it.
        let probe = temp_path(parent, target, index, "probe");
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)?;
        fs::remove_file(&probe)?;
        return Ok(Prepared {
            target: target.clone(),
            temp: None,
        });
    };
    create_parents(parent, created_dirs)?;
    let temp = temp_path(parent, target, index, "tmp");
    let result = write_temp(&temp, target, content);
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.map(|()| Prepared {
        target: target.clone(),
        temp: Some(temp),
    })
}

fn write_temp(temp: &Path, target: &Path, content: &str) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(temp)?;
    file.write_all(content.as_bytes())?;
    // Keep an existing file's permission bits (the replaced inode's, not a link target's).
    if let Ok(meta) = fs::symlink_metadata(target)
        && meta.is_file()
    {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()
}

/// `.<name>.airlock-<pid>-<index>.<kind>` beside `target`.
fn temp_path(parent: &Path, target: &Path, index: usize, kind: &str) -> PathBuf {
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent.join(format!(
        ".{name}.airlock-{}-{index}.{kind}",
        std::process::id()
    ))
}

/// Creates the missing folders of `dir`, recording each one created (outermost first).
fn create_parents(dir: &Path, created: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut missing = Vec::new();
    let mut cursor = Some(dir);
    while let Some(path) = cursor {
        if fs::symlink_metadata(path).is_ok() {
            break;
        }
        missing.push(path.to_path_buf());
        cursor = path.parent();
    }
    for path in missing.into_iter().rev() {
        fs::create_dir(&path)?;
        created.push(path);
    }
    Ok(())
}

/// Removes the temporary files of `prepared` and the folders in `created_dirs` (innermost
/// first, only when empty).
fn undo(prepared: &[Prepared], created_dirs: &[PathBuf]) {
    for item in prepared {
        if let Some(temp) = &item.temp {
            let _ = fs::remove_file(temp);
        }
    }
    for dir in created_dirs.iter().rev() {
        let _ = fs::remove_dir(dir);
    }
}
