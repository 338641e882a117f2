//! A started launch, whichever way it was started: tokio's `Command` (the helper, an
//! unsandboxed command) or `posix_spawn` of bubblewrap itself (a server's direct launch,
//! see [`super::direct_start`]).

use std::io;
use std::process::Stdio;

use airlock_sandbox::SandboxExecRequest;
use tokio::io::{AsyncRead, AsyncWrite};

use super::signals;

/// This process's end of a child's stdout or stderr.
pub(super) type Reader = Box<dyn AsyncRead + Unpin + Send>;
/// This process's end of a child's stdin.
pub(super) type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// What the child's stdin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StdinMode {
    /// `/dev/null`.
    Null,
    /// A pipe this process writes.
    Piped,
    /// This process's own stdin.
    Inherit,
}

/// A started child and this process's ends of its pipes.
pub(super) struct Started {
    pub child: Child,
    pub stdout: Option<Reader>,
    pub stderr: Option<Reader>,
    pub stdin: Option<Writer>,
}

/// The process, killed when dropped before it was reaped.
pub(super) enum Child {
    Tokio(tokio::process::Child),
    #[cfg(target_os = "linux")]
    Direct(super::direct_spawn::DirectChild),
}

impl Child {
    /// The process id, while not reaped.
    pub(super) fn id(&self) -> Option<u32> {
        match self {
            Self::Tokio(child) => child.id(),
            #[cfg(target_os = "linux")]
            Self::Direct(child) => Some(child.id()),
        }
    }

    /// Waits for the exit and reaps the process.
    pub(super) async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        match self {
            Self::Tokio(child) => child.wait().await,
            #[cfg(target_os = "linux")]
            Self::Direct(child) => child.wait().await,
        }
    }

    /// Sends SIGKILL.
    pub(super) fn start_kill(&mut self) {
        match self {
            Self::Tokio(child) => {
                let _ = child.start_kill();
            }
            #[cfg(target_os = "linux")]
            Self::Direct(child) => child.start_kill(),
        }
    }
}

/// Starts `program` with `args` as `launch` describes (working directory, exactly its
/// environment, `arg0`), tied to this process by the death signal (see [`signals`]).
/// `status_fd` (the helper's status channel, close-on-exec here) is inherited by this
/// child alone. In its own group (a server's or a library's launch) the child inherits
/// nothing else beyond stdin, stdout and stderr: not another launch's descriptors opened
/// meanwhile by another thread.
pub(super) fn start_command(
    program: &str,
    args: &[String],
    launch: &SandboxExecRequest,
    stdin: StdinMode,
    own_group: bool,
    status_fd: Option<i32>,
) -> io::Result<Started> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(&launch.cwd)
        .env_clear()
        .envs(&launch.env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .stdin(match stdin {
            StdinMode::Null => Stdio::null(),
            StdinMode::Piped => Stdio::piped(),
            StdinMode::Inherit => Stdio::inherit(),
        });
    #[cfg(unix)]
    if let Some(arg0) = &launch.arg0 {
        command.arg0(arg0);
    }
    #[cfg(unix)]
    if own_group {
        command.process_group(0);
    }
    signals::kill_with_parent(&mut command);
    #[cfg(target_os = "linux")]
    inherit_in_child(&mut command, own_group, status_fd);
    #[cfg(not(target_os = "linux"))]
    let _ = status_fd;
    let mut child = command.spawn()?;
    let stdout = child.stdout.take().map(|s| Box::new(s) as Reader);
    let stderr = child.stderr.take().map(|s| Box::new(s) as Reader);
    let stdin = child.stdin.take().map(|s| Box::new(s) as Writer);
    Ok(Started {
        child: Child::Tokio(child),
        stdout,
        stderr,
        stdin,
    })
}

/// The descriptor part of [`start_command`]'s rule. A helper started from a terminal
/// (`airlock exec`) inherits nothing else either: it would close the rest before starting
/// bubblewrap anyway.
#[cfg(target_os = "linux")]
fn inherit_in_child(
    command: &mut tokio::process::Command,
    own_group: bool,
    status_fd: Option<i32>,
) {
    if own_group || status_fd.is_some() {
        super::child_fds::inherit_only(command, status_fd.into_iter().collect());
    }
}
