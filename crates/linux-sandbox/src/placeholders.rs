//! Removing the empty mount-point directories bubblewrap creates on the host for
//! missing protected names (`.git`, `.codex`, `.agents`, `.aws`), without pulling
//! them from under another sandbox that still uses them.
//!
//! Each placeholder path has a lock file in a directory sandboxed commands cannot
//! write (`/run/airlock` for root, else `$XDG_RUNTIME_DIR/airlock`, else
//! `$AIRLOCK_HOME/run`; the first one outside every writable root). A launch holds a
//! shared lock on it for the command's lifetime; afterwards it removes the directory
//! only if it can take the lock exclusively — i.e. no other running sandbox holds
//! it — and the directory is still empty. Lock files are never unlinked: a new inode
//! at the same path would let two launches believe they hold "the" lock. Locks
//! vanish with their process, so a crashed launch never blocks cleanup forever; at
//! worst an empty directory stays. Without a private lock directory nothing is
//! removed (empty directories stay behind) rather than risk pulling a placeholder
//! from under a running sandbox.
//! Removing the host directory while another namespace still mounts on it would
//! detach that mount there (Linux ≥ 3.18), which is exactly what the lock prevents.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
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

/// Shared locks on the placeholders of one launch.
#[derive(Debug)]
pub struct PlaceholderGuard {
    /// Placeholder, its lock, and whether this launch may remove it afterwards.
    held: Vec<(PathBuf, File, bool)>,
}

impl PlaceholderGuard {
    /// Takes a shared lock per placeholder (blocking while another launch is removing it),
    /// in a lock directory outside `writable_roots`.
    ///
    /// # Errors
    /// Creating the lock directory or a lock file failed.
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
            let lock_path = dir.join(lock_name(path));
            // A lock file exists only for directories a launch created. An existing
            // directory without one is the user's own (empty) directory: shadow it,
            // never remove it, and do not create a lock file that would later make it
            // look like a placeholder.
            if path.exists() && !lock_path.exists() {
                continue;
            }
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&lock_path)?;
            file.lock_shared()?;
            held.push((path.clone(), file, true));
        }
        Ok(Self { held })
    }

    /// Releases the locks and removes every placeholder no other launch holds and that
    /// is still an empty directory.
    pub fn release(self) {
        for (path, file, removable) in self.held {
            // Converting our shared lock to an exclusive one succeeds only when no other
            // launch holds it; dropping `file` releases whatever we hold.
            if removable && file.try_lock().is_ok() {
                // Only an empty directory: never anything a user put there meanwhile.
                let _ = std::fs::remove_dir(&path);
            }
        }
    }
}
