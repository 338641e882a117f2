//! While the helper waits for a sandboxed command (to remove placeholder directories
//! afterwards), termination signals aimed at the helper are forwarded to the command
//! instead of killing the helper: the command stops, and cleanup still runs. The launcher
//! spawns the helper with a SIGKILL death signal; a waiting helper turns it into SIGTERM
//! ([`relay_parent_death`]), so the launcher's death also stops the command with cleanup.

use std::sync::atomic::{AtomicI32, Ordering};

static CHILD: AtomicI32 = AtomicI32::new(0);
/// The last signal forwarded (0: none).
static FORWARDED_SIGNAL: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn forward(signal: libc::c_int) {
    let pid = CHILD.load(Ordering::Relaxed);
    FORWARDED_SIGNAL.store(signal, Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe and touches no memory of ours.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Catches SIGINT, SIGTERM, SIGHUP and SIGQUIT from now on, to forward them to the child
/// named by [`forward_to`]; call before spawning it, so no signal falls in between (one
/// that arrives before is forwarded by [`forward_to`]).
#[allow(unsafe_code)]
pub fn catch() {
    for signal in FORWARDED {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the
        // handler only calls the async-signal-safe kill(2); SA_RESTART keeps the
        // parent's wait() going.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = forward as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Forwards the caught signals to `pid` from now on, and one caught before right away.
#[allow(unsafe_code)]
pub fn forward_to(pid: u32) {
    let pid = i32::try_from(pid).unwrap_or(0);
    CHILD.store(pid, Ordering::Relaxed);
    if let Some(signal) = forwarded()
        && pid > 0
    {
        // SAFETY: kill(2) touches no memory of ours.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Back to the default action for the caught signals (the spawn failed: nothing to
/// forward to).
#[allow(unsafe_code)]
pub fn release() {
    for signal in FORWARDED {
        // SAFETY: restoring the default disposition touches no memory of ours.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
}

/// The last signal forwarded to the command, if any: the command was stopped on request,
/// so its end is reported as `128 + N`, never as a set-up failure.
pub fn forwarded() -> Option<i32> {
    match FORWARDED_SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        signal => Some(signal),
    }
}

/// Changes this process's death signal (SIGKILL, set by the launcher) to SIGTERM, which
/// [`forward_to`] relays: when the launcher dies the command is stopped and this process
/// still removes what it created. Call after [`forward_to`]. A launcher that died before
/// this call has already killed this process, so there is no window without either.
#[allow(unsafe_code)]
pub fn relay_parent_death() {
    // SAFETY: prctl(2) with an integer argument touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    }
}
