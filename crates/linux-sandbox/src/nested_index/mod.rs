//! The inotify-driven nested-repository index (issue 11 "Launch speed in real trees"):
//! knows, without walking, which directories under a writable root changed since the
//! last scan, so that a launch in a tree of 50,000 directories costs a few system calls
//! instead of one `lstat` per directory.
//!
//! [`scan`] is what the resolver calls. In order:
//! - `AIRLOCK_NESTED_INDEX=off`, no usable cache directory (the same rule as the disk
//!   cache: the Airlock home must be outside every writable root), or a root on a file
//!   system that does not report its changes to inotify ([`watch::RELIABLE_FS_MAGIC`]):
//!   the plain scan ([`crate::nested_scan::scan_nested_repositories`]);
//! - in a long-running process that called [`enable_in_process`] (`airlock serve`): one
//!   process-wide [`Index`];
//! - otherwise the plain scan.
//!
//! The index's outcome is the plain scan's for the same tree and tagged-directory history
//! (it starts from the disk cache's history and shares the walk, [`crate::nested_walk`]).

mod state;
pub mod watch;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

pub use state::{Index, MAX_ROOTS};

use crate::nested_scan::{ScanOptions, ScanOutcome, scan_nested_repositories};
use crate::resolve::ResolveError;

/// The environment variable that turns the index off (`off`, `0`, `false`, `no`).
pub const ENV_SWITCH: &str = "AIRLOCK_NESTED_INDEX";

static IN_PROCESS: AtomicBool = AtomicBool::new(false);
static INDEX: Mutex<Option<Index>> = Mutex::new(None);

/// Makes [`scan`] use one index in this process (for long-running processes: the index
/// holds one inotify watch per directory of the roots it was asked about).
pub fn enable_in_process() {
    IN_PROCESS.store(true, Ordering::SeqCst);
}

/// Whether `AIRLOCK_NESTED_INDEX` turns the index off.
#[must_use]
pub fn disabled_by_env() -> bool {
    std::env::var_os(ENV_SWITCH).is_some_and(|v| {
        let v = v.to_string_lossy().to_ascii_lowercase();
        matches!(v.as_str(), "off" | "0" | "false" | "no")
    })
}

/// Whether the file system `root` is on reports its changes to inotify.
#[must_use]
pub fn indexable(root: &Path) -> bool {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    rustix::fs::open(root, flags, Mode::empty())
        .is_ok_and(|fd| watch::reliable_fs(std::os::fd::AsFd::as_fd(&fd)))
}

/// The nested repositories below `root` (see the module docs for which mechanism).
///
/// # Errors
/// As [`scan_nested_repositories`].
pub fn scan(root: &Path, options: &ScanOptions) -> Result<ScanOutcome, ResolveError> {
    if options.cache_dir.is_none() || disabled_by_env() || !indexable(root) {
        return scan_nested_repositories(root, options);
    }
    if IN_PROCESS.load(Ordering::SeqCst) {
        let mut guard = INDEX.lock().unwrap_or_else(|poisoned| {
            // A panic mid-query may have left the index half-updated: start afresh.
            let mut guard = poisoned.into_inner();
            *guard = None;
            guard
        });
        if guard.is_none() {
            *guard = Index::new().ok();
        }
        if let Some(index) = guard.as_mut() {
            return index.query(root, options);
        }
    }
    scan_nested_repositories(root, options)
}

/// Drops the process-wide index (tests; a process that stops serving).
pub fn reset_in_process() {
    *INDEX.lock().unwrap_or_else(PoisonError::into_inner) = None;
}

#[cfg(test)]
mod tests;
