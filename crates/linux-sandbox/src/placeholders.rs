//! The empty mount points of missing protected names (`.git`, `.codex`, `.agents`,
//! `.aws`, `.airlock`, the startup names of a `$HOME` inside a writable root, missing
//! narrower read-only entries): created on the host for the launch, removed after it,
//! without pulling them from under another sandbox that still uses them and without ever
//! removing a directory or file the user made.
//!
//! Two kinds: directories, and empty regular files where a file is expected
//! (`~/.bashrc`, `~/.gitconfig`: a directory there would make every `bash` in the sandbox
//! print "is a directory" and git warn on every run, and would do the same to the user's
//! own shells should one be left behind).
//!
//! The lock is the placeholder itself: every launch that mounts over it holds a shared
//! `flock` on it for the command's lifetime, and a launch removes it afterwards only if
//! it can take that lock exclusively — no other running sandbox uses it, whoever launched
//! that one (another user, another environment: the lock lives on the shared inode, not
//! in a per-user lock directory). A launch re-checks after locking that the path still
//! names the inode it locked, so a removal racing with its start only makes it create the
//! placeholder again.
//!
//! Placeholders are created read-only for everyone (directories mode 0555, files mode 0444
//! and empty): that is how a later launch tells a leftover placeholder (removable once
//! unused) from a user's own empty directory of a protected name, which is writable by its
//! owner and never removed. Inside the sandbox a placeholder is hidden under a read-only
//! tmpfs (directories) or an empty read-only file bound over it (files), so the confined
//! command cannot reach the host inode or its lock.
//! Removing the host entry while another namespace still mounts on it would detach that
//! mount there (Linux >= 3.18), which is exactly what the lock prevents.

use std::fs::File;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Mode of the placeholder directories a launch creates.
const PLACEHOLDER_MODE: u32 = 0o555;

/// Mode of the placeholder files a launch creates (they are also empty).
const PLACEHOLDER_FILE_MODE: u32 = 0o444;

/// What a placeholder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceholderKind {
    /// An empty directory (mode 0555).
    Directory,
    /// An empty regular file (mode 0444).
    File,
}

/// How long a launch waits for another launch to finish removing a placeholder (an
/// exclusive lock is held only for an emptiness check and one `rmdir`).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Whether `meta` describes a directory a launch created (see the module docs).
fn is_placeholder(meta: &std::fs::Metadata) -> bool {
    meta.is_dir() && meta.permissions().mode() & 0o7777 == PLACEHOLDER_MODE
}

/// Whether `meta` describes a file a launch created (see the module docs): empty, regular,
/// mode 0444.
pub fn is_placeholder_file(meta: &std::fs::Metadata) -> bool {
    meta.is_file() && meta.len() == 0 && meta.permissions().mode() & 0o7777 == PLACEHOLDER_FILE_MODE
}

fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Opens `path` as a directory without following a symlink at its last component.
fn open_dir(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
}

/// Opens `path` for reading without following a symlink at its last component, without
/// blocking on a FIFO, and only if it is a regular file (`ENOTDIR` otherwise, which the
/// caller reads as "not a placeholder").
fn open_file(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(io::Error::from_raw_os_error(libc::ENOTDIR))
    }
}

/// A placeholder mount point that could not be made: which one, and the cause.
#[derive(Debug, thiserror::Error)]
#[error("{}", describe(path, cause))]
pub struct PlaceholderError {
    /// The mount point (a missing protected path inside a writable root).
    pub path: PathBuf,
    /// Why it could not be created or locked (part of the message, not a separate cause).
    pub cause: io::Error,
}

/// The message of a [`PlaceholderError`], with the fix for the usual causes.
fn describe(path: &Path, source: &io::Error) -> String {
    let parent = path.parent().unwrap_or(Path::new("/")).display();
    let fix = match source.raw_os_error() {
        Some(libc::EROFS) if path.starts_with("/tmp") => format!(
            "{parent} is on a read-only filesystem, so it cannot be a writable root: remount /tmp writable (e.g. a tmpfs), or use a profile that does not make it writable (one without \":slash_tmp\" = \"write\")"
        ),
        Some(libc::EROFS) => format!(
            "{parent} is on a read-only filesystem, so it cannot be a writable root: remount it writable, or use a profile that does not make it writable"
        ),
        Some(libc::EACCES | libc::EPERM) => format!(
            "this user cannot create entries in {parent}: give it write permission (and clear any immutable attribute), or use a profile that does not make it writable"
        ),
        _ => "fix the cause above, or use a profile that does not make this directory writable"
            .to_owned(),
    };
    format!(
        "cannot create the mount point {} that keeps this protected path from being created by the command: {source}; {fix}",
        path.display()
    )
}

