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
//! Fail closed:
//! - the whole argument list reaches the pipe in **one** `write(2)` into a pipe large
//!   enough to hold it, from a buffer locked in memory. With room for every byte and no
//!   page to fetch, the kernel copies all of them without waiting, and no signal (not even
//!   `SIGKILL`) can stop the copy half-way. A short write (the kernel out of memory for
//!   the pipe's pages) is seen and bubblewrap killed before the pipe is closed. bubblewrap
//!   therefore reads either every argument or none;
//! - none: this process died before writing (the pipe's only writer is ours,
//!   close-on-exec). bubblewrap then has no mount at all: it pivots into an empty tmpfs
//!   where the command does not exist, and fails (`execvp …: No such file or
//!   directory`) without running anything (tested);
//! - whenever the launch does not go ahead (the plan fails, it needs descriptors that
//!   were not handed over, the list does not fit), bubblewrap is killed and reaped
//!   **before** the writer is closed ([`EarlyBwrap`]'s `Drop`), so it never parses
//!   anything.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::process::{Child, Command};

/// The most the pipe may be grown to hold the argument list (the unprivileged default of
/// `/proc/sys/fs/pipe-max-size`); a longer list is launched the ordinary way.
const MAX_STREAM: usize = 1 << 20;

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
    /// The pipe's write end, close-on-exec; `None` once the list was written.
    writer: Option<File>,
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
        let (reader, writer) = io::pipe()?;
        let reader: OwnedFd = reader.into();
        crate::fds::make_inheritable(&reader)?;
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
            writer: Some(File::from(OwnedFd::from(writer))),
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
        let Some(options) = options_before_command(argv, command) else {
            return Err(Box::new(self));
        };
        let Some(stream) = nul_separated(options) else {
            return Err(Box::new(self));
        };
        let Some(mut writer) = self.writer.take() else {
            return Err(Box::new(self));
        };
        let locked = Resident::lock(&stream);
        if !fits(&writer, stream.len()) || locked.is_none() {
            self.writer = Some(writer);
            return Err(Box::new(self));
        }
        // One write(2): with room for every byte and the bytes resident it cannot stop
        // half-way (module docs).
        match writer.write(&stream) {
            Ok(written) if written == stream.len() => {}
            _ => {
                // bubblewrap is killed (Drop) before `writer` is closed below.
                self.writer = Some(writer);
                return Err(Box::new(self));
            }
        }
        drop(writer);
        drop(locked);
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

/// A buffer held in memory (`mlock(2)`) while it is written: the copy into the pipe then
/// cannot wait for a page to be read back from swap, which is the one point where a
/// fatal signal could end the write half-way.
struct Resident<'a>(&'a [u8]);

impl<'a> Resident<'a> {
    #[allow(unsafe_code)]
    fn lock(bytes: &'a [u8]) -> Option<Self> {
        // SAFETY: mlock only pins the pages of this borrowed, live buffer.
        (unsafe { libc::mlock(bytes.as_ptr().cast(), bytes.len()) } == 0).then_some(Self(bytes))
    }
}

impl Drop for Resident<'_> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: unpins the pages locked in `lock`; the buffer is still borrowed.
        unsafe {
            libc::munlock(self.0.as_ptr().cast(), self.0.len());
        }
    }
}

/// `argv` without the trailing `--` and `command`, or `None` when it does not end so.
fn options_before_command<'a>(
    argv: &'a [OsString],
    command: &[OsString],
) -> Option<&'a [OsString]> {
    let split = argv.len().checked_sub(command.len() + 1)?;
    let (options, tail) = argv.split_at(split);
    (tail.first().is_some_and(|dashes| dashes == "--") && tail.get(1..)? == command)
        .then_some(options)
}

/// bubblewrap's `--args` format: every argument followed by a NUL byte; `None` when one
/// holds a NUL itself.
fn nul_separated(options: &[OsString]) -> Option<Vec<u8>> {
    let mut stream = Vec::with_capacity(options.iter().map(|a| a.len() + 1).sum());
    for arg in options {
        let bytes = arg.as_bytes();
        if bytes.contains(&0) {
            return None;
        }
        stream.extend_from_slice(bytes);
        stream.push(0);
    }
    Some(stream)
}

/// Whether the (empty) pipe behind `writer` holds `len` bytes, growing it when needed.
#[allow(unsafe_code)]
fn fits(writer: &File, len: usize) -> bool {
    if len > MAX_STREAM {
        return false;
    }
    // SAFETY: F_GETPIPE_SZ/F_SETPIPE_SZ read or resize the pipe buffer of a descriptor we
    // own (borrowed for the call); no memory of ours is passed.
    let size = unsafe { libc::fcntl(writer.as_raw_fd(), libc::F_GETPIPE_SZ) };
    if usize::try_from(size).is_ok_and(|size| size >= len) {
        return true;
    }
    let Ok(wanted) = libc::c_int::try_from(len) else {
        return false;
    };
    // SAFETY: as above.
    let size = unsafe { libc::fcntl(writer.as_raw_fd(), libc::F_SETPIPE_SZ, wanted) };
    usize::try_from(size).is_ok_and(|size| size >= len)
}

#[cfg(test)]
#[path = "early_bwrap_tests.rs"]
mod tests;
