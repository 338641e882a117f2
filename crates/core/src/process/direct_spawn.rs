//! Starting bubblewrap from the multi-threaded server without copying it (issue 13: a
//! `fork` of `airlock serve` and the `exec` that tears the copy down again cost about a
//! fifth of the server's time per launch).
//!
//! `posix_spawn` (a `vfork`-style clone in glibc: no copy of the address space, the parent
//! waits only until the `exec`) cannot run our own code in the child, so what the fork
//! path did there is done differently:
//! - *Exactly these descriptors* (the `pre_exec` `close_range` of
//!   [`airlock_sandbox::keep_only_in_child`]): the child's descriptors are set by file
//!   actions alone. Every descriptor bubblewrap needs is renumbered to 3, 4, … in order
//!   (its command line is rewritten to match, [`renumber_descriptor_args`]), stdin, stdout
//!   and stderr are set, and everything from the first number after them up is closed
//!   (`posix_spawn_file_actions_addclosefrom_np`). Whatever another thread opens meanwhile,
//!   and whatever this process inherited, never reaches the child.
//! - *Death with the server* (the `pre_exec` `PR_SET_PDEATHSIG`): bubblewrap's own
//!   `--die-with-parent`, which every direct launch passes (checked here: without it the
//!   launch is refused). A server that ends on a signal it can handle, a dropped call and
//!   an interrupted turn kill the launch whole, mid set-up included
//!   ([`super::launch_kill`]). Only a server killed outright (`SIGKILL`) relies on
//!   `--die-with-parent` alone, and bubblewrap arms it late — in its outer process after
//!   parsing its arguments, in the sandbox's first process at the end of the set-up — so a
//!   sandbox being set up at that moment may run its command to the end, still confined.
//!   The `fork` path had the second half of that window too.
//!
//! Signal dispositions the server ignores (Rust ignores `SIGPIPE`) are reset to the default
//! and the signal mask is emptied, as std's spawn does.

// This module is the FFI to posix_spawn(3), waitpid(2) and kill(2); every unsafe block
// says why it is sound.
#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::child::StdinMode as Stdin;

/// bubblewrap options whose value is a descriptor number (the data descriptors of
/// `--ro-bind-data FD DEST`, seccomp programs, the status pipe's writer).
const DESCRIPTOR_OPTIONS: [&str; 3] = ["--ro-bind-data", "--add-seccomp-fd", "--json-status-fd"];

/// A started bubblewrap: its id, a pidfd to wait on, and this process's ends of its pipes.
#[derive(Debug)]
pub(crate) struct Spawned {
    /// The process id (the leader of its own process group when asked for).
    pub pid: i32,
    /// Readable once the process has exited (`pidfd_open(2)`).
    pub pidfd: OwnedFd,
    /// The writer of the child's stdin, with [`Stdin::Piped`].
    pub stdin: Option<OwnedFd>,
    /// The reader of the child's stdout.
    pub stdout: OwnedFd,
    /// The reader of the child's stderr.
    pub stderr: OwnedFd,
}

/// `args` with the number of every descriptor named by a [`DESCRIPTOR_OPTIONS`] option
/// (before the `--` that starts the command) replaced by its new number: `keep[i]` becomes
/// `3 + i`.
///
/// # Errors
/// `InvalidInput` when such an option names a descriptor that is not in `keep` (it would
/// be closed in the child: the launch must not go on), or when `--die-with-parent` is
/// missing (see the module docs).
pub(crate) fn renumber_descriptor_args(
    args: &[OsString],
    keep: &[RawFd],
) -> io::Result<Vec<OsString>> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    let options_end = args
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(args.len());
    if !args[..options_end]
        .iter()
        .any(|arg| arg == "--die-with-parent")
    {
        return Err(invalid(
            "a direct bubblewrap launch must pass --die-with-parent".to_owned(),
        ));
    }
    let mut out = args.to_vec();
    let mut index = 0;
    while index < options_end {
        let names_descriptor = DESCRIPTOR_OPTIONS
            .iter()
            .any(|option| args[index] == *option);
        if names_descriptor {
            let value = out
                .get_mut(index + 1)
                .filter(|_| index + 1 < options_end)
                .ok_or_else(|| invalid(format!("{:?} has no value", args[index])))?;
            let position = value
                .to_str()
                .and_then(|text| text.parse::<RawFd>().ok())
                .and_then(|fd| keep.iter().position(|kept| *kept == fd))
                .ok_or_else(|| {
                    invalid(format!(
                        "{:?} names descriptor {value:?}, which the launch does not hand over",
                        args[index]
                    ))
                })?;
            *value = (3 + position).to_string().into();
            index += 2;
        } else {
            index += 1;
        }
    }
    Ok(out)
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument, variable or path contains a NUL byte",
        )
    })
}

