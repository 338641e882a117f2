//! The empty mount-point directories of missing protected names (`.git`, `.codex`,
//! `.agents`, `.aws`, `.airlock`): created on the host for the launch, removed after
//! it, without pulling them from under another sandbox that still uses them and
//! without ever removing a directory the user made.
//!
//! Each placeholder path has a lock file in a directory sandboxed commands cannot
//! write (`/run/airlock` for root, else `$XDG_RUNTIME_DIR/airlock`, else
//! `$AIRLOCK_HOME/run`; the first one outside every writable root). The lock file
//! records the identity (device, inode, birth time) of the directory a launch
//! created. A launch holds the lock shared for the command's lifetime and, if the
//! directory is missing, creates it (`mkdir` is atomic, so one launch of several
//! does) and records it; afterwards it removes the directory only if it can take the
//! lock exclusively —
//! no other running sandbox holds it — and the directory is still the recorded one
//! and empty. A directory that exists without a matching record is the user's:
//! shadowed for the run, never removed. Lock files are never unlinked: a new inode
//! at the same path would let two launches believe they hold "the" lock. Locks vanish
//! with their process, so a crashed launch never blocks cleanup forever; its
//! directory still matches the record and the next launch removes it. Without a
//! private lock directory nothing is removed (empty directories stay behind) rather
//! than risk pulling a placeholder from under a running sandbox.
//! Removing the host directory while another namespace still mounts on it would
//! detach that mount there (Linux >= 3.18), which is exactly what the lock prevents.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

fn lock_dir_candidates() -> Vec<PathBuf> {
    let uid = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(u32::MAX);
    let mut dirs = Vec::new();
    if uid == 0 {
        dirs.push(PathBuf::from("/run/airlock"));
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(dir).join("airlock"));
    }
    let home = std::env::var_os("AIRLOCK_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| PathBuf::from(h).join(".airlock"))
        });
    if let Some(home) = home {
        dirs.push(home.join("run"));
    }
    dirs
}

/// The first candidate lock directory that no writable root contains (checked on the
/// canonical path of its nearest existing ancestor).
fn lock_dir(writable_roots: &[PathBuf]) -> Option<PathBuf> {
    lock_dir_candidates().into_iter().find(|dir| {
        let mut probe = dir.as_path();
        let resolved = loop {
            if let Ok(c) = std::fs::canonicalize(probe) {
                break c.join(dir.strip_prefix(probe).unwrap_or(Path::new("")));
            }
            match probe.parent() {
                Some(parent) => probe = parent,
                None => break dir.clone(),
            }
        };
        !writable_roots.iter().any(|root| resolved.starts_with(root))
    })
}

/// FNV-1a: a stable file name per placeholder path (std's hasher may change between
/// Rust releases, and two helpers built differently must agree).
fn lock_name(path: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}.lock")
}

/// Who a placeholder directory belongs to: `dev:ino:birth` of the directory itself
/// (birth time in nanoseconds, 0 where the filesystem records none), or `None` if
/// `path` is not a directory.
fn identity(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let birth = meta
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some(format!("{}:{}:{birth}", meta.dev(), meta.ino()))
}

fn read_record(file: &mut File) -> io::Result<String> {
    let mut record = String::new();
    file.rewind()?;
    file.read_to_string(&mut record)?;
    Ok(record)
}

fn write_record(file: &mut File, record: &str) -> io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(record.as_bytes())
}

/// One placeholder held by this launch.
#[derive(Debug)]
struct Held {
    path: PathBuf,
    lock: File,
    /// The recorded identity when the directory is a launch's (ours or another's).
    launch_made: Option<String>,
}

/// Shared locks on the placeholders of one launch.
#[derive(Debug)]
pub struct PlaceholderGuard {
    held: Vec<Held>,
}

