//! Running a reviewer program (hook or automatic-review command): JSON on stdin, output captured,
//! a hard deadline, and nothing left running afterwards.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

/// The most output read from each of stdout and stderr, in bytes (1 MiB); the rest is dropped.
pub const MAX_OUTPUT_BYTES: u64 = 1024 * 1024;

/// One program run.
#[derive(Debug, Clone)]
pub(crate) struct ProcessRequest {
    /// The program (looked up in `PATH` when it has no slash).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Bytes written to its stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// Working directory; `None` = the caller's.
    pub cwd: Option<PathBuf>,
    /// Deadline for the whole run (spawn to exit, output read).
    pub timeout: Duration,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProcessOutcome {
    /// The program exited; `code` is `None` when a signal ended it.
    Exited {
        /// The exit status code.
        code: Option<i32>,
        /// Stdout, lossily decoded as UTF-8, at most [`MAX_OUTPUT_BYTES`].
        stdout: String,
        /// Stderr, lossily decoded as UTF-8, at most [`MAX_OUTPUT_BYTES`].
        stderr: String,
    },
    /// The deadline passed; the program (and its process group) was killed.
    TimedOut,
    /// The program could not be started (message includes the OS error).
    SpawnFailed(String),
}

/// Kills the child's whole process group when dropped unless disarmed, so that neither a
/// timeout nor a cancelled request leaves a hook's grandchildren running.
struct GroupGuard {
    #[cfg(unix)]
    pgid: Option<rustix::process::Pid>,
}

impl GroupGuard {
    fn new(child: &tokio::process::Child) -> Self {
        #[cfg(unix)]
        {
            let pgid = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw);
            Self { pgid }
        }
        #[cfg(not(unix))]
        {
            let _ = child;
            Self {}
        }
    }

    fn disarm(&mut self) {
        #[cfg(unix)]
        {
            self.pgid = None;
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid.take() {
            // The group may already be gone; nothing else to do then.
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

/// Runs the program of `request` to completion or to its deadline.
pub(crate) async fn run_process(request: ProcessRequest) -> ProcessOutcome {
    let mut command = tokio::process::Command::new(&request.program);
    command
        .args(&request.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    if let Some(cwd) = &request.cwd {
        command.current_dir(cwd);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return ProcessOutcome::SpawnFailed(format!(
                "cannot start `{}`: {error}",
                request.program.display()
            ));
        }
    };
    let mut guard = GroupGuard::new(&child);
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = request.stdin;
    let run = async {
        let write = async move {
            if let Some(mut stdin) = stdin {
                // A program that does not read its input is not an error.
                let _ = stdin.write_all(&input).await;
                let _ = stdin.shutdown().await;
            }
        };
        let (_, out, err, status) = tokio::join!(
            write,
            read_capped(stdout),
            read_capped(stderr),
            child.wait()
        );
        (out, err, status)
    };
    match tokio::time::timeout(request.timeout, run).await {
        Ok((stdout, stderr, Ok(status))) => {
            guard.disarm();
            ProcessOutcome::Exited {
                code: status.code(),
                stdout,
                stderr,
            }
        }
        Ok((_, _, Err(error))) => {
            ProcessOutcome::SpawnFailed(format!("waiting for the program failed: {error}"))
        }
        // Dropping `guard` kills the group, `kill_on_drop` the child itself.
        Err(_) => ProcessOutcome::TimedOut,
    }
}

async fn read_capped<R>(reader: Option<R>) -> String
where
    R: tokio::io::AsyncRead + Unpin,
{
    let Some(reader) = reader else {
        return String::new();
    };
    let mut buffer = Vec::new();
    // A read error leaves what was read so far; the exit status still decides.
    let _ = reader.take(MAX_OUTPUT_BYTES).read_to_end(&mut buffer).await;
    String::from_utf8_lossy(&buffer).into_owned()
}
