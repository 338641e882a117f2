//! Starting a server's direct bubblewrap launch (issue 13): bubblewrap first, the mount
//! plan while it loads.
//!
//! bubblewrap is started as `bwrap --args N -- COMMAND…` with `posix_spawn`
//! ([`super::direct_spawn`]) on the spawner thread ([`super::spawner`]): the seccomp
//! programs, the status pipe's writer and the reader of an [`ArgsPipe`] are its
//! descriptors 3, 4, …, N. This thread meanwhile works out the mount plan, then creates
//! the placeholders and sends every option (mounts, namespaces, `--add-seccomp-fd`,
//! `--json-status-fd`, `--die-with-parent`, `--chdir`) through the pipe in one write,
//! while bubblewrap's loader and libc start on another CPU. bubblewrap
//! does nothing to the system before it has read the whole list (see
//! `airlock_linux_sandbox::args_pipe` for why it reads every option or none).
//!
//! When the launch does not go ahead as planned — the plan fails, needs descriptors of its
//! own (`--ro-bind-data` masks, unknown when bubblewrap was started), or its list cannot
//! be sent — the waiting bubblewrap is killed **before** the pipe's writer is closed
//! (the [`DirectChild`] is declared after the [`ArgsPipe`], so it is dropped first), and
//! the planned launch is started the ordinary way with every option on its command line.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use airlock_sandbox::{ArgsPipe, DirectBwrap, DirectLaunch, PlaceholderGuard, SandboxExecRequest};

use super::child::{Child, Reader, Started, StdinMode, Writer};
use super::direct_spawn::{self, DirectChild, Spawned, renumber_descriptor_args};
use super::spawner::{Job, Spawner};

/// A started direct launch and what it holds until bubblewrap has exited.
pub(super) struct DirectStarted {
    /// bubblewrap and this process's ends of its pipes.
    pub started: Started,
    /// The launch's placeholder mount points (release once bubblewrap has exited).
    pub placeholders: Option<PlaceholderGuard>,
    /// The mount plan's warnings, one line each without the `airlock: warning: ` prefix.
    pub warnings: Vec<String>,
}

/// Why a direct launch did not start; nothing is left running.
#[derive(Debug)]
pub(super) enum StartError {
    /// Descriptors, `posix_spawn` or the runtime failed.
    Spawn(io::Error),
    /// What the helper would report as a sandbox set-up failure (the plan, a placeholder).
    Setup(String),
}

impl From<io::Error> for StartError {
    fn from(error: io::Error) -> Self {
        Self::Spawn(error)
    }
}

/// Starts bubblewrap for `direct` (module docs), handing it the status pipe's writer
/// `status_fd` and nothing else this process holds.
///
/// # Errors
/// [`StartError`]; a bubblewrap started early has been killed.
pub(super) fn start(
    direct: &DirectBwrap,
    status_fd: Option<RawFd>,
    launch: &SandboxExecRequest,
    stdin: StdinMode,
    own_group: bool,
) -> Result<DirectStarted, StartError> {
    let seccomp = direct.base().open_seccomp_programs()?;
    let seccomp_fds: Vec<RawFd> = seccomp.iter().map(AsRawFd::as_raw_fd).collect();
    let mut pipe = ArgsPipe::open()?;
    let reader = pipe
        .reader_fd()
        .ok_or_else(|| io::Error::other("the argument pipe has no reader"))?;
    let keep: Vec<RawFd> = seccomp_fds
        .iter()
        .copied()
        .chain(status_fd)
        .chain([reader])
        .collect();
    // The reader's number in bubblewrap: the last of 3, 4, ….
    let early_args: Vec<OsString> = [
        OsString::from("--args"),
        (2 + keep.len()).to_string().into(),
        OsString::from("--"),
    ]
    .into_iter()
    .chain(direct.command().iter().cloned())
    .collect();
    // Started on the spawner thread (see `super::spawner` for why) while this thread
    // works out the plan; the descriptors in `keep` stay open until it has been started.
    let pending = Spawner::get().submit(Job {
        program: direct.program().to_path_buf(),
        args: early_args,
        keep: keep.clone(),
        cwd: launch.cwd.clone(),
        env: launch
            .env
            .iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect(),
        stdin,
        own_group,
    });
    let plan = direct.plan(Some(&seccomp_fds));
    let spawned = pending.wait()?;
    drop(pipe.take_reader());
    // Declared after `pipe`: any early return below kills bubblewrap before the writer
    // is closed (module docs).
    let (child, pipes) = adopt(spawned)?;
    let plan = plan.map_err(|error| StartError::Setup(error.to_string()))?;
    let placeholders = plan
        .acquire_placeholders()
        .map_err(|error| StartError::Setup(error.to_string()))?;
    let sent = plan.launch.fds.is_empty()
        && renumber_descriptor_args(&plan.launch.args, &keep)
            .is_ok_and(|options| pipe.send(&options, direct.command()).is_ok());
    let started = if sent {
        pipes.into_started(child)?
    } else {
        drop(child);
        start_planned(
            direct,
            &plan,
            &seccomp_fds,
            status_fd,
            launch,
            stdin,
            own_group,
        )
        .map_err(|error| too_long(error, &plan))?
    };
    Ok(DirectStarted {
        started,
        placeholders,
        warnings: plan.warnings,
    })
}

