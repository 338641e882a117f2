//! Placeholders kept between launches in a shared scratch directory (`/tmp`, `$TMPDIR`).
//!
//! Every launch under `:workspace` needs the protected names missing from `/tmp`
//! (`.git`, `.agents`, `.codex`, `.aws`, `.airlock`) as mount points on the host. Making and
//! removing those five directories costs more than anything else Airlock does per launch
//! (~0.45 ms on an ext4 `/tmp` mounted with `discard`: each `rmdir` frees a block). So when
//! a long-lived index serves the launch — the per-user daemon for one-shot launches, or
//! `airlock serve`'s own index — the launch leaves those placeholders in place
//! ([`keeps`]), and the long-lived process removes them once no launch has asked about that
//! root for [`KEEP_FOR`] ([`sweep_idle`], and [`sweep_all`] when it exits).
//!
//! Why nothing changes for the sandbox: a kept placeholder is the same empty, read-only
//! (mode 0555) directory a launch would make; every launch still takes its shared lock
//! and mounts over it; removal still happens only under an exclusive lock, so never from
//! under a running sandbox ([`crate::placeholders`]). Only the placeholders of the
//! enforced protected names directly inside `/tmp` or `$TMPDIR` are kept: a project's own
//! tree never keeps one. With the index off (`AIRLOCK_NESTED_INDEX=off`), or when the
//! daemon did not answer, a launch removes its placeholders as before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long placeholders stay after the last launch that asked about their root.
pub const KEEP_FOR: Duration = Duration::from_secs(10);

/// In a launcher: the roots a long-lived index answered for in this process.
static ANSWERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// In a long-lived index: each root asked about, when last, whether its placeholders were
/// swept since, and its identity (`st_dev`, `st_ino`) when asked.
static QUERIED: Mutex<Option<HashMap<PathBuf, Queried>>> = Mutex::new(None);

#[derive(Clone, Copy)]
struct Queried {
    last: Instant,
    swept: bool,
    identity: Option<(u64, u64)>,
}

/// Notes (in a launcher) that a long-lived index answered for `root`: that index sweeps it.
pub(super) fn note_answered(root: &Path) {
    let mut answered = ANSWERED.lock().unwrap_or_else(PoisonError::into_inner);
    if !answered.iter().any(|r| r == root) {
        answered.push(root.to_path_buf());
    }
}

/// Notes (in a long-lived index) a query for `root`.
pub(super) fn note_query(root: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    let identity = std::fs::symlink_metadata(root)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|m| (m.dev(), m.ino()));
    QUERIED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(
            root.to_path_buf(),
            Queried {
                last: Instant::now(),
                swept: false,
                identity,
            },
        );
}

/// Whether `dir` is a shared scratch directory: `/tmp`, or this process's `$TMPDIR`
/// (absolute, resolved).
fn shared_scratch(dir: &Path) -> bool {
    dir == Path::new("/tmp")
        || std::env::var_os("TMPDIR")
            .map(PathBuf::from)
            .filter(|t| t.is_absolute())
            .and_then(|t| airlock_permissions::resolution_memo::canonicalize(&t).ok())
            .is_some_and(|t| t == dir && t != Path::new("/"))
}

/// Whether the directory placeholder `path`, once this launch is done with it, is left for
/// the long-lived index to remove (module docs).
#[must_use]
pub fn keeps(path: &Path) -> bool {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    airlock_permissions::ENFORCED_PROTECTED_NAMES
        .iter()
        .any(|protected| name == *protected)
        && shared_scratch(parent)
        && ANSWERED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|root| root == parent)
}

/// Removes the unused placeholders directly in `root`, if `root` is still the directory
/// `identity` it was when asked about (opened without following a symlink, and everything
/// below reached from that descriptor: a root moved away and replaced since is left
/// alone); whether one is still held by a running launch.
fn sweep_root(root: &Path, identity: Option<(u64, u64)>) -> bool {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let Ok(dir) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(root)
    else {
        return false;
    };
    if dir.metadata().ok().map(|m| (m.dev(), m.ino())) != identity {
        return false;
    }
    let mut held = false;
    for name in airlock_permissions::ENFORCED_PROTECTED_NAMES {
        held |= crate::placeholders::remove_if_unused_at(&dir, name);
    }
    held
}

/// Removes the unused placeholders of every root not asked about for `idle`; a root is
/// done for this idle period once none of its placeholders is held by a running launch.
pub fn sweep_idle(idle: Duration) {
    let due: Vec<(PathBuf, Queried)> = QUERIED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .map(|queried| {
            queried
                .iter()
                .filter(|(_, q)| !q.swept && q.last.elapsed() >= idle)
                .map(|(root, q)| (root.clone(), *q))
                .collect()
        })
        .unwrap_or_default();
    for (root, asked) in due {
        if sweep_root(&root, asked.identity) {
            continue; // a sandbox still runs: tried again next time
        }
        if let Some(now) = QUERIED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
            .and_then(|queried| queried.get_mut(&root))
            && now.last == asked.last
        {
            now.swept = true;
        }
    }
}

/// Removes the unused placeholders of every root asked about (the long-lived process is
/// ending).
pub fn sweep_all() {
    let roots: Vec<(PathBuf, Queried)> = QUERIED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .map(|q| q.into_iter().collect())
        .unwrap_or_default();
    for (root, asked) in roots {
        sweep_root(&root, asked.identity);
    }
}

/// Starts a thread that calls [`sweep_idle`] with [`KEEP_FOR`] every second (once per
/// process).
pub(super) fn start_sweeper() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("placeholder-sweeper".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                    sweep_idle(KEEP_FOR);
                }
            });
    });
}

#[cfg(test)]
#[path = "keeper_tests.rs"]
mod tests;
