//! Removing the empty mount-point directories bubblewrap creates on the host for
//! missing protected names (`.git`, `.codex`, `.agents`, `.aws`), without pulling
//! them from under another sandbox that still uses them.
//!
//! Each placeholder path has a lock file in a directory sandboxed commands cannot
//! write (`/run/airlock` for root, else `$XDG_RUNTIME_DIR/airlock`). A launch holds a
//! shared lock on it for the command's lifetime; afterwards it removes the directory
//! only if it can take the lock exclusively — i.e. no other running sandbox holds
//! it — and the directory is still empty. Locks vanish with their process, so a
//! crashed launch never blocks cleanup forever; at worst an empty directory stays.
//! Removing the host directory while another namespace still mounts on it would
//! detach that mount there (Linux ≥ 3.18), which is exactly what the lock prevents.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

fn lock_dir() -> PathBuf {
    let uid = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(u32::MAX);
    if uid == 0 {
        return PathBuf::from("/run/airlock");
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("airlock"),
        _ => std::env::temp_dir().join(format!("airlock-{uid}")),
    }
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
    dir: PathBuf,
}

impl PlaceholderGuard {
    /// Takes a shared lock per placeholder (blocking while another launch is removing it).
    ///
    /// # Errors
    /// Creating the lock directory or a lock file failed.
    pub fn acquire(paths: &[PathBuf]) -> io::Result<Self> {
        let dir = lock_dir();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        let mut held = Vec::with_capacity(paths.len());
        for path in paths {
            let lock_path = dir.join(lock_name(path));
            // An existing directory without a lock file is the user's own (empty)
            // directory: shadow it, never remove it.
            let removable = !path.exists() || lock_path.exists();
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&lock_path)?;
            file.lock_shared()?;
            held.push((path.clone(), file, removable));
        }
        Ok(Self { held, dir })
    }

    /// Releases the locks and removes every placeholder no other launch holds and that
    /// is still an empty directory.
    pub fn release(self) {
        for (path, file, removable) in self.held {
            let _ = file.unlock();
            if removable && file.try_lock().is_ok() {
                // Only an empty directory: never anything a user put there meanwhile.
                let _ = std::fs::remove_dir(&path);
                let _ = std::fs::remove_file(self.dir.join(lock_name(&path)));
                let _ = file.unlock();
            }
        }
    }
}
