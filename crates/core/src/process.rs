//! Spawning one attempt's launch and collecting its output (spec 07 step 5: "run it as a
//! child process, capture output, exit code → denial detection").

use airlock_sandbox::ExecOutput;
use airlock_sandbox::SandboxExecRequest;
use tokio::io::AsyncRead;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWrite;
use tokio::io::AsyncWriteExt;

use crate::orchestrator::ExecError;

mod child;
#[cfg(target_os = "linux")]
pub mod child_fds;
#[cfg(target_os = "linux")]
mod direct_spawn;
#[cfg(target_os = "linux")]
mod direct_start;
#[cfg(target_os = "linux")]
pub mod launch_kill;
pub mod signals;
#[cfg(target_os = "linux")]
mod spawner;

/// How much of each stream is kept for denial detection and the result (the rest is still
/// streamed when [`OutputMode::Tee`] is on): 1 MiB.
pub const MAX_CAPTURED_BYTES: usize = 1 << 20;

/// Where a command's output goes besides the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputMode {
    /// Capture only (library callers, tests); stdin is `/dev/null`.
    #[default]
    Capture,
    /// Capture and copy to this process's stdout / stderr as it arrives; stdin is inherited
    /// (`airlock exec`, spec 10).
    Tee,
}

/// Which stream an [`OutputChunk`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStreamKind {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Bytes a child wrote, as they arrive (for a client that shows output live, spec 10
/// `item/commandExecution/outputDelta`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    /// Which stream.
    pub stream: OutputStreamKind,
    /// The bytes (at most one read's worth).
    pub bytes: Vec<u8>,
}

tokio::task_local! {
    static OUTPUT_SINK: tokio::sync::mpsc::Sender<OutputChunk>;
}

/// Room of an output sink that keeps a command's output bounded in memory: 16 chunks of at
/// most 8 KiB each.
pub const OUTPUT_SINK_CHUNKS: usize = 16;

/// Runs `future` with `sink` receiving every chunk of output of the children it spawns (in
/// the same task), besides the capture. A task-local so the tool runtimes need no extra
/// parameter; a closed sink is ignored (the capture goes on). The sink is bounded (see
/// [`OUTPUT_SINK_CHUNKS`]): a full one makes reading wait, so a command printing faster than
/// the client takes its output is slowed down by its full pipe instead of filling memory.
pub async fn with_output_sink<F: std::future::Future>(
    sink: tokio::sync::mpsc::Sender<OutputChunk>,
    future: F,
) -> F::Output {
    OUTPUT_SINK.scope(sink, future).await
}

/// Hands `bytes` to the output sink of the current task, if any (a remote run's output
/// reaches live clients the same way a local child's does).
pub(crate) async fn forward_output_chunk(stream: OutputStreamKind, bytes: &[u8]) {
    if let Ok(sink) = OUTPUT_SINK.try_with(Clone::clone) {
        let _ = sink
            .send(OutputChunk {
                stream,
                bytes: bytes.to_vec(),
            })
            .await;
    }
}

/// Spawns `launch` and waits for it; the exit code is the process's, or `128 + signal` for a
/// signal death (as shells report it). Dropping the future kills the child.
///
/// # Errors
/// [`ExecError::Spawn`] when the program cannot be started, [`ExecError::Wait`] when waiting or
/// reading fails.
pub async fn spawn_and_collect(
    launch: &SandboxExecRequest,
    mode: OutputMode,
) -> Result<ExecOutput, ExecError> {
    spawn(launch, mode, None, None).await
}

/// As [`spawn_and_collect`] in [`OutputMode::Capture`], with `input` written to the child's
/// stdin (the apply_patch helper reads its request there). A sandbox set-up failure is
/// [`ExecError::SandboxSetup`] here too, so no tool mistakes it for a denial (spec 07 step 6).
///
/// # Errors
/// As [`spawn_and_collect`].
pub async fn spawn_with_input(
    launch: &SandboxExecRequest,
    input: &[u8],
) -> Result<ExecOutput, ExecError> {
    spawn(launch, OutputMode::Capture, Some(input), None).await
}

