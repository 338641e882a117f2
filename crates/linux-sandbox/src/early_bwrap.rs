//! Starting bubblewrap while the mount plan is still being worked out (issue 11, launch
//! speed): `airlock sandbox` spends about half a millisecond on the plan, and bubblewrap
//! as long on being loaded (`exec`, the dynamic loader, libc's start-up). On a machine with
//! two or more CPUs the two can overlap.
//!
//! bubblewrap is started as `bwrap --args FD -- COMMAND…`. It blocks in its argument
//! parser reading the pipe at `FD` until end of file, and only then does anything to the
//! system. Everything that confines the command (namespaces, mounts, seccomp programs,
//! `--die-with-parent`, `--cap-drop`, `--chdir`) travels through that pipe. The command
//! and its environment do not: they are fixed at `exec` and known before the plan.
//!
//! Fail closed: the options go through an [`ArgsPipe`] (one `write(2)`, every option or
//! none; see [`crate::args_pipe`]), and whenever the launch does not go ahead (the plan
//! fails, it needs descriptors that were not handed over, the list does not fit),
//! bubblewrap is killed and reaped **before** the writer is closed ([`EarlyBwrap`]'s
//! `Drop`), so it never parses anything.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Child, Command};

use crate::args_pipe::ArgsPipe;

/// A bubblewrap started before its argument list is known (module docs).
#[derive(Debug)]
pub struct EarlyBwrap {
    /// Where the starting thread hands over the spawned bubblewrap, until
    /// [`EarlyBwrap::started`] has taken it.
    starting: Option<std::sync::mpsc::Receiver<io::Result<Child>>>,
    /// Keeps the starting thread alive (module docs of [`Keeper`]).
    keeper: Option<Keeper>,
    /// `None` before it was taken, when the spawn failed, and once handed over by
    /// [`EarlyBwrap::send`].
    child: Option<Child>,
    /// Where the options go (its reader was handed to bubblewrap).
    pipe: ArgsPipe,
    /// The seccomp programs, one filled pipe each, inheritable at these numbers.
    seccomp: Vec<OwnedFd>,
}

impl EarlyBwrap {
    /// Starts `bwrap` for `command`, from a thread of its own, with the seccomp programs
    /// `programs`. `launch` is a `Command` for `bwrap` with the command's environment set
    /// and nothing else. `keep` names further descriptors bubblewrap must inherit (the
    /// status pipe). Every other descriptor of this process is marked close-on-exec; those
    /// opened later are close-on-exec anyway (std), and a program this process starts
    /// meanwhile must not inherit the ones above (the index daemon closes them).
    ///
    /// # Errors
    /// The OS error of `pipe`, `fcntl` or the thread's creation; nothing is left running.
    /// A failed spawn shows as [`EarlyBwrap::started`] returning `None`.
    pub fn start(
        mut launch: Command,
        programs: &[Vec<u8>],
        keep: &[i32],
        command: &[OsString],
    ) -> io::Result<Self> {
        let seccomp = programs
            .iter()
            .map(|bytes| crate::fds::data_fd(bytes))
            .collect::<io::Result<Vec<_>>>()?;
        let mut pipe = ArgsPipe::open()?;
        let reader = pipe
            .take_reader()
            .ok_or_else(|| io::Error::other("the pipe has no reader"))?;
        let inherited: Vec<i32> = seccomp
            .iter()
            .map(AsRawFd::as_raw_fd)
            .chain([reader.as_raw_fd()])
            .chain(keep.iter().copied())
            .collect();
        crate::fds::close_inherited_on_exec(&inherited)?;
        launch
            .arg("--args")
            .arg(reader.as_raw_fd().to_string())
            .arg("--")
            .args(command);
        // Started from a thread of its own: std's `posix_spawn` (a `vfork`) holds its
        // caller until bubblewrap has exec'd, and bubblewrap then loads on that CPU; the
        // plan is worked out meanwhile on this thread. The thread stays until released
        // ([`Keeper`]).
        let (handed, starting) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("bwrap-start".into())
            .spawn(move || {
                let _ = handed.send(launch.spawn());
                drop(reader);
                // Until the launcher drops its end: bubblewrap has been reaped by then.
                let _ = released.recv();
            })?;
        Ok(Self {
            starting: Some(starting),
            keeper: Some(Keeper { _release: release }),
            child: None,
            pipe,
            seccomp,
        })
    }

    /// Waits until bubblewrap has been started and returns its process id; `None` when it
    /// could not be started (the launch then goes the ordinary way, [`EarlyBwrap::abandon`]).
    pub fn started(&mut self) -> Option<u32> {
        if let Some(starting) = self.starting.take() {
            self.child = starting.recv().ok().and_then(Result::ok);
        }
        self.child.as_ref().map(Child::id)
    }

    /// The descriptor numbers of the seccomp programs, in order, for `--add-seccomp-fd`.
    #[must_use]
    pub fn seccomp_fds(&self) -> Vec<i32> {
        self.seccomp.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// Hands bubblewrap its arguments: `argv` is the full argument list that would follow
    /// the program name (options, `--`, then exactly `command`). Returns the running
    /// bubblewrap.
    ///
    /// # Errors
    /// Gives `self` back, untouched and still waiting, when `argv` cannot travel through
    /// the pipe: it does not end in `--` and `command`, an argument holds a NUL byte, or the
    /// list is larger than the pipe can be made. Dropping it kills bubblewrap.
    pub fn send(
        mut self,
        argv: &[OsString],
        command: &[OsString],
    ) -> Result<(Child, Keeper), Box<Self>> {
        if self.started().is_none() {
            return Err(Box::new(self));
        }
        if self.pipe.send(argv, command).is_err() {
            // bubblewrap is killed (Drop) before the pipe is closed.
            return Err(Box::new(self));
        }
        self.seccomp.clear();
        match (self.child.take(), self.keeper.take()) {
            (Some(child), Some(keeper)) => Ok((child, keeper)),
            (child, keeper) => {
                self.child = child;
                self.keeper = keeper;
                Err(Box::new(self))
            }
        }
    }

    /// Kills the waiting bubblewrap (before its pipe is closed) and gives back the
    /// seccomp descriptors, still inheritable and unread, for an ordinary launch with the
    /// same numbers.
    #[must_use]
    pub fn abandon(mut self) -> Vec<OwnedFd> {
        self.kill();
        std::mem::take(&mut self.seccomp)
    }

    fn kill(&mut self) {
        self.started();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Reaped: the starting thread may go.
        self.keeper = None;
    }
}

impl Drop for EarlyBwrap {
    fn drop(&mut self) {
        // Before the fields (the writer among them) are dropped.
        self.kill();
    }
}

/// Keeps the thread that started bubblewrap alive while it lives: bubblewrap's
/// `--die-with-parent` is `PR_SET_PDEATHSIG`, whose "parent" is the *thread* that created
/// the process. Were that thread to end first, bubblewrap would be killed (`SIGKILL`) as
/// soon as it armed the signal. Drop it once bubblewrap has been reaped.
#[derive(Debug)]
pub struct Keeper {
    _release: std::sync::mpsc::Sender<()>,
}