/// Turns a nonzero `posix_spawn*` return value into an error.
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// A copy of `fd` numbered `floor` or higher (close-on-exec), so that no file action
/// that sets a low number can overwrite a descriptor another action still reads.
fn dup_at_least(fd: RawFd, floor: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor and touches no memory.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, floor) };
    if copy == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` was just created and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// File actions and attributes, destroyed when dropped.
struct Actions {
    actions: libc::posix_spawn_file_actions_t,
    attributes: libc::posix_spawnattr_t,
}

impl Drop for Actions {
    fn drop(&mut self) {
        // SAFETY: both were initialized in `spawn` before this value was built.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&raw mut self.actions);
            libc::posix_spawnattr_destroy(&raw mut self.attributes);
        }
    }
}

/// Starts `program` with `args` (already renumbered, see [`renumber_descriptor_args`]),
/// handing it `keep` as descriptors 3, 4, … and nothing else besides stdin, stdout and
/// stderr; in `cwd`, with exactly `env`; in a new process group when `own_group`.
///
/// # Errors
/// The OS error of creating the pipes, of `posix_spawn` (the program could not be
/// executed) or of `pidfd_open`; nothing is left running then.
pub(crate) fn spawn(
    program: &Path,
    args: &[OsString],
    keep: &[RawFd],
    cwd: &Path,
    env: impl Iterator<Item = (impl AsRef<OsStr>, impl AsRef<OsStr>)>,
    stdin: Stdin,
    own_group: bool,
) -> io::Result<Spawned> {
    let program_c = cstring(program.as_os_str().as_bytes())?;
    let mut argv_c = vec![program_c.clone()];
    for arg in args {
        argv_c.push(cstring(arg.as_bytes())?);
    }
    let envp_c = env
        .map(|(name, value)| {
            let mut entry = name.as_ref().as_bytes().to_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_ref().as_bytes());
            cstring(&entry)
        })
        .collect::<io::Result<Vec<CString>>>()?;
    let cwd_c = cstring(cwd.as_os_str().as_bytes())?;
    let mut argv: Vec<*mut libc::c_char> = argv_c.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let mut envp: Vec<*mut libc::c_char> = envp_c.iter().map(|e| e.as_ptr().cast_mut()).collect();
    envp.push(std::ptr::null_mut());

    let (stdout_reader, stdout_writer) = io::pipe()?;
    let (stderr_reader, stderr_writer) = io::pipe()?;
    let (stdin_child, stdin_parent): (Option<OwnedFd>, Option<OwnedFd>) = match stdin {
        Stdin::Null => (Some(std::fs::File::open("/dev/null")?.into()), None),
        Stdin::Piped => {
            let (reader, writer) = io::pipe()?;
            (Some(reader.into()), Some(writer.into()))
        }
        Stdin::Inherit => (None, None),
    };
    // Sources copied above every target number: 0, 1, 2, then 3 .. 3 + keep.len().
    let first_closed = RawFd::try_from(3 + keep.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too many descriptors"))?;
    let mut sources: Vec<(OwnedFd, RawFd)> = Vec::with_capacity(keep.len() + 3);
    if let Some(fd) = &stdin_child {
        sources.push((dup_at_least(fd.as_raw_fd(), first_closed)?, 0));
    } else {
        sources.push((dup_at_least(0, first_closed)?, 0));
    }
    sources.push((dup_at_least(stdout_writer.as_raw_fd(), first_closed)?, 1));
    sources.push((dup_at_least(stderr_writer.as_raw_fd(), first_closed)?, 2));
    for (index, fd) in keep.iter().enumerate() {
        let target = RawFd::try_from(3 + index).unwrap_or(RawFd::MAX);
        sources.push((dup_at_least(*fd, first_closed)?, target));
    }

    // SAFETY: zeroed storage is what the init functions expect to overwrite.
    let mut actions = Actions {
        actions: unsafe { std::mem::zeroed() },
        attributes: unsafe { std::mem::zeroed() },
    };
    // SAFETY (this block): every pointer passed points into `actions`, `sources`, the
    // C strings above or the signal sets below, all alive until `posix_spawn` returns;
    // the init calls come before any other use (and before `actions` can be dropped,
    // which destroys them: on failure of the first init nothing was allocated).
    unsafe {
        check(libc::posix_spawn_file_actions_init(
            &raw mut actions.actions,
        ))?;
        check(libc::posix_spawnattr_init(&raw mut actions.attributes))?;
        for (source, target) in &sources {
            check(libc::posix_spawn_file_actions_adddup2(
                &raw mut actions.actions,
                source.as_raw_fd(),
                *target,
            ))?;
        }
        check(libc::posix_spawn_file_actions_addclosefrom_np(
            &raw mut actions.actions,
            first_closed,
        ))?;
        check(libc::posix_spawn_file_actions_addchdir_np(
            &raw mut actions.actions,
            cwd_c.as_ptr(),
        ))?;
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut empty);
        check(libc::posix_spawnattr_setsigmask(
            &raw mut actions.attributes,
            &raw const empty,
        ))?;
        let mut defaults: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut defaults);
        libc::sigaddset(&raw mut defaults, libc::SIGPIPE);
        check(libc::posix_spawnattr_setsigdefault(
            &raw mut actions.attributes,
            &raw const defaults,
        ))?;
        let mut flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
        if own_group {
            flags |= libc::POSIX_SPAWN_SETPGROUP;
            check(libc::posix_spawnattr_setpgroup(
                &raw mut actions.attributes,
                0,
            ))?;
        }
        check(libc::posix_spawnattr_setflags(
            &raw mut actions.attributes,
            libc::c_short::try_from(flags).unwrap_or(0),
        ))?;
        let mut pid: libc::pid_t = 0;
        check(libc::posix_spawn(
            &raw mut pid,
            program_c.as_ptr(),
            &raw const actions.actions,
            &raw const actions.attributes,
            argv.as_ptr(),
            envp.as_ptr(),
        ))?;
        drop(actions);
        drop(sources);
        let pidfd = match rustix::process::Pid::from_raw(pid)
            .ok_or_else(|| io::Error::other("posix_spawn returned no process id"))
            .and_then(|id| {
                rustix::process::pidfd_open(id, rustix::process::PidfdFlags::empty())
                    .map_err(io::Error::from)
            }) {
            Ok(fd) => fd,
            Err(error) => {
                // Not reaped yet, so the id is still this child's.
                libc::kill(pid, libc::SIGKILL);
                let mut status = 0;
                libc::waitpid(pid, &raw mut status, 0);
                return Err(error);
            }
        };
        Ok(Spawned {
            pid,
            pidfd,
            stdin: stdin_parent,
            stdout: stdout_reader.into(),
            stderr: stderr_reader.into(),
        })
    }
}

/// A child started by [`spawn`], waited for through its pidfd. Dropped before it was
/// reaped, it is killed and reaped by a short-lived thread (as tokio's `kill_on_drop`
/// does with its own reaper).
#[derive(Debug)]
pub(crate) struct DirectChild {
    pid: i32,
    pidfd: tokio::io::unix::AsyncFd<OwnedFd>,
    reaped: bool,
}

impl DirectChild {
    /// Registers `pidfd` with the runtime.
    ///
    /// # Errors
    /// The runtime cannot watch it (no runtime with I/O enabled).
    pub(crate) fn new(pid: i32, pidfd: OwnedFd) -> io::Result<Self> {
        let registered = if tokio::runtime::Handle::try_current().is_ok() {
            // SAFETY: the `OwnedFd` is moved into the `AsyncFd` and stays open, under the
            // same number, until the `AsyncFd` is dropped.
            unsafe {
                tokio::io::unix::AsyncFd::register_with_interest(
                    pidfd,
                    tokio::io::Interest::READABLE,
                )
            }
            .map_err(io::Error::from)
        } else {
            Err(io::Error::other("no tokio runtime to wait for the launch"))
        };
        match registered {
            Ok(pidfd) => Ok(Self {
                pid,
                pidfd,
                reaped: false,
            }),
            Err(error) => {
                // SAFETY: kill(2) and waitpid(2) on our own unreaped child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    let mut status = 0;
                    libc::waitpid(pid, &raw mut status, 0);
                }
                Err(error)
            }
        }
    }

    /// The process id.
    pub(crate) fn id(&self) -> u32 {
        u32::try_from(self.pid).unwrap_or(0)
    }

    /// Waits for the child to exit and reaps it.
    ///
    /// # Errors
    /// The OS error of `waitpid`.
    pub(crate) async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            let mut ready = self.pidfd.readable().await?;
            ready.clear_ready();
        }
    }

    fn try_wait(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        use std::os::unix::process::ExitStatusExt as _;
        if self.reaped {
            return Err(io::Error::other("the child was already reaped"));
        }
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child writes only `status`.
        let rc = unsafe { libc::waitpid(self.pid, &raw mut status, libc::WNOHANG) };
        match rc {
            0 => Ok(None),
            -1 => Err(io::Error::last_os_error()),
            _ => {
                self.reaped = true;
                Ok(Some(std::process::ExitStatus::from_raw(status)))
            }
        }
    }

    /// Sends SIGKILL (nothing once the child was reaped: its id may be reused).
    pub(crate) fn start_kill(&mut self) {
        if !self.reaped {
            // SAFETY: kill(2) on our own unreaped child touches no memory.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for DirectChild {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        self.start_kill();
        let pid = self.pid;
        // Without a thread to spare the child stays a zombie until this process exits;
        // it is never left running.
        let _ = std::thread::Builder::new()
            .name("airlock-reaper".to_owned())
            .spawn(move || {
                let mut status = 0;
                // SAFETY: waitpid(2) on our own child writes only `status`.
                unsafe { libc::waitpid(pid, &raw mut status, 0) };
            });
    }
}

#[cfg(test)]
#[path = "direct_spawn_tests.rs"]
mod tests;