/// One placeholder held by this launch.
#[derive(Debug)]
struct Held {
    path: PathBuf,
    kind: PlaceholderKind,
    /// The directory or file, locked shared.
    dir: File,
}

/// Shared locks on the placeholders of one launch.
#[derive(Debug)]
pub struct PlaceholderGuard {
    held: Vec<Held>,
}

impl PlaceholderGuard {
    /// Creates every missing placeholder directory and takes a shared lock on each.
    /// A path that is not a directory (a symlink, a file) is left alone: the mount
    /// plan decided what to do with it.
    ///
    /// # Errors
    /// A placeholder could not be created or opened (a read-only `/tmp`, a directory
    /// without write permission), or another process kept it locked exclusively for
    /// longer than a removal takes (then nothing runs: the sandbox would not be
    /// protected against that placeholder's removal). The error names the path; the
    /// placeholders made so far are removed again.
    pub fn acquire(paths: &[PathBuf]) -> Result<Self, PlaceholderError> {
        Self::acquire_kinds(
            paths
                .iter()
                .map(|p| (p.as_path(), PlaceholderKind::Directory)),
        )
    }

    /// [`Self::acquire`] for placeholders of either kind: a file placeholder is an empty
    /// regular file; a path holding something else than the kind asked for (a symlink, a
    /// directory where a file is expected) is left alone.
    ///
    /// # Errors
    /// As [`Self::acquire`].
    pub fn acquire_kinds<'a>(
        paths: impl IntoIterator<Item = (&'a Path, PlaceholderKind)>,
    ) -> Result<Self, PlaceholderError> {
        let mut held = Vec::new();
        for (path, kind) in paths {
            match lock_placeholder(path, kind) {
                Ok(Some(dir)) => held.push(Held {
                    path: path.to_path_buf(),
                    kind,
                    dir,
                }),
                Ok(None) => {}
                Err(source) => {
                    Self { held }.release();
                    return Err(PlaceholderError {
                        path: path.to_path_buf(),
                        cause: source,
                    });
                }
            }
        }
        Ok(Self { held })
    }

    /// Releases the locks and removes every placeholder that no other launch holds
    /// and that is still the locked, empty, read-only directory or file — except those a
    /// long-lived index removes later ([`crate::nested_index::keeper::keeps`]).
    pub fn release(self) {
        for Held { path, kind, dir } in self.held {
            if kind == PlaceholderKind::Directory && crate::nested_index::keeper::keeps(&path) {
                continue; // dropping `dir` releases our lock
            }
            let _ = remove_locked(&path, kind, &dir);
        }
    }
}

/// Removes the placeholder `path` of `kind`, opened as `file`, if no launch holds it (an
/// exclusive lock succeeds: ours, if any, was the only one) and it is still that empty,
/// read-only directory or file; whether another launch holds it. Dropping `file`
/// afterwards releases the lock.
fn remove_locked(path: &Path, kind: PlaceholderKind, file: &File) -> bool {
    if file.try_lock().is_err() {
        return true;
    }
    let (Ok(locked), Ok(current)) = (file.metadata(), std::fs::symlink_metadata(path)) else {
        return false;
    };
    if !same_inode(&locked, &current) {
        return false;
    }
    match kind {
        // Fails on a non-empty directory: never anything someone put there.
        PlaceholderKind::Directory if is_placeholder(&current) => {
            let _ = std::fs::remove_dir(path);
        }
        PlaceholderKind::File if is_placeholder_file(&current) => {
            let _ = std::fs::remove_file(path);
        }
        PlaceholderKind::Directory | PlaceholderKind::File => {}
    }
    false
}

