//! Killing a launch whole, at any moment of its set-up (red-team of issue 13: a launch
//! killed while bubblewrap was still setting up left its sandbox running).
//!
//! A launch started in its own process group (every [`super::OutputMode::Capture`]
//! launch) holds the helper, if any, and the outer bubblewrap; it is killed whole as
//! [`airlock_sandbox::process_kill`] describes (stop the group, kill the members' children
//! outside it — the sandbox's first process —, kill the group).
//!
//! [`kill_all`] does this for every live launch of this process (a server ending on
//! `SIGTERM`, `SIGINT` or `SIGHUP`). Nothing can run once this process is killed with
//! `SIGKILL`: then bubblewrap's `--die-with-parent` applies, which leaves a sandbox whose
//! first process had not armed it yet running until its command ends.

// kill(2) on process ids this process owns; every unsafe block says why it is sound.
#![allow(unsafe_code)]

use std::collections::BTreeSet;

pub(super) use airlock_sandbox::process_kill::{children_of, kill_launch};
use std::sync::{Condvar, Mutex, PoisonError};

/// The launches of this process.
struct Launches {
    /// Process group ids (= leader pids, not reaped yet) of the live launches.
    live: BTreeSet<i32>,
    /// Launches being started (between [`begin_start`] and [`register`]).
    starting: usize,
    /// Set by [`kill_all`]: no launch starts any more.
    stopping: bool,
}

static LAUNCHES: Mutex<Launches> = Mutex::new(Launches {
    live: BTreeSet::new(),
    starting: 0,
    stopping: false,
});
static STARTED: Condvar = Condvar::new();

fn launches() -> std::sync::MutexGuard<'static, Launches> {
    LAUNCHES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Call before starting a launch that will be registered: `false` once [`kill_all`] has
/// begun (then nothing may start). Every `true` must be followed by [`register`] or
/// [`abandon_start`].
pub(super) fn begin_start() -> bool {
    let mut launches = launches();
    if launches.stopping {
        return false;
    }
    launches.starting += 1;
    true
}

/// The start that [`begin_start`] allowed failed: nothing runs.
pub(super) fn abandon_start() {
    let mut launches = launches();
    launches.starting = launches.starting.saturating_sub(1);
    STARTED.notify_all();
}

/// Notes a started launch whose leader `pid` leads its own process group (after
/// [`begin_start`]).
pub(super) fn register(pid: i32) {
    let mut launches = launches();
    launches.live.insert(pid);
    launches.starting = launches.starting.saturating_sub(1);
    STARTED.notify_all();
}

/// Forgets a launch (its leader is about to be reaped, or was killed).
pub(super) fn unregister(pid: i32) {
    launches().live.remove(&pid);
}

/// Kills every live launch (module docs) and keeps any other from starting: launches being
/// started are waited for (at most a second) and killed too. Returns how many were killed.
pub fn kill_all() -> usize {
    let mut launches = launches();
    launches.stopping = true;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while launches.starting > 0 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        launches = STARTED
            .wait_timeout(launches, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    let live: Vec<i32> = launches.live.iter().copied().collect();
    drop(launches);
    for pgid in &live {
        kill_launch(*pgid);
    }
    live.len()
}
