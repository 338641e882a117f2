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

/// The write end of [`catch_stopping`]'s wake-up pipe (-1: none yet).
static WAKE: AtomicI32 = AtomicI32::new(-1);
/// Its read end.
static WOKEN: AtomicI32 = AtomicI32::new(-1);

extern "C" fn record(signal: libc::c_int) {
    FORWARDED_SIGNAL.store(signal, Ordering::Relaxed);
    let fd = WAKE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; one byte from a static buffer.
        #[allow(unsafe_code)]
        unsafe {
            libc::write(fd, b"!".as_ptr().cast(), 1);
        }
    }
}

/// For a launcher that waits for its own bubblewrap (`airlock sandbox`): catches SIGINT,
/// SIGTERM, SIGHUP and SIGQUIT from now on without forwarding them; each one wakes
/// [`wait_stopping`], which kills the launch whole ([`crate::process_kill`]). Forwarding
/// the signal to bubblewrap killed only its outer process while the sandbox's first
/// process was still being set up (it arms its own death signal late): the launcher
/// reported the run stopped and the command ran on (red-team finding of 2026-12-06).
/// bubblewrap must then run in a process group of its own, so that a terminal's signals
/// reach this process only.
///
/// # Errors
/// The OS error of `pipe2`; nothing is caught then.
#[allow(unsafe_code)]
pub fn catch_stopping() -> std::io::Result<()> {
    if WAKE.load(Ordering::Relaxed) < 0 {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // Both ends live as long as this process (a one-shot launcher).
        WOKEN.store(fds[0], Ordering::Relaxed);
        WAKE.store(fds[1], Ordering::Relaxed);
    }
    for signal in FORWARDED {
        // SAFETY: as in `catch`; no SA_RESTART is needed, every wait here handles EINTR.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = record as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    Ok(())
}

/// Waits for `child` (bubblewrap, leader of its own process group) and reaps it; a signal
/// caught by [`catch_stopping`] before or meanwhile kills the launch whole first. Race
/// free: a signal's byte stays in the wake-up pipe until the loop has seen it.
///
/// # Errors
/// The OS error of `waitpid` or `poll`.
#[allow(unsafe_code)]
pub fn wait_stopping(child: &std::process::Child) -> std::io::Result<std::process::ExitStatus> {
    use std::os::unix::process::ExitStatusExt as _;
    let pid = i32::try_from(child.id()).unwrap_or(0);
    // SAFETY: pidfd_open returns a new descriptor (or -1) for our own unreaped child.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let pidfd = i32::try_from(pidfd).unwrap_or(-1);
    let woken = WOKEN.load(Ordering::Relaxed);
    let mut killed = false;
    let result = loop {
        if !killed && forwarded().is_some() {
            crate::process_kill::kill_launch(pid);
            killed = true;
        }
        if pidfd >= 0 && woken >= 0 && !killed {
            let mut fds = [
                libc::pollfd {
                    fd: pidfd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: woken,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll reads and writes the two pollfd entries of this array.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break Err(error);
            }
            if fds[0].revents == 0 {
                let mut drained = [0_u8; 16];
                // SAFETY: reads at most 16 bytes into the local buffer (non-blocking).
                unsafe { libc::read(woken, drained.as_mut_ptr().cast(), drained.len()) };
                continue;
            }
        }
        let mut status = 0;
        // SAFETY: waitpid writes the status of our own child into `status`.
        match unsafe { libc::waitpid(pid, &raw mut status, 0) } {
            reaped if reaped == pid => break Ok(std::process::ExitStatus::from_raw(status)),
            _ => {
                let error = std::io::Error::last_os_error();
                if error.kind() != std::io::ErrorKind::Interrupted {
                    break Err(error);
                }
            }
        }
    };
    if pidfd >= 0 {
        // SAFETY: closes the pidfd opened above, used by nothing else.
        unsafe { libc::close(pidfd) };
    }
    result
}
