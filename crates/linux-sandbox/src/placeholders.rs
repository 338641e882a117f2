//! The empty mount-point directories of missing protected names (`.git`, `.codex`,
//! `.agents`, `.aws`, `.airlock`): created on the host for the launch, removed after
//! it, without pulling them from under another sandbox that still uses them and
//! without ever removing a directory the user made.
//!
//! The lock is the placeholder directory itself: every launch that mounts over it
//! holds a shared `flock` on the directory for the command's lifetime, and a launch
//! removes it afterwards only if it can take that lock exclusively — no other running
//! sandbox uses it, whoever launched that one (another user, another environment:
//! the lock lives on the shared inode, not in a per-user lock directory). A launch
//! re-checks after locking that the path still names the directory it locked, so a
//! removal racing with its start only makes it create the directory again.
//!
//! Placeholders are created read-only for everyone (mode 0555): that is how a later
//! launch tells a leftover placeholder (removable once unused) from a user's own
//! empty directory of a protected name, which is writable by its owner and never
//! removed. Inside the sandbox the directory is hidden under a read-only tmpfs, so
//! the confined command cannot reach the host directory or its lock.
//! Removing the host directory while another namespace still mounts on it would
//! detach that mount there (Linux >= 3.18), which is exactly what the lock prevents.

use std::fs::File;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Mode of the placeholder directories a launch creates.
const PLACEHOLDER_MODE: u32 = 0o555;

/// How long a launch waits for another launch to finish removing a placeholder (an
/// exclusive lock is held only for an emptiness check and one `rmdir`).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Whether `meta` describes a directory a launch created (see the module docs).
fn is_placeholder(meta: &std::fs::Metadata) -> bool {
    meta.is_dir() && meta.permissions().mode() & 0o7777 == PLACEHOLDER_MODE
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
    /// The directory, locked shared.
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
        let mut held = Vec::with_capacity(paths.len());
        for path in paths {
            match lock_placeholder(path) {
                Ok(Some(dir)) => held.push(Held {
                    path: path.clone(),
                    dir,
                }),
                Ok(None) => {}
                Err(source) => {
                    Self { held }.release();
                    return Err(PlaceholderError {
                        path: path.clone(),
                        cause: source,
                    });
                }
            }
        }
        Ok(Self { held })
    }

    /// Releases the locks and removes every placeholder that no other launch holds
    /// and that is still the locked, empty, read-only directory.
    pub fn release(self) {
        for Held { path, dir } in self.held {
            // Converting our shared lock to an exclusive one succeeds only when no other
            // launch holds it; dropping `dir` releases whatever we hold.
            if dir.try_lock().is_err() {
                continue;
            }
            let (Ok(locked), Ok(current)) = (dir.metadata(), std::fs::symlink_metadata(&path))
            else {
                continue;
            };
            if same_inode(&locked, &current) && is_placeholder(&current) {
                // Fails on a non-empty directory: never anything someone put there.
                let _ = std::fs::remove_dir(&path);
            }
        }
    }
}