/// Runs `direct` (bubblewrap itself, see [`airlock_sandbox::DirectBwrap`]) like
/// [`spawn_and_collect`], bubblewrap started before its mount plan is worked out
/// (`direct_start`): `status` is the pipe whose writer becomes bubblewrap's
/// `--json-status-fd`. bubblewrap gets its descriptors and the status writer and nothing
/// else this process holds; the launch's placeholder mount points are held until it has
/// exited (and released when the call is dropped); the mount plan's warnings come first on
/// stderr, as the helper prints them.
///
/// # Errors
/// As [`spawn_and_collect`]; [`ExecError::SandboxSetup`] when a placeholder cannot be
/// created.
#[cfg(target_os = "linux")]
pub async fn spawn_direct(
    direct: airlock_sandbox::DirectBwrap,
    status: airlock_sandbox::StatusPipe,
    mode: OutputMode,
) -> Result<ExecOutput, ExecError> {
    spawn(&direct.request, mode, None, Some((&direct, status))).await
}

/// Releases a direct launch's placeholders when dropped (the call may be dropped while the
/// command runs: the launch is killed then, see [`GroupKill`]).
#[cfg(target_os = "linux")]
struct Placeholders(Option<airlock_sandbox::PlaceholderGuard>);

#[cfg(target_os = "linux")]
impl Drop for Placeholders {
    fn drop(&mut self) {
        if let Some(guard) = self.0.take() {
            guard.release();
        }
    }
}

#[cfg(target_os = "linux")]
type Direct<'a> = (
    &'a airlock_sandbox::DirectBwrap,
    airlock_sandbox::StatusPipe,
);
#[cfg(not(target_os = "linux"))]
type Direct<'a> = (std::convert::Infallible, std::marker::PhantomData<&'a ()>);

