//! Keeping the confined command tied to this process (issue 17: a signalled `airlock exec`
//! must not leave its command running, reparented to init).
//!
//! Two mechanisms:
//! - every launch is spawned with `PR_SET_PDEATHSIG = SIGKILL`, so when this process dies
//!   for any reason (SIGKILL included) the kernel kills the helper; bubblewrap runs with
//!   `--die-with-parent` and the helper relays its own death to it (see the Linux helper's
//!   `signals` module), so the whole sandbox goes. A server's direct launch of bubblewrap
//!   (`super::direct_spawn`) has no helper and no `pre_exec`: bubblewrap's own
//!   `--die-with-parent` ties it to the spawning thread;
//! - while a streamed ([`super::OutputMode::Tee`]) command runs, SIGTERM, SIGINT and SIGHUP
//!   aimed at this process are relayed to the launch, and once it has exited this process
//!   ends by the same signal (a shell sees `128 + N`). An unsandboxed command shares no
//!   namespace that would take its children along, so this process is made their child
//!   subreaper: whatever the command leaves behind is re-parented here and killed too
//!   ([`kill_adopted`]).
//!
//! The death signal is tied to the *thread* that spawned the child: launches are spawned
//! from runtime threads that live as long as the runtime (the current-thread runtime of
//! `airlock exec`, the worker threads of a multi-threaded one), never from short-lived
//! blocking-pool threads.

/// Makes `command`'s process receive SIGKILL when this process's spawning thread ends.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn kill_with_parent(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and only calls the
    // async-signal-safe prctl(2) and getppid(2); it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl: then nobody would kill us.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(std::io::Error::other("the launching process has exited"));
            }
            Ok(())
        });
    }
}

/// No death signal off Linux.
#[cfg(not(target_os = "linux"))]
pub fn kill_with_parent(_command: &mut tokio::process::Command) {}

/// SIGTERM, SIGINT and SIGHUP aimed at this process, while it is listening.
#[cfg(unix)]
pub struct Interrupts {
    streams: Vec<(i32, tokio::signal::unix::Signal)>,
}

#[cfg(unix)]
impl Interrupts {
    /// Starts listening (from then on these signals no longer end this process by
    /// themselves: [`Interrupts::end_like`] does, once the command has gone).
    ///
    /// # Errors
    /// The OS error of installing a handler.
    pub fn listen() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut streams = Vec::with_capacity(3);
        for (number, kind) in [
            (libc::SIGTERM, SignalKind::terminate()),
            (libc::SIGINT, SignalKind::interrupt()),
            (libc::SIGHUP, SignalKind::hangup()),
        ] {
            streams.push((number, signal(kind)?));
        }
        adopt_orphans();
        Ok(Self { streams })
    }

    /// Waits for the next of the signals and returns its number.
    pub async fn next(&mut self) -> i32 {
        let waits = self.streams.iter_mut().map(|(number, stream)| {
            let number = *number;
            Box::pin(async move {
                stream.recv().await;
                number
            })
        });
        futures_select_all(waits).await
    }
}

/// The first of `futures` to finish (a small `select_all` without another dependency).
#[cfg(unix)]
async fn futures_select_all<F>(futures: impl Iterator<Item = F>) -> i32
where
    F: std::future::Future<Output = i32> + Unpin,
{
    let mut futures: Vec<F> = futures.collect();
    std::future::poll_fn(move |cx| {
        for future in &mut futures {
            if let std::task::Poll::Ready(number) = std::pin::Pin::new(future).poll(cx) {
                return std::task::Poll::Ready(number);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// Sends `signal` to process `pid` (the helper relays it into the sandbox).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn relay(pid: u32, signal: i32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) touches no memory of ours.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Makes this process the child subreaper of its descendants (Linux), so orphans of a
/// command are re-parented here rather than to init, where [`kill_adopted`] finds them.
#[allow(unsafe_code)]
fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with integer arguments touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
}

/// Kills every remaining child of this process (orphans of the stopped command,
/// re-parented here) and reaps it; their own children come here in turn, so this repeats
/// until none are left (at most 64 rounds: a command forking faster than that is out of
/// reach of any tree walk, and the death signal of the launch still applies).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn kill_adopted() {
    for _ in 0..64 {
        let children = own_children();
        if children.is_empty() {
            return;
        }
        for pid in children {
            // SAFETY: kill(2) and waitpid(2) on our own child touch only `status`.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                let mut status = 0;
                libc::waitpid(pid, &raw mut status, 0);
            }
        }
    }
}

/// Nothing to adopt off Linux.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn kill_adopted() {}

/// This process's children (see [`super::launch_kill::children_of`]).
#[cfg(target_os = "linux")]
fn own_children() -> Vec<i32> {
    let mut children = super::launch_kill::children_of(std::process::id().cast_signed());
    children.sort_unstable();
    children.dedup();
    children
}

/// Ends this process by `signal` (default action restored first), as the command was
/// ended; exits with `128 + signal` should the signal not end it.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn end_like(signal: i32) -> ! {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: restoring the default disposition and raising a signal touch no memory of
    // ours; tokio's handler is replaced, which is what we want on the way out.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    std::process::exit(128 + signal)
}