/// A plan too long for a command line (`E2BIG`, after it did not fit the argument pipe
/// either) is a set-up failure of this workspace, named as such; other errors stay.
fn too_long(error: io::Error, plan: &DirectLaunch) -> StartError {
    if error.raw_os_error() != Some(libc::E2BIG) {
        return StartError::Spawn(error);
    }
    let bytes: usize = plan.launch.args.iter().map(|arg| arg.len() + 1).sum();
    StartError::Setup(format!(
        "the sandbox's mount plan has {} arguments ({bytes} bytes), more than one command \
         line holds: the writable roots hold too many nested repositories or protected \
         paths; remove some, or narrow the profile's writable roots",
        plan.launch.args.len()
    ))
}

/// Starts the planned launch with every option on bubblewrap's command line: the seccomp
/// programs, the plan's own descriptors and the status writer become 3, 4, ….
fn start_planned(
    direct: &DirectBwrap,
    plan: &DirectLaunch,
    seccomp_fds: &[RawFd],
    status_fd: Option<RawFd>,
    launch: &SandboxExecRequest,
    stdin: StdinMode,
    own_group: bool,
) -> io::Result<Started> {
    let keep: Vec<RawFd> = seccomp_fds
        .iter()
        .copied()
        .chain(plan.launch.fds.iter().map(AsRawFd::as_raw_fd))
        .chain(status_fd)
        .collect();
    let args = renumber_descriptor_args(&plan.launch.args, &keep)?;
    let spawned = direct_spawn::spawn(
        direct.program(),
        &args,
        &keep,
        &launch.cwd,
        launch.env.iter(),
        stdin,
        own_group,
    )?;
    let (child, pipes) = adopt(spawned)?;
    pipes.into_started(child)
}

/// This process's ends of a spawned bubblewrap's stdin, stdout and stderr.
struct Pipes {
    stdin: Option<OwnedFd>,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// Registers the spawned process with the runtime (killed when dropped unreaped).
fn adopt(spawned: Spawned) -> io::Result<(DirectChild, Pipes)> {
    let child = DirectChild::new(spawned.pid, spawned.pidfd)?;
    Ok((
        child,
        Pipes {
            stdin: spawned.stdin,
            stdout: spawned.stdout,
            stderr: spawned.stderr,
        },
    ))
}

impl Pipes {
    /// The started launch, its pipes registered with the runtime.
    fn into_started(self, child: DirectChild) -> io::Result<Started> {
        let reader = |fd| -> io::Result<Reader> {
            Ok(Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(
                fd,
            )?))
        };
        let stdout = reader(self.stdout)?;
        let stderr = reader(self.stderr)?;
        let stdin = self
            .stdin
            .map(|fd| -> io::Result<Writer> {
                Ok(Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?))
            })
            .transpose()?;
        Ok(Started {
            child: Child::Direct(child),
            stdout: Some(stdout),
            stderr: Some(stderr),
            stdin,
        })
    }
}
