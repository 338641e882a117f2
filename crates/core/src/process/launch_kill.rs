//! Killing a launch whole, at any moment of its set-up (red-team of issue 13: a launch
//! killed while bubblewrap was still setting up left its sandbox running).
//!
//! A launch started in its own process group (every [`super::OutputMode::Capture`]
//! launch) holds the helper, if any, and the outer bubblewrap. The sandbox's own first
//! process — bubblewrap's child, pid 1 of the sandbox's pid namespace — leaves that group
//! (`--new-session` calls `setsid` there) and arms its parent-death signal only at the end
//! of its set-up: killing the group alone in that window orphans it, and it runs its
//! command to the end. So a launch is killed in three steps:
//! 1. the group is stopped (`SIGSTOP`): no member forks or reaps any more, so the process
//!    ids of the members' children stay theirs;
//! 2. every child of a member that is outside the group (the sandbox's first process) is
//!    killed: as pid 1 of its namespace, its death kills everything inside;
//! 3. the group is killed.
//!
//! [`kill_all`] does this for every live launch of this process (a server ending on
//! `SIGTERM`, `SIGINT` or `SIGHUP`). Nothing can run once this process is killed with
//! `SIGKILL`: then bubblewrap's `--die-with-parent` applies, which leaves a sandbox whose
//! first process had not armed it yet running until its command ends.

// kill(2) on process ids this process owns; every unsafe block says why it is sound.
#![allow(unsafe_code)]

use std::collections::BTreeSet;
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

/// Kills the launch whose group `pgid` leads (module docs). The leader must not have been
/// reaped (its id would no longer be ours).
pub(super) fn kill_launch(pgid: i32) {
    signal_group(pgid, libc::SIGSTOP);
    for pid in children_outside_group(pgid) {
        // SAFETY: kill(2) touches no memory; `pid` is the child of a stopped member, so
        // it cannot have been reaped and reused.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    signal_group(pgid, libc::SIGKILL);
}

fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) touches no memory.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// The children, outside group `pgid`, of the group's members reachable from its leader
/// through members (`/proc/PID/task/TID/children`).
fn children_outside_group(pgid: i32) -> Vec<i32> {
    let mut members = vec![pgid];
    let mut outside = Vec::new();
    let mut seen = BTreeSet::new();
    while let Some(member) = members.pop() {
        if !seen.insert(member) || seen.len() > 4096 {
            continue;
        }
        for child in children_of(member) {
            if group_of(child) == Some(pgid) {
                members.push(child);
            } else {
                outside.push(child);
            }
        }
    }
    outside
}

/// The children of process `pid`, from `/proc/PID/task/*/children` (every thread's).
pub(super) fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// The process group of `pid` (field 5 of `/proc/PID/stat`, after the command name).
fn group_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(2)?.parse().ok()
}
