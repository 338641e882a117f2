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
//! - in a long-running process that called [`enable_in_process`] (`airlock serve`, the
//!   daemon itself): one process-wide [`Index`];
//! - in a one-shot launch that called [`enable_daemon`] (`airlock sandbox`, the
//!   `airlock linux-sandbox` helper): the per-user daemon ([`daemon`], asked through
//!   [`client`] within [`client::QUERY_BUDGET`]); without one, the plain scan, and a daemon
//!   is started for the next launches;
//! - otherwise the plain scan.
//!
//! The index's outcome is the plain scan's for the same tree and tagged-directory history
//! (it starts from the disk cache's history and shares the walk, [`crate::nested_walk`]).

pub mod client;
pub mod daemon;
pub mod keeper;
pub mod peer;
mod relist;
mod source;
mod state;
pub mod watch;
pub mod wire;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

pub use state::{Index, MAX_ROOTS, watch_cap};

use crate::nested_scan::{ScanOptions, ScanOutcome, scan_nested_repositories};
use crate::resolve::ResolveError;

/// The environment variable that turns the index off (`off`, `0`, `false`, `no`).
pub const ENV_SWITCH: &str = "AIRLOCK_NESTED_INDEX";

static IN_PROCESS: AtomicBool = AtomicBool::new(false);
static INDEX: Mutex<Option<Index>> = Mutex::new(None);
static DAEMON_EXE: OnceLock<PathBuf> = OnceLock::new();
static SPAWNED: AtomicBool = AtomicBool::new(false);

/// Makes [`scan`] ask the per-user daemon, started with the program `exe`
/// (`airlock __nested-index SOCKET`) when none runs.
pub fn enable_daemon(exe: PathBuf) {
    let _ = DAEMON_EXE.set(exe);
}

/// The daemon's socket for this process's Airlock home and whether a daemon answers
/// there (`airlock doctor`); `None` when the Airlock home is not an existing directory.
#[must_use]
pub fn daemon_status() -> Option<(PathBuf, bool)> {
    let socket = client::socket_for(&crate::scan_cache::default_cache_dir()?)?;
    let running = client::ping(&socket);
    Some((socket, running))
}

/// Makes [`scan`] use one index in this process (for long-running processes: the index
/// holds one inotify watch per directory of the roots it was asked about).
pub fn enable_in_process() {
    IN_PROCESS.store(true, Ordering::SeqCst);
    keeper::start_sweeper();
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
    // Asked by `prefetch` and again by `scan` for each root of a launch: once per plan.
    thread_local! {
        static INDEXABLE: airlock_permissions::resolution_memo::MemoCache<PathBuf, bool> =
            const { std::cell::RefCell::new(None) };
    }
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    airlock_permissions::resolution_memo::remember(&INDEXABLE, &root.to_path_buf(), || {
        Ok::<_, std::convert::Infallible>(
            rustix::fs::open(root, flags, Mode::empty())
                .is_ok_and(|fd| watch::reliable_fs(std::os::fd::AsFd::as_fd(&fd))),
        )
    })
    .unwrap_or_else(|never| match never {})
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
            keeper::note_query(root);
            let outcome = index.query(root, options);
            if outcome.is_ok() {
                keeper::note_answered(root);
            }
            return outcome;
        }
    }
    if let Some(exe) = DAEMON_EXE.get()
        && let Some(socket) = options.cache_dir.as_deref().and_then(client::socket_for)
    {
        match client::ask(&socket, root, options) {
            client::Asked::Answer(outcome) => {
                keeper::note_answered(root);
                return Ok(outcome);
            }
            client::Asked::NoDaemon => {
                if !SPAWNED.swap(true, Ordering::SeqCst) {
                    client::spawn_daemon(exe, &socket);
                }
            }
            client::Asked::Failed => {}
        }
    }
    scan_nested_repositories(root, options)
}

/// Sends the daemon the query of a later [`scan`] of `root` with `options` ahead of time
/// (inside a [`client::Batch`]: see [`client::prefetch`]), so that it is worked on while
/// the launch does other things. Does nothing where [`scan`] would not ask the daemon.
pub fn prefetch(root: &Path, options: &ScanOptions) {
    if options.cache_dir.is_none()
        || disabled_by_env()
        || IN_PROCESS.load(Ordering::SeqCst)
        || DAEMON_EXE.get().is_none()
        || !indexable(root)
    {
        return;
    }
    if let Some(socket) = options.cache_dir.as_deref().and_then(client::socket_for) {
        client::prefetch(&socket, root, options);
    }
}

/// Drops the process-wide index (tests; a process that stops serving).
pub fn reset_in_process() {
    *INDEX.lock().unwrap_or_else(PoisonError::into_inner) = None;
}

#[cfg(test)]
mod tests;
