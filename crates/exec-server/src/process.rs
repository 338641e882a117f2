//! Managed processes (spec 09 §Methods `process/*`): spawned from a launch, output numbered by
//! one per-process `seq` shared by its streams (`stdout` and `stderr`, or the one `pty` of a
//! `tty: true` process) and the exit/close events, retained for `process/read` and pushed as
//! notifications in `seq` order. A process's input (its stdin pipe or terminal master) is
//! closed once it has exited.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;
use std::time::Duration;

use airlock_core::remote::protocol::ProcessClosed;
use airlock_core::remote::protocol::ProcessExited;
use airlock_core::remote::protocol::ProcessOutput;
use airlock_core::remote::protocol::ProcessReadResponse;
use airlock_core::remote::protocol::ReadChunk;
use airlock_core::remote::protocol::StreamKind;
use airlock_core::remote::protocol::WriteStatus;
use airlock_core::remote::protocol::method;
use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_sandbox::ExecOutput;
use airlock_sandbox::SandboxExecRequest;
use airlock_sandbox::is_likely_sandbox_denied;
use base64::Engine as _;
use tokio::io::AsyncRead;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWrite;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::Notify;

/// Output retained per process for `process/read` (oldest dropped first, reported as
/// `droppedChunks`): 4 MiB.
const RETAINED_BYTES: usize = 4 << 20;
/// Messages a connection's writer may have queued before a process's output waits for it
/// (about 0.7 MiB of base64 chunks): a command printing faster than the client reads is
/// slowed down by its full pipe instead of growing the server's memory (red-team F8).
const OUTPUT_QUEUE: usize = 64;
/// Output kept for denial detection, per stream: 64 KiB.
const DENIAL_SCAN_BYTES: usize = 64 << 10;
/// The longest `process/read` long-poll: 30 s.
const MAX_WAIT: Duration = Duration::from_secs(30);
/// Exit code of a command the sandbox could not execute (as shells report it).
const COMMAND_NOT_EXECUTABLE: i32 = 127;

#[derive(Debug, Default)]
struct State {
    last_seq: u64,
    chunks: VecDeque<(u64, StreamKind, Vec<u8>)>,
    retained: usize,
    /// The seq of the newest output chunk dropped from `chunks` (0: none).
    dropped_through: u64,
    stdout_scan: Vec<u8>,
    stderr_scan: Vec<u8>,
    exit_code: Option<i32>,
    sandbox_denied: bool,
    closed: bool,
    failure: Option<String>,
    /// Process group id while the leader is not reaped (never signal a reused id).
    group: Option<i32>,
}

/// One process of a connection.
#[derive(Debug)]
pub(crate) struct Managed {
    id: String,
    state: Mutex<State>,
    changed: Notify,
    stdin: tokio::sync::Mutex<Option<Input>>,
    /// `pipeStdin` or `tty`: `process/write` is accepted.
    writable: bool,
    sink: MessageSink,
}

/// Where `process/write` goes.
#[derive(Debug)]
enum Input {
    Pipe(ChildStdin),
    #[cfg(unix)]
    Pty(crate::pty::Master),
}

