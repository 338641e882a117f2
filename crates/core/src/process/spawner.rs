//! One thread of this process that starts bubblewraps for the direct launches, so the
//! calling thread can work out the mount plan while bubblewrap loads (issue 13).
//!
//! Why a thread of its own: `posix_spawn` is a `vfork`, which holds the calling thread
//! until the child has `exec`'d, and the scheduler then tends to keep the new process on
//! the caller's CPU, queued behind the caller's own work: measured on a 2-CPU machine, a
//! bubblewrap spawned by the thread that then planned waited the plan's ~0.5 ms for its
//! CPU while the other CPU idled. Woken on an idle CPU, this thread spawns there and goes
//! back to sleep, and bubblewrap loads on that CPU.
//!
//! Why one thread for the life of the process: bubblewrap's `--die-with-parent`
//! (`PR_SET_PDEATHSIG`) fires when the *thread* that created it ends, so a pool thread
//! retired while its bubblewrap runs would kill the launch. This thread never returns.
//! Should it be gone (it panicked), [`Spawner::submit`] spawns on the caller's thread.

use std::ffi::OsString;
use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock, PoisonError};

use super::child::StdinMode;
use super::direct_spawn::{self, Spawned};

/// What to start (the arguments of [`direct_spawn::spawn`], owned).
pub(super) struct Job {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Descriptor numbers the caller keeps open until [`Pending::wait`] has returned.
    pub keep: Vec<RawFd>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    pub stdin: StdinMode,
    pub own_group: bool,
}

impl Job {
    fn run(&self) -> io::Result<Spawned> {
        direct_spawn::spawn(
            &self.program,
            &self.args,
            &self.keep,
            &self.cwd,
            self.env.iter().map(|(name, value)| (name, value)),
            self.stdin,
            self.own_group,
        )
    }
}

/// A spawn in progress.
pub(super) enum Pending {
    /// On the spawner thread.
    Queued(mpsc::Receiver<io::Result<Spawned>>),
    /// Done on the caller's thread (no spawner).
    Done(io::Result<Spawned>),
}

impl Pending {
    /// Waits for the spawn (a fraction of a millisecond: the `vfork` until `exec`).
    ///
    /// # Errors
    /// The spawn's error, or `Other` when the spawner thread died with the job (then no
    /// process was started: the thread dies only by panicking before `posix_spawn`).
    pub(super) fn wait(self) -> io::Result<Spawned> {
        match self {
            Self::Queued(reply) => reply
                .recv()
                .unwrap_or_else(|_| Err(io::Error::other("the bubblewrap spawner thread is gone"))),
            Self::Done(result) => result,
        }
    }
}

type Request = (Job, mpsc::Sender<io::Result<Spawned>>);

/// The spawner thread's queue.
pub(super) struct Spawner {
    queue: Mutex<Option<mpsc::Sender<Request>>>,
}

impl Spawner {
    /// The process's spawner, its thread started on first use.
    pub(super) fn get() -> &'static Self {
        static SPAWNER: OnceLock<Spawner> = OnceLock::new();
        SPAWNER.get_or_init(|| {
            let (queue, jobs) = mpsc::channel::<Request>();
            let started = std::thread::Builder::new()
                .name("airlock-bwrap-spawner".to_owned())
                .spawn(move || {
                    for (job, reply) in jobs {
                        let _ = reply.send(job.run());
                    }
                    // The queue's sender lives in a static: never reached while the
                    // process runs, and the thread must not end before its children.
                    loop {
                        std::thread::park();
                    }
                })
                .is_ok();
            Self {
                queue: Mutex::new(started.then_some(queue)),
            }
        })
    }

    /// Starts `job` on the spawner thread, or here when there is none.
    pub(super) fn submit(&self, job: Job) -> Pending {
        let queue = self
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(queue) = queue else {
            return Pending::Done(job.run());
        };
        let (reply, replied) = mpsc::channel();
        match queue.send((job, reply)) {
            Ok(()) => Pending::Queued(replied),
            Err(mpsc::SendError((job, _))) => {
                *self.queue.lock().unwrap_or_else(PoisonError::into_inner) = None;
                Pending::Done(job.run())
            }
        }
    }
}