#[allow(clippy::too_many_lines)]
async fn spawn(
    launch: &SandboxExecRequest,
    mode: OutputMode,
    input: Option<&[u8]>,
    direct: Option<Direct<'_>>,
) -> Result<ExecOutput, ExecError> {
    let Some((program, args)) = launch.argv.split_first() else {
        return Err(ExecError::Spawn {
            program: String::new(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"),
        });
    };
    #[cfg(target_os = "linux")]
    let (direct, mut status_pipe) = match direct {
        Some((direct, pipe)) => (Some(direct), Some(pipe)),
        None => (None, None),
    };
    #[cfg(not(target_os = "linux"))]
    let _ = direct;
    // The Linux helper reports on a status pipe whether the sandbox was set up, so a
    // set-up failure is never mistaken for the command's own failure (or a denial).
    #[cfg(target_os = "linux")]
    if status_pipe.is_none() && launch.reports_setup_status {
        status_pipe =
            Some(
                airlock_sandbox::StatusPipe::open().map_err(|source| ExecError::Spawn {
                    program: program.clone(),
                    source,
                })?,
            );
    }
    #[cfg(target_os = "linux")]
    let helper_argv = status_pipe
        .as_ref()
        .filter(|_| launch.reports_setup_status)
        .and_then(airlock_sandbox::StatusPipe::writer_fd)
        .map(|fd| launch.argv_with_status_fd(fd));
    #[cfg(target_os = "linux")]
    let args = helper_argv
        .as_deref()
        .and_then(|argv| argv.get(1..))
        .unwrap_or(args);
    // Without a terminal to share, the launch gets a process group of its own, so a call
    // that is dropped (interrupted turn, disconnected client) kills the helper *and* the
    // bubblewrap it started, even one still setting up (which killing the helper alone
    // leaves behind). With `Tee` the child stays in the terminal's foreground group.
    let own_group = mode == OutputMode::Capture;
    let stdin_mode = match (mode, input) {
        (_, Some(_)) => child::StdinMode::Piped,
        (OutputMode::Capture, None) => child::StdinMode::Null,
        (OutputMode::Tee, None) => child::StdinMode::Inherit,
    };
    let tee = mode == OutputMode::Tee;
    // Listen before the child exists, so no signal falls between spawn and listening.
    #[cfg(unix)]
    let mut interrupts = if tee {
        Some(
            signals::Interrupts::listen().map_err(|source| ExecError::Spawn {
                program: program.clone(),
                source,
            })?,
        )
    } else {
        None
    };
    // A launch in its own group is registered for `launch_kill::kill_all`, which also
    // stops new ones from starting once a server is ending.
    #[cfg(target_os = "linux")]
    if own_group && !launch_kill::begin_start() {
        return Err(ExecError::Spawn {
            program: program.clone(),
            source: std::io::Error::other("this process is stopping: no command starts any more"),
        });
    }
    // A direct launch's placeholders are created (and locked) once its plan is known,
    // right before bubblewrap reads it, and removed once the launch has exited.
    #[cfg(target_os = "linux")]
    let mut placeholders = Placeholders(None);
    #[cfg(target_os = "linux")]
    let mut plan_warnings = Vec::new();
    #[cfg(target_os = "linux")]
    let spawned = match &direct {
        Some(direct) => direct_start::start(
            direct,
            status_pipe
                .as_ref()
                .and_then(airlock_sandbox::StatusPipe::writer_fd),
            launch,
            stdin_mode,
            own_group,
        )
        .map(|started| {
            placeholders.0 = started.placeholders;
            plan_warnings = started.warnings;
            started.started
        }),
        None => child::start_command(
            program,
            args,
            launch,
            stdin_mode,
            own_group,
            helper_argv.as_ref().and(
                status_pipe
                    .as_ref()
                    .and_then(airlock_sandbox::StatusPipe::writer_fd),
            ),
        )
        .map_err(direct_start::StartError::Spawn),
    };
    #[cfg(not(target_os = "linux"))]
    let spawned = child::start_command(program, args, launch, stdin_mode, own_group, None);
    #[cfg(target_os = "linux")]
    if own_group && spawned.is_err() {
        launch_kill::abandon_start();
    }
    #[cfg(target_os = "linux")]
    if let Some(pipe) = status_pipe.as_mut() {
        pipe.close_writer();
    }
    #[cfg(target_os = "linux")]
    let spawned = spawned.map_err(|error| match error {
        direct_start::StartError::Spawn(source) => ExecError::Spawn {
            program: program.clone(),
            source,
        },
        direct_start::StartError::Setup(cause) => ExecError::SandboxSetup { cause },
    });
    #[cfg(not(target_os = "linux"))]
    let spawned = spawned.map_err(|source| ExecError::Spawn {
        program: program.clone(),
        source,
    });
    // The mount plan's warnings come first on stderr, as the helper prints them.
    #[cfg(target_os = "linux")]
    let warnings: String = plan_warnings
        .iter()
        .map(|warning| format!("airlock: warning: {warning}\n"))
        .collect();
    #[cfg(not(target_os = "linux"))]
    let warnings = String::new();
    let child::Started {
        mut child,
        stdout,
        stderr,
        stdin,
    } = spawned?;
    #[cfg(unix)]
    let mut group = GroupKill::new(own_group, child.id());
    let feed = async move {
        if let (Some(mut stdin), Some(input)) = (stdin, input) {
            // A child that exits early closes the pipe; its exit status tells why.
            let _ = stdin.write_all(input).await;
            let _ = stdin.shutdown().await;
        }
    };
    let pid = child.id();
    let waited = async {
        #[cfg(unix)]
        if let Some(interrupts) = interrupts.as_mut() {
            let signal = tokio::select! {
                status = child.wait() => return status,
                signal = interrupts.next() => signal,
            };
            // Relay it, let the launch end (the helper removes what it created), then
            // end the same way: the caller is being stopped, not asked for a result.
            if let Some(pid) = pid {
                signals::relay(pid, signal);
            }
            // A second signal while the launch ignores the first: kill it outright.
            tokio::select! {
                _ = child.wait() => {}
                _ = interrupts.next() => {
                    child.start_kill();
                    let _ = child.wait().await;
                }
            }
            signals::kill_adopted();
            signals::end_like(signal);
        }
        child.wait().await
    };
    if !warnings.is_empty() {
        forward_output_chunk(OutputStreamKind::Stderr, warnings.as_bytes()).await;
        if tee {
            let mut err = tokio::io::stderr();
            let _ = err.write_all(warnings.as_bytes()).await;
            let _ = err.flush().await;
        }
    }
    let (stdout, stderr, status, ()) = tokio::join!(
        collect(
            stdout,
            tee.then(tokio::io::stdout),
            OutputStreamKind::Stdout
        ),
        collect(
            stderr,
            tee.then(tokio::io::stderr),
            OutputStreamKind::Stderr
        ),
        waited,
        feed,
    );
    #[cfg(unix)]
    group.disarm();
    #[cfg(target_os = "linux")]
    drop(placeholders);
    let status = status.map_err(ExecError::Wait)?;
    let (stdout, stdout_dropped_bytes) = stdout.map_err(ExecError::Wait)?;
    let (stderr, stderr_dropped_bytes) = stderr.map_err(ExecError::Wait)?;
    let mut output = ExecOutput {
        exit_code: exit_code(status),
        stdout,
        stderr: warnings + &stderr,
        stdout_dropped_bytes,
        stderr_dropped_bytes,
    };
    #[cfg(target_os = "linux")]
    if let Some(pipe) = status_pipe {
        match pipe.report(&output.stderr) {
            airlock_sandbox::LaunchReport::Started => {}
            airlock_sandbox::LaunchReport::SetupFailed(cause) => {
                return Err(ExecError::SandboxSetup { cause });
            }
            // Set up, but the command itself could not be executed: as a shell reports it.
            airlock_sandbox::LaunchReport::CommandNotExecutable(_) => {
                output.exit_code = COMMAND_NOT_EXECUTABLE;
            }
        }
    }
    Ok(output)
}

/// Kills a launch when the call is dropped before the launch was reaped: on Linux the
/// whole launch, its sandbox included even mid set-up ([`launch_kill`]); elsewhere its
/// process group.
#[cfg(unix)]
struct GroupKill(Option<i32>);

#[cfg(unix)]
impl GroupKill {
    /// Arms the kill for the group the launch's `leader` leads, when it was started in its
    /// own group (`own_group`; then it is registered, see [`launch_kill`]).
    fn new(own_group: bool, leader: Option<u32>) -> Self {
        let leader = leader
            .and_then(|id| i32::try_from(id).ok())
            .filter(|id| own_group && *id > 1);
        #[cfg(target_os = "linux")]
        match leader {
            Some(pid) => launch_kill::register(pid),
            None if own_group => launch_kill::abandon_start(),
            None => {}
        }
        Self(leader)
    }

    /// The leader was reaped: its group id may be reused, never signal it.
    fn disarm(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(pid) = self.0 {
            launch_kill::unregister(pid);
        }
        self.0 = None;
    }
}

#[cfg(unix)]
impl Drop for GroupKill {
    fn drop(&mut self) {
        let Some(pgid) = self.0 else {
            return;
        };
        // The leader is not reaped yet (the child is killed on drop too), so the id is ours.
        #[cfg(target_os = "linux")]
        {
            launch_kill::kill_launch(pgid);
            launch_kill::unregister(pgid);
        }
        #[cfg(not(target_os = "linux"))]
        if let Some(pgid) = rustix::process::Pid::from_raw(pgid) {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

/// The exit code of a command the sandbox could not execute (not found or not
/// executable), as shells report "command not found"; never a denial (spec 05).
#[cfg(target_os = "linux")]
const COMMAND_NOT_EXECUTABLE: i32 = 127;

/// Reads `stream` to its end, keeping the first [`MAX_CAPTURED_BYTES`] (and counting the bytes
/// past them, the second value) and copying everything to `copy` when given. A copy target that fails is dropped and the capture goes on, except
/// a broken pipe (`airlock exec -- yes | head -1`): then reading stops and `stream` is closed,
/// so the command gets SIGPIPE on its next write, as it would writing to that pipe itself.
async fn collect<R, W>(
    stream: Option<R>,
    mut copy: Option<W>,
    kind: OutputStreamKind,
) -> std::io::Result<(String, u64)>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let Some(mut stream) = stream else {
        return Ok((String::new(), 0));
    };
    let mut kept = Vec::new();
    let mut dropped = 0_u64;
    let mut buffer = vec![0_u8; 8192];
    let sink = OUTPUT_SINK.try_with(Clone::clone).ok();
    loop {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            break;
        }
        let chunk = buffer.get(..read).unwrap_or_default();
        if let Some(target) = copy.as_mut() {
            let copied = async {
                target.write_all(chunk).await?;
                target.flush().await
            };
            match copied.await {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                    dropped += keep_head(&mut kept, chunk);
                    break;
                }
                Err(_) => copy = None,
            }
        }
        if let Some(sink) = &sink {
            let _ = sink
                .send(OutputChunk {
                    stream: kind,
                    bytes: chunk.to_vec(),
                })
                .await;
        }
        dropped += keep_head(&mut kept, chunk);
    }
    Ok((String::from_utf8_lossy(&kept).into_owned(), dropped))
}

/// Appends what fits of `chunk` under [`MAX_CAPTURED_BYTES`] to `kept`; the bytes that did not.
pub(crate) fn keep_head(kept: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    let room = MAX_CAPTURED_BYTES
        .saturating_sub(kept.len())
        .min(chunk.len());
    kept.extend_from_slice(chunk.get(..room).unwrap_or_default());
    u64::try_from(chunk.len() - room).unwrap_or(u64::MAX)
}

#[cfg(unix)]
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(1)
}

#[cfg(not(unix))]
fn exit_code(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}