async fn write_all<W: AsyncWrite + Unpin>(writer: &mut W, bytes: &[u8]) -> std::io::Result<()> {
    writer.write_all(bytes).await?;
    writer.flush().await
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl Managed {
    /// Spawns `launch` as process `id`; its events go to `sink`. With `tty` the launch (the
    /// sandbox helper when sandboxed) runs on a new pseudo-terminal as stdin, stdout and
    /// stderr, in a session of its own; `pipe_stdin` then does not matter (the terminal is
    /// always writable).
    ///
    /// # Errors
    /// -32600 when the program or its terminal cannot be started; -32602 for `tty` where
    /// pseudo-terminals are not supported.
    pub(crate) fn spawn(
        id: String,
        launch: &SandboxExecRequest,
        arg0: Option<&str>,
        pipe_stdin: bool,
        tty: bool,
        sink: MessageSink,
    ) -> Result<Arc<Self>, ErrorObject> {
        let spawn_error = |e: std::io::Error| {
            ErrorObject::invalid_request(format!("cannot start process {id}: {e}"))
        };
        let Some((program, args)) = launch.argv.split_first() else {
            return Err(ErrorObject::invalid_params(
                "invalid params: argv: must not be empty",
            ));
        };
        // The Linux helper reports whether the sandbox was set up, so a set-up failure is
        // never mistaken for a denial.
        #[cfg(target_os = "linux")]
        let mut status_pipe = if launch.reports_setup_status {
            Some(airlock_sandbox::StatusPipe::open().map_err(spawn_error)?)
        } else {
            None
        };
        #[cfg(target_os = "linux")]
        let helper_argv = status_pipe
            .as_ref()
            .and_then(airlock_sandbox::StatusPipe::writer_fd)
            .map(|fd| launch.argv_with_status_fd(fd));
        #[cfg(target_os = "linux")]
        let args = helper_argv
            .as_deref()
            .and_then(|argv| argv.get(1..))
            .unwrap_or(args);
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .current_dir(&launch.cwd)
            .env_clear()
            .envs(&launch.env)
            .kill_on_drop(true);
        #[cfg(unix)]
        let pty = if tty {
            let pty = crate::pty::Pty::open().map_err(|e| {
                ErrorObject::invalid_request(format!(
                    "cannot start process {id}: cannot open a pseudo-terminal: {e}"
                ))
            })?;
            command
                .stdin(pty.slave_stdio().map_err(spawn_error)?)
                .stdout(pty.slave_stdio().map_err(spawn_error)?)
                .stderr(pty.slave_stdio().map_err(spawn_error)?);
            // A session of its own (also the group terminate kills).
            crate::pty::controlling_terminal(&mut command);
            Some(pty)
        } else {
            // Its own group, so terminate reaches the helper, bubblewrap and the command.
            command.process_group(0);
            None
        };
        #[cfg(not(unix))]
        if tty {
            return Err(ErrorObject::invalid_params(
                "invalid params: tty: this executor does not support pseudo-terminals; use tty: false",
            ));
        }
        if !tty {
            command
                .stdin(if pipe_stdin {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
        }
        #[cfg(unix)]
        if let Some(arg0) = arg0.or(launch.arg0.as_deref()) {
            command.arg0(arg0);
        }
        // Stdio and its status channel only: nothing of another client's process
        // started meanwhile by another thread.
        #[cfg(target_os = "linux")]
        airlock_core::process::child_fds::inherit_only(
            &mut command,
            status_pipe
                .as_ref()
                .and_then(airlock_sandbox::StatusPipe::writer_fd)
                .into_iter()
                .collect(),
        );
        let spawned = command.spawn();
        // The command holds this process's copies of the terminal's slave: without dropping
        // them the output would never end.
        drop(command);
        #[cfg(unix)]
        let master = pty.map(crate::pty::Pty::into_master);
        #[cfg(target_os = "linux")]
        if let Some(pipe) = status_pipe.as_mut() {
            pipe.close_writer();
        }
        let mut child = spawned.map_err(spawn_error)?;
        let input = child.stdin.take().map(Input::Pipe);
        #[cfg(unix)]
        let input = input.or_else(|| master.clone().map(Input::Pty));
        let managed = Arc::new(Self {
            id,
            state: Mutex::new(State {
                group: child.id().and_then(|pid| i32::try_from(pid).ok()),
                ..State::default()
            }),
            changed: Notify::new(),
            stdin: tokio::sync::Mutex::new(input),
            writable: pipe_stdin || tty,
            sink,
        });
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let sandbox = launch.sandbox;
        let this = Arc::clone(&managed);
        tokio::spawn(async move {
            let (status, (), (), ()) = tokio::join!(
                child.wait(),
                this.pump(stdout, StreamKind::Stdout),
                this.pump(stderr, StreamKind::Stderr),
                async {
                    #[cfg(unix)]
                    this.pump(master, StreamKind::Pty).await;
                },
            );
            lock(&this.state).group = None;
            // Nothing reads the input any more: close the pipe or the terminal.
            *this.stdin.lock().await = None;
            let mut exit_code = match status {
                Ok(status) => exit_code(status),
                Err(e) => {
                    lock(&this.state).failure = Some(format!("lost track of the process: {e}"));
                    -1
                }
            };
            let stderr_text = String::from_utf8_lossy(&lock(&this.state).stderr_scan).into_owned();
            let mut setup_failure = None;
            #[cfg(target_os = "linux")]
            if let Some(pipe) = status_pipe {
                match pipe.report(&stderr_text) {
                    airlock_sandbox::LaunchReport::Started => {}
                    airlock_sandbox::LaunchReport::SetupFailed(cause) => {
                        setup_failure = Some(cause)
                    }
                    airlock_sandbox::LaunchReport::CommandNotExecutable(_) => {
                        exit_code = COMMAND_NOT_EXECUTABLE;
                    }
                }
            }
            this.finish(exit_code, sandbox, stderr_text, setup_failure);
        });
        Ok(managed)
    }

    async fn pump<R: AsyncRead + Unpin>(&self, stream: Option<R>, kind: StreamKind) {
        let Some(mut stream) = stream else { return };
        let mut buffer = vec![0_u8; 8192];
        while let Ok(read) = stream.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            let chunk = buffer.get(..read).unwrap_or_default().to_vec();
            self.sink.wait_room(OUTPUT_QUEUE).await;
            let mut state = lock(&self.state);
            // A terminal merges both streams; it is scanned as stderr, where the helper's
            // set-up report and denial messages are looked for.
            let scan = match kind {
                StreamKind::Stderr | StreamKind::Pty => &mut state.stderr_scan,
                StreamKind::Stdout => &mut state.stdout_scan,
            };
            let room = DENIAL_SCAN_BYTES.saturating_sub(scan.len());
            scan.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
            state.last_seq += 1;
            let seq = state.last_seq;
            // Sent under the lock: notifications leave in seq order.
            self.sink.send(Message::notification(
                method::PROCESS_OUTPUT,
                serde_json::to_value(ProcessOutput {
                    process_id: self.id.clone(),
                    seq,
                    stream: kind,
                    chunk: encode(&chunk),
                })
                .ok(),
            ));
            state.retained += chunk.len();
            state.chunks.push_back((seq, kind, chunk));
            while state.retained > RETAINED_BYTES {
                let Some((seq, _, dropped)) = state.chunks.pop_front() else {
                    break;
                };
                state.retained -= dropped.len();
                state.dropped_through = seq;
            }
            drop(state);
            self.changed.notify_waiters();
        }
    }

    fn finish(
        &self,
        exit_code: i32,
        sandbox: airlock_sandbox::SandboxType,
        stderr: String,
        setup_failure: Option<String>,
    ) {
        let mut state = lock(&self.state);
        let output = ExecOutput {
            exit_code,
            stdout: String::from_utf8_lossy(&state.stdout_scan).into_owned(),
            stderr,
            ..ExecOutput::default()
        };
        let denied = setup_failure.is_none() && is_likely_sandbox_denied(sandbox, &output);
        state.exit_code = Some(exit_code);
        state.sandbox_denied = denied;
        if let Some(cause) = &setup_failure {
            state.failure = Some(format!("could not start the sandbox: {cause}"));
        }
        state.last_seq += 1;
        self.sink.send(Message::notification(
            method::PROCESS_EXITED,
            serde_json::to_value(ProcessExited {
                process_id: self.id.clone(),
                seq: state.last_seq,
                exit_code,
                sandbox_denied: denied,
                setup_failure,
            })
            .ok(),
        ));
        state.last_seq += 1;
        state.closed = true;
        self.sink.send(Message::notification(
            method::PROCESS_CLOSED,
            serde_json::to_value(ProcessClosed {
                process_id: self.id.clone(),
                seq: state.last_seq,
            })
            .ok(),
        ));
        drop(state);
        self.changed.notify_waiters();
    }

    /// `process/read`: chunks after `after_seq`, waiting up to `wait` for one.
    pub(crate) async fn read(
        &self,
        after_seq: u64,
        max_bytes: Option<usize>,
        wait: Duration,
    ) -> ProcessReadResponse {
        let deadline = tokio::time::Instant::now() + wait.min(MAX_WAIT);
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = lock(&self.state);
                let mut chunks = Vec::new();
                let mut bytes = 0;
                for (seq, stream, chunk) in state.chunks.iter().filter(|c| c.0 > after_seq) {
                    if !chunks.is_empty() && max_bytes.is_some_and(|max| bytes + chunk.len() > max)
                    {
                        break;
                    }
                    bytes += chunk.len();
                    chunks.push(ReadChunk {
                        seq: *seq,
                        stream: *stream,
                        chunk: encode(chunk),
                    });
                }
                let finished = state.exit_code.is_some();
                if !chunks.is_empty() || finished || tokio::time::Instant::now() >= deadline {
                    let next_seq = chunks.last().map_or(after_seq, |c| c.seq);
                    return ProcessReadResponse {
                        chunks,
                        next_seq,
                        exited: finished,
                        exit_code: state.exit_code,
                        closed: state.closed,
                        failure: state.failure.clone(),
                        sandbox_denied: state.sandbox_denied,
                        // Output seqs run without gaps, so the dropped ones after
                        // `after_seq` are those up to `dropped_through`.
                        dropped_chunks: state.dropped_through.saturating_sub(after_seq),
                    };
                }
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// `process/write`.
    pub(crate) async fn write(&self, bytes: &[u8]) -> WriteStatus {
        if !self.writable {
            return WriteStatus::StdinClosed;
        }
        let mut stdin = self.stdin.lock().await;
        let written = match stdin.as_mut() {
            None => return WriteStatus::StdinClosed,
            Some(Input::Pipe(pipe)) => write_all(pipe, bytes).await,
            #[cfg(unix)]
            Some(Input::Pty(master)) => write_all(master, bytes).await,
        };
        if written.is_err() {
            *stdin = None;
            return WriteStatus::StdinClosed;
        }
        WriteStatus::Accepted
    }

    /// `process/terminate`: kills the whole group; `true` when it was still running.
    pub(crate) fn terminate(&self) -> bool {
        let state = lock(&self.state);
        let Some(group) = state.group else {
            return false;
        };
        #[cfg(unix)]
        if let Some(pgid) = rustix::process::Pid::from_raw(group) {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        true
    }
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