impl PlaceholderGuard {
    /// Takes a shared lock per placeholder (waiting only while another launch removes
    /// it) and creates every missing placeholder directory, in a lock directory
    /// outside `writable_roots`.
    ///
    /// # Errors
    /// Creating the lock directory, a lock file or a placeholder directory failed.
    pub fn acquire(paths: &[PathBuf], writable_roots: &[PathBuf]) -> io::Result<Self> {
        let Some(dir) = lock_dir(writable_roots) else {
            eprintln!(
                "airlock: no private directory for placeholder locks (set XDG_RUNTIME_DIR); empty placeholder directories will be left behind"
            );
            return Ok(Self { held: Vec::new() });
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        let mut held = Vec::with_capacity(paths.len());
        for path in paths {
            let mut lock = OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .mode(0o600)
                .open(dir.join(lock_name(path)))?;
            // Waits only while another launch is removing this placeholder.
            lock.lock_shared()?;
            let matches_record = |lock: &mut File| -> io::Result<Option<String>> {
                let record = read_record(lock)?;
                Ok(identity(path).filter(|current| !record.is_empty() && *current == record))
            };
            let launch_made = if identity(path).is_some() {
                matches_record(&mut lock)?
            } else {
                // `mkdir` is atomic: of several launches only one creates and records.
                match std::fs::DirBuilder::new().mode(0o755).create(path) {
                    Ok(()) => {
                        let created = identity(path).ok_or_else(|| {
                            io::Error::other(format!("{} vanished after creation", path.display()))
                        })?;
                        write_record(&mut lock, &created)?;
                        Some(created)
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        matches_record(&mut lock)?
                    }
                    Err(e) => return Err(e),
                }
            };
            held.push(Held {
                path: path.clone(),
                lock,
                launch_made,
            });
        }
        Ok(Self { held })
    }

    /// Releases the locks and removes every placeholder that a launch made, that no
    /// other launch holds, and that is still the recorded, empty directory.
    pub fn release(self) {
        for Held {
            path,
            mut lock,
            launch_made,
        } in self.held
        {
            let Some(record) = launch_made else {
                continue;
            };
            // Converting our shared lock to an exclusive one succeeds only when no other
            // launch holds it; dropping `lock` releases whatever we hold.
            if lock.try_lock().is_ok()
                && identity(&path).as_deref() == Some(record.as_str())
                // Only an empty directory: never anything a user put there meanwhile.
                && std::fs::remove_dir(&path).is_ok()
            {
                let _ = write_record(&mut lock, "");
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
mod tests {
    use super::*;

    /// The launcher's own lock directory (`/run/airlock` for root) is outside `root`.
    fn guard_for(paths: &[PathBuf], root: &Path) -> PlaceholderGuard {
        PlaceholderGuard::acquire(paths, &[root.to_path_buf()]).unwrap()
    }

    #[test]
    fn placeholders_are_created_removed_and_users_directories_kept() {
        let root = tempfile::tempdir().unwrap();
        let codex = root.path().join(".codex");
        let aws = root.path().join(".aws");
        let paths = vec![codex.clone(), aws.clone()];

        // Missing: created for the run, removed afterwards.
        let guard = guard_for(&paths, root.path());
        assert!(codex.is_dir() && aws.is_dir());
        guard.release();
        assert!(!codex.exists() && !aws.exists(), "placeholders left behind");

        // The user's own empty directory, made after an earlier launch recorded the
        // same path: shadowed, never removed.
        std::fs::create_dir(&codex).unwrap();
        guard_for(&paths, root.path()).release();
        assert!(codex.is_dir(), "the user's empty .codex was removed");
        assert!(!aws.exists());

        // Two overlapping launches: the directory stays until the last one ends.
        let first = guard_for(&paths, root.path());
        let second = guard_for(&paths, root.path());
        first.release();
        assert!(aws.is_dir(), "removed from under a running launch");
        second.release();
        assert!(!aws.exists());

        // A crashed launch (guard leaked, lock gone with the descriptor) leaves a
        // directory the next launch recognises and removes.
        let crashed = guard_for(&paths, root.path());
        drop(crashed);
        assert!(aws.is_dir());
        guard_for(&paths, root.path()).release();
        assert!(!aws.exists());
        assert!(codex.is_dir());
    }
}