/// Removes the directory placeholder `name` in the directory `root` (a descriptor: nothing
/// on the way is resolved by path again, so a root renamed and replaced by a symlink since
/// leads nowhere) unless a launch holds it, or it is not a placeholder (a user's own
/// directory, a symlink, a file); for the long-lived index's sweep of the placeholders
/// launches left for it. Whether a launch still holds it.
pub fn remove_if_unused_at(root: &File, name: &str) -> bool {
    use rustix::fs::{AtFlags, Mode, OFlags};
    use std::os::unix::fs::MetadataExt as _;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(root, name, flags, Mode::empty()) else {
        return false;
    };
    let dir = File::from(fd);
    if dir.try_lock().is_err() {
        return true;
    }
    let (Ok(locked), Ok(current)) = (
        dir.metadata(),
        rustix::fs::statat(root, name, AtFlags::SYMLINK_NOFOLLOW),
    ) else {
        return false;
    };
    if (current.st_dev, current.st_ino) == (locked.dev(), locked.ino()) && is_placeholder(&locked) {
        // Fails on a non-empty directory: never anything someone put there.
        let _ = rustix::fs::unlinkat(root, name, AtFlags::REMOVEDIR);
    }
    false
}

/// Creates `path` as an empty placeholder of `kind` unless something is there already;
/// the directory just made, opened, when this call made one (`lock_placeholder` locks that
/// descriptor instead of opening the path again).
fn create(path: &Path, kind: PlaceholderKind) -> io::Result<Option<File>> {
    let made = match kind {
        PlaceholderKind::Directory => std::fs::DirBuilder::new()
            .mode(PLACEHOLDER_MODE)
            .create(path)
            // The umask may have cleared bits; the mode is the placeholder's marker.
            .and_then(|()| set_placeholder_mode(path)),
        PlaceholderKind::File => std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(PLACEHOLDER_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .and_then(|file| {
                file.set_permissions(std::fs::Permissions::from_mode(PLACEHOLDER_FILE_MODE))
            })
            .map(|()| None),
    };
    match made {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(None),
        other => other,
    }
}

/// Gives the directory just created at `path` the placeholder mode, through a descriptor
/// opened without following a symlink (issue 11, finding F12: a sandbox running meanwhile
/// can replace the new directory with a symlink to any file, and a `chmod` by path, run as
/// the launching user, would change that file's mode), and returns that descriptor. A
/// symlink or file there now is left alone (`lock_placeholder` then sees it is no
/// placeholder). The mode is set only when the umask changed it (one `fstat` instead of a
/// `fchmod` on every launch).
fn set_placeholder_mode(path: &Path) -> io::Result<Option<File>> {
    match open_dir(path) {
        Ok(dir) => {
            if dir.metadata()?.permissions().mode() & 0o7777 != PLACEHOLDER_MODE {
                dir.set_permissions(std::fs::Permissions::from_mode(PLACEHOLDER_MODE))?;
            }
            Ok(Some(dir))
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => Ok(None),
        // Removed again before we locked it (an index sweeping unlocked placeholders, a
        // launch releasing its own): `lock_placeholder` sees it gone and starts again.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Makes sure `path` is a placeholder of `kind` and locks it shared; `None` when `path`
/// holds something else.
fn lock_placeholder(path: &Path, kind: PlaceholderKind) -> io::Result<Option<File>> {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        if Instant::now() >= deadline {
            return Err(io::Error::other(format!(
                "{} stays locked or keeps disappearing; retry, or find the process holding it (e.g. with `fuser -v {}`)",
                path.display(),
                path.display()
            )));
        }
        let opened = match (create(path, kind)?, kind) {
            (Some(made), _) => Ok(made),
            (None, PlaceholderKind::Directory) => open_dir(path),
            (None, PlaceholderKind::File) => open_file(path),
        };
        let dir = match opened {
            Ok(dir) => dir,
            // Removed between our creation and open: start again.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            // A symlink, or an entry of the other kind, at the path.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        match dir.try_lock_shared() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        // A launch removing the placeholder held it exclusively until after the removal;
        // if that happened since we opened it, the path is gone or names another one.
        match std::fs::symlink_metadata(path) {
            Ok(current) if same_inode(&dir.metadata()?, &current) => return Ok(Some(dir)),
            Ok(_) | Err(_) => continue,
        }
    }
}

#[cfg(test)]
#[path = "placeholders_tests.rs"]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod file_tests {
    use super::*;

    fn files(paths: &[&Path]) -> PlaceholderGuard {
        PlaceholderGuard::acquire_kinds(paths.iter().map(|p| (*p, PlaceholderKind::File))).unwrap()
    }

    /// A missing startup file becomes an empty read-only file for the run and is gone
    /// afterwards; the user's own files (even empty ones) are never removed.
    #[test]
    fn file_placeholders_are_empty_read_only_and_removed_after_the_run() {
        let root = tempfile::tempdir().unwrap();
        let bashrc = root.path().join(".bashrc");
        let gitconfig = root.path().join(".gitconfig");
        let guard = files(&[&bashrc, &gitconfig]);
        let meta = std::fs::symlink_metadata(&bashrc).unwrap();
        assert!(meta.is_file() && meta.len() == 0, "{meta:?}");
        assert_eq!(meta.permissions().mode() & 0o7777, PLACEHOLDER_FILE_MODE);
        guard.release();
        assert!(
            !bashrc.exists() && !gitconfig.exists(),
            "placeholders left behind"
        );

        // The user's own empty, writable file: used, never removed.
        std::fs::write(&bashrc, "").unwrap();
        files(&[&bashrc]).release();
        assert!(bashrc.is_file(), "the user's empty .bashrc was removed");
        std::fs::remove_file(&bashrc).unwrap();

        // Overlapping launches: the last one to end removes it; a crashed launch's
        // leftover is recognised and removed by the next one.
        let first = files(&[&bashrc]);
        let second = files(&[&bashrc]);
        first.release();
        assert!(bashrc.is_file(), "removed from under a running launch");
        second.release();
        assert!(!bashrc.exists());
        drop(files(&[&bashrc]));
        assert!(bashrc.is_file());
        files(&[&bashrc]).release();
        assert!(!bashrc.exists());

        // Content written meanwhile (by a host process) keeps it.
        let guard = files(&[&bashrc]);
        std::fs::set_permissions(&bashrc, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&bashrc, "kept\n").unwrap();
        std::fs::set_permissions(&bashrc, std::fs::Permissions::from_mode(0o444)).unwrap();
        guard.release();
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "kept\n");
    }

    /// A directory, a FIFO or a symlink where a file placeholder is expected is left alone
    /// (the mount plan fails on it rather than this code touching it).
    #[test]
    fn other_entries_at_a_file_placeholder_are_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(".profile");
        std::fs::create_dir(&dir).unwrap();
        let link = root.path().join(".zshrc");
        std::os::unix::fs::symlink("/nonexistent", &link).unwrap();
        let fifo = root.path().join(".inputrc");
        let made = std::process::Command::new("mkfifo")
            .env_remove("LD_LIBRARY_PATH")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let guard = files(&[&dir, &link, &fifo]);
        assert!(guard.held.is_empty());
        guard.release();
        assert!(dir.is_dir());
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(std::fs::symlink_metadata(&fifo).is_ok());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod error_tests {
    use super::*;

    /// The message names the mount point and the fix for the usual causes (a read-only
    /// filesystem, a directory this user cannot write).
    #[test]
    fn a_mount_point_that_cannot_be_made_names_the_path_and_the_fix() {
        let erofs = PlaceholderError {
            path: PathBuf::from("/tmp/.git"),
            cause: io::Error::from_raw_os_error(libc::EROFS),
        }
        .to_string();
        assert!(
            erofs.contains("cannot create the mount point /tmp/.git"),
            "{erofs}"
        );
        assert!(
            erofs.contains("/tmp is on a read-only filesystem"),
            "{erofs}"
        );
        assert!(erofs.contains(":slash_tmp"), "{erofs}");
        let eacces = PlaceholderError {
            path: PathBuf::from("/srv/ws/.codex"),
            cause: io::Error::from_raw_os_error(libc::EACCES),
        }
        .to_string();
        assert!(
            eacces.contains("cannot create entries in /srv/ws"),
            "{eacces}"
        );
        // A failed acquire removes the placeholders it made before the failure.
        let root = tempfile::tempdir().unwrap();
        let made = root.path().join(".aws");
        let blocked = root.path().join("missing-parent/.git");
        let error = PlaceholderGuard::acquire(&[made.clone(), blocked.clone()]).unwrap_err();
        assert_eq!(error.path, blocked);
        assert!(!made.exists(), "placeholder left behind");
    }
}
