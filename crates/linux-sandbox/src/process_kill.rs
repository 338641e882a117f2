//! Killing a bubblewrap launch whole, at any moment of its set-up (red-team findings of
//! issue 13 and of 2026-12-06: a launch killed while bubblewrap was still setting up left
//! its sandbox running).
//!
//! The launch runs in a process group of its own (the outer bubblewrap, and the helper if
//! any). The sandbox's first process — bubblewrap's child, pid 1 of the sandbox's pid
//! namespace — leaves that group (`--new-session` calls `setsid` there) and arms its
//! parent-death signal only at the end of its set-up: killing the group alone in that
//! window orphans it, and it runs its command to the end. So a launch is killed in three
//! steps:
//! 1. the group is stopped (`SIGSTOP`): no member forks or reaps any more (a fork under
//!    way when the signal arrives is undone), so the process ids of the members' children
//!    stay theirs;
//! 2. every child of a member that is outside the group (the sandbox's first process) is
//!    killed: as pid 1 of its namespace, its death kills everything inside;
//! 3. the group is killed.
//!
//! Used by `airlock serve` (every launch of a call, the server's own end) and by
//! `airlock sandbox` on `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGQUIT`.

// kill(2) on process ids this process owns; every unsafe block says why it is sound.
#![allow(unsafe_code)]

use std::collections::BTreeSet;

/// Kills the launch whose group `pgid` leads (module docs). The leader must not have been
/// reaped (its id would no longer be ours).
///
/// Why not the group alone: see the module docs.
pub fn kill_launch(pgid: i32) {
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
pub fn children_of(pid: i32) -> Vec<i32> {
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
