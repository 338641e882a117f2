//! Applying a verified patch's end state atomically (spec 11 §Enforcement: "all new contents
//! are written to temporary files beside their targets and renamed into place only when every
//! file succeeded; on failure nothing changed and the error says which file failed").
//!
//! Runs in the sandboxed child, so every write is judged by the kernel. A target is always
//! *replaced* by `rename`, never written into: a hard link or symlink in the workspace that
//! points outside is swapped for a new file, and the outside inode is never touched.
//!
//! Where a target is written is decided once (issue 11, finding F6): each path's folder is
//! resolved through its symlinks ([`resolve_target`]), and that real folder is then opened
//! component by component from `/` without following any symlink (`O_NOFOLLOW`), every later
//! step (temporary file, `rename`, `unlink`) working relative to the opened folder. A symlink
//! swapped in on the way after the check makes the write fail instead of following it. (On
//! platforms without `openat`, the real path is used as a path; the check is then not
//! race-free.)

use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;

use airlock_patch::FinalWrite;

use super::dirs::Dir;
use super::resolve::resolve_target;

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
    /// The path as the patch names it (for messages).
    target: PathBuf,
    /// The real folder, opened without following symlinks (`None`: a removal whose folder
    /// is missing, nothing to do).
    dir: Option<Dir>,
    /// The last component.
    name: OsString,
    /// The temporary file's name in `dir`, or `None` for a removal.
    temp: Option<OsString>,
}

/// One write with where it really goes: `real` is [`resolve_target`]'s result for
/// `write.path` (the parent's check and the child's agree on it, see `helper`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RealWrite<'a> {
    /// The write as verified.
    pub write: &'a FinalWrite,
    /// Its real path.
    pub real: &'a std::path::Path,
}

/// Writes `writes` all-or-nothing: phase 1 writes every new content to a temporary file in
/// the target's real folder (creating missing folders) and proves every removal's folder is
/// writable; any failure undoes phase 1 and returns [`WriteError::Prepare`]. Phase 2 renames
/// the temporary files over the targets and removes deleted files. Each path is resolved
/// first (see the module docs).
///
/// # Errors
/// [`WriteError`], naming the file.
pub fn write_atomically(writes: &[FinalWrite]) -> Result<(), WriteError> {
    let mut reals = Vec::with_capacity(writes.len());
    for write in writes {
        let real = resolve_target(&write.path).map_err(|error| WriteError::Prepare {
            path: write.path.clone(),
            source: std::io::Error::other(error.to_string()),
        })?;
        reals.push(real.real);
    }
    let resolved: Vec<RealWrite<'_>> = writes
        .iter()
        .zip(&reals)
        .map(|(write, real)| RealWrite { write, real })
        .collect();
    write_resolved(&resolved)
}

/// [`write_atomically`] with the real paths already decided.
///
/// # Errors
/// [`WriteError`], naming the file.
pub(crate) fn write_resolved(writes: &[RealWrite<'_>]) -> Result<(), WriteError> {
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut prepared: Vec<Prepared> = Vec::new();
    for (index, write) in writes.iter().enumerate() {
        match prepare(write, index, &mut created_dirs) {
            Ok(item) => prepared.push(item),
            Err(source) => {
                undo(&prepared, &created_dirs);
                return Err(WriteError::Prepare {
                    path: write.write.path.clone(),
                    source,
                });
            }
        }
    }
    let mut changed = Vec::new();
    for (position, item) in prepared.iter().enumerate() {
        let result = match (&item.dir, &item.temp) {
            (Some(dir), Some(temp)) => dir.rename(temp, &item.name),
            (Some(dir), None) => match dir.unlink(&item.name) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
            (None, _) => Ok(()),
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
    write: &RealWrite<'_>,
    index: usize,
    created_dirs: &mut Vec<PathBuf>,
) -> std::io::Result<Prepared> {
    let target = &write.write.path;
    let (Some(parent), Some(name)) = (write.real.parent(), write.real.file_name()) else {
        return Err(std::io::Error::other("path has no parent directory"));
    };
    let name = name.to_owned();
    let Some(content) = &write.write.content else {
        let Some(dir) = Dir::open(parent, false, created_dirs)? else {
            return Ok(Prepared {
                target: target.clone(),
                dir: None,
                name,
                temp: None,
            });
        };
        if dir.is_dir(&name)? {
            return Err(std::io::Error::other("path is a directory"));
        }
        // A removal needs a writable directory: prove it now, so phase 2 cannot fail on it.
        let probe = temp_name(&name, index, "probe");
        drop(dir.create_new(&probe)?);
        dir.unlink(&probe)?;
        return Ok(Prepared {
            target: target.clone(),
            dir: Some(dir),
            name,
            temp: None,
        });
    };
    let dir = Dir::open(parent, true, created_dirs)?
        .ok_or_else(|| std::io::Error::other("the folder could not be created"))?;
    if dir.is_dir(&name)? {
        return Err(std::io::Error::other("path is a directory"));
    }
    let temp = temp_name(&name, index, "tmp");
    let result = write_temp(&dir, &temp, &name, content);
    if result.is_err() {
        let _ = dir.unlink(&temp);
    }
    result.map(|()| Prepared {
        target: target.clone(),
        dir: Some(dir),
        name,
        temp: Some(temp),
    })
}

fn write_temp(dir: &Dir, temp: &OsString, name: &OsString, content: &str) -> std::io::Result<()> {
    let mut file = dir.create_new(temp)?;
    file.write_all(content.as_bytes())?;
    // Keep an existing file's permission bits (the replaced inode's, not a link target's).
    if let Some(mode) = dir.file_mode(name)? {
        dir.set_mode(&file, mode)?;
    }
    file.sync_all()
}

/// `.<name>.airlock-<pid>-<index>.<kind>`, beside the target.
fn temp_name(name: &OsString, index: usize, kind: &str) -> OsString {
    OsString::from(format!(
        ".{}.airlock-{}-{index}.{kind}",
        name.to_string_lossy(),
        std::process::id()
    ))
}

/// Removes the temporary files of `prepared` and the folders in `created_dirs` (innermost
/// first, only when empty).
fn undo(prepared: &[Prepared], created_dirs: &[PathBuf]) {
    for item in prepared {
        if let (Some(dir), Some(temp)) = (&item.dir, &item.temp) {
            let _ = dir.unlink(temp);
        }
    }
    for dir in created_dirs.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}