/// Makes sure `path` is a directory and locks it shared; `None` when `path` is not a
/// directory.
fn lock_placeholder(path: &Path) -> io::Result<Option<File>> {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        if Instant::now() >= deadline {
            return Err(io::Error::other(format!(
                "{} stays locked or keeps disappearing; retry, or find the process holding it (e.g. with `fuser -v {}`)",
                path.display(),
                path.display()
            )));
        }
        match std::fs::DirBuilder::new()
            .mode(PLACEHOLDER_MODE)
            .create(path)
        {
            // The umask may have cleared bits; the mode is the placeholder's marker.
            Ok(()) => {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(PLACEHOLDER_MODE))?
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let dir = match open_dir(path) {
            Ok(dir) => dir,
            // Removed between our mkdir and open: start again.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            // A symlink or a file at the path.
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
        // A launch removing the directory held it exclusively until after `rmdir`;
        // if that happened since we opened it, the path is gone or names another one.
        match std::fs::symlink_metadata(path) {
            Ok(current) if same_inode(&dir.metadata()?, &current) => return Ok(Some(dir)),
            Ok(_) | Err(_) => continue,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
mod tests {
    use super::*;

    fn guard_for(paths: &[PathBuf]) -> PlaceholderGuard {
        PlaceholderGuard::acquire(paths).unwrap()
    }

    #[test]
    fn placeholders_are_created_removed_and_users_directories_kept() {
        let root = tempfile::tempdir().unwrap();
        let codex = root.path().join(".codex");
        let aws = root.path().join(".aws");
        let paths = vec![codex.clone(), aws.clone()];

        // Missing: created read-only for the run, removed afterwards.
        let guard = guard_for(&paths);
        let mode = std::fs::metadata(&aws).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, PLACEHOLDER_MODE);
        guard.release();
        assert!(!codex.exists() && !aws.exists(), "placeholders left behind");

        // The user's own empty directory: shadowed, never removed.
        std::fs::create_dir(&codex).unwrap();
        guard_for(&paths).release();
        assert!(codex.is_dir(), "the user's empty .codex was removed");
        assert!(!aws.exists());

        // Overlapping launches: the directory stays until the last one ends,
        // whichever ends first.
        let first = guard_for(&paths);
        let second = guard_for(&paths);
        first.release();
        assert!(aws.is_dir(), "removed from under a running launch");
        second.release();
        assert!(!aws.exists());

        // A crashed launch (guard leaked, lock gone with the descriptor) leaves a
        // placeholder the next launch recognises and removes.
        let crashed = guard_for(&paths);
        drop(crashed);
        assert!(aws.is_dir());
        guard_for(&paths).release();
        assert!(!aws.exists());
        assert!(codex.is_dir());

        // Something put into a placeholder meanwhile keeps it.
        let guard = guard_for(&paths);
        std::fs::set_permissions(&aws, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(aws.join("kept"), "x").unwrap();
        std::fs::set_permissions(&aws, std::fs::Permissions::from_mode(PLACEHOLDER_MODE)).unwrap();
        guard.release();
        assert!(aws.join("kept").exists());
    }

    /// The lock is the directory's own: a holder that found it by another route (as
    /// a launch with another lock directory or user would) still keeps it in place.
    #[test]
    fn any_holder_of_the_directory_lock_prevents_removal() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        let guard = guard_for(std::slice::from_ref(&git));
        let other = open_dir(&git).unwrap();
        other.lock_shared().unwrap();
        guard.release();
        assert!(git.is_dir(), "removed while another holder used it");
        drop(other);
        guard_for(std::slice::from_ref(&git)).release();
        assert!(!git.exists());
    }

    /// A launch waits while a removal holds the lock, then creates the directory
    /// again instead of locking the removed one.
    #[test]
    fn a_launch_racing_a_removal_gets_a_live_directory() {
        let root = tempfile::tempdir().unwrap();
        let aws = root.path().join(".aws");
        let remover = guard_for(std::slice::from_ref(&aws));
        remover.held[0].dir.try_lock().unwrap();
        let path = aws.clone();
        let starter = std::thread::spawn(move || guard_for(std::slice::from_ref(&path)));
        std::thread::sleep(Duration::from_millis(20));
        std::fs::remove_dir(&aws).unwrap();
        drop(remover);
        let started = starter.join().unwrap();
        let live = std::fs::symlink_metadata(&aws).unwrap();
        assert!(same_inode(&started.held[0].dir.metadata().unwrap(), &live));
        started.release();
        assert!(!aws.exists());
    }

    #[test]
    fn symlinks_and_files_are_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let link = root.path().join(".codex");
        std::os::unix::fs::symlink("/nonexistent", &link).unwrap();
        let file = root.path().join(".aws");
        std::fs::write(&file, "").unwrap();
        let guard = guard_for(&[link.clone(), file.clone()]);
        assert!(guard.held.is_empty());
        guard.release();
        assert!(std::fs::symlink_metadata(&link).is_ok() && file.is_file());
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
