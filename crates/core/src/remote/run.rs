//! One attempt of a shell call on an exec-server (spec 09 §Client side; spec 07 step 5 for a
//! remote environment): the profile stays symbolic and travels as a
//! [`FileSystemSandboxContext`]; the executor confines the process, and its `sandboxDenied`
//! feeds the same retry logic as a local denial.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use airlock_sandbox::ExecOutput;
use base64::Engine as _;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use super::client::ExecServerClient;
use super::client::RemoteError;
use super::protocol::FileSystemSandboxContext;
use super::protocol::ProcessExited;
use super::protocol::ProcessOutput;
use super::protocol::ProcessStartParams;
use super::protocol::StreamKind;
use super::protocol::WirePath;
use super::protocol::method;
use crate::orchestrator::DenialEvidence;
use crate::orchestrator::ExecError;
use crate::orchestrator::SandboxAttempt;
use crate::orchestrator::ToolError;
use crate::process::OutputMode;
use crate::process::OutputStreamKind;
use crate::process::forward_output_chunk;
use crate::process::keep_head;
use crate::shell_runtime::ShellRequest;

static NEXT_PROCESS: AtomicU64 = AtomicU64::new(1);

/// The sandbox context of `attempt`: `None` when policy asked for no confinement (an approved
/// unsandboxed retry), otherwise the symbolic profile with the environment's roots.
#[must_use]
pub fn sandbox_context(attempt: &SandboxAttempt) -> Option<FileSystemSandboxContext> {
    attempt.sandbox_requested.then(|| FileSystemSandboxContext {
        permissions: attempt.exec_server_permissions.clone(),
        cwd: Some(WirePath(attempt.sandbox_policy_cwd.clone())),
        workspace_roots: Some(
            attempt
                .workspace_roots
                .iter()
                .cloned()
                .map(WirePath)
                .collect(),
        ),
        windows_sandbox_level: attempt.windows_level,
        windows_sandbox_private_desktop: false,
        use_legacy_landlock: attempt.use_legacy_landlock,
    })
}

/// Runs `req` on the executor and waits for `process/closed`.
///
/// # Errors
/// [`ExecError::Remote`] when the executor cannot be reached, refuses the start, or the
/// connection is lost (never retried locally); [`ToolError::SandboxDenied`] when the executor
/// reports `sandboxDenied`.
pub async fn run_remote(
    client: &ExecServerClient,
    req: &ShellRequest,
    attempt: &SandboxAttempt,
    mode: OutputMode,
) -> Result<ExecOutput, ToolError> {
    let remote = |error: RemoteError| ToolError::Execution(ExecError::Remote(error));
    let connection = client.connection().await.map_err(remote)?;
    let process_id = format!(
        "airlock-{}-{}",
        std::process::id(),
        NEXT_PROCESS.fetch_add(1, Ordering::SeqCst)
    );
    let mut events = connection.subscribe(&process_id);
    let params = ProcessStartParams {
        process_id: process_id.clone(),
        argv: req.command.clone(),
        cwd: WirePath(req.cwd.clone()),
        env: req.env.clone(),
        tty: false,
        pipe_stdin: false,
        arg0: None,
        sandbox: sandbox_context(attempt),
    };
    let timeout = client.environment().request_timeout;
    let started = connection
        .request(
            method::PROCESS_START,
            serde_json::to_value(&params).unwrap_or(Value::Null),
            timeout,
        )
        .await;
    if let Err(error) = started {
        connection.unsubscribe(&process_id);
        return Err(remote(error));
    }
    // An interrupted call (turn/interrupt, a client that went away) drops this future: the
    // guard then asks the executor to kill the process, as a local run's drop kills its child.
    let mut guard = TerminateOnDrop {
        connection: Some(std::sync::Arc::clone(&connection)),
        process_id: process_id.clone(),
        timeout,
    };
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let (mut stdout_dropped, mut stderr_dropped) = (0_u64, 0_u64);
    let mut exited: Option<ProcessExited> = None;
    let engine = base64::engine::general_purpose::STANDARD;
    loop {
        let Some(event) = events.recv().await else {
            return Err(remote(RemoteError::Lost {
                url: client.environment().url.clone(),
                what: format!("process {process_id} ({})", req.command.join(" ")),
            }));
        };
        let params = event.params.unwrap_or(Value::Null);
        match event.method.as_str() {
            method::PROCESS_OUTPUT => {
                let Ok(output) = serde_json::from_value::<ProcessOutput>(params) else {
                    continue;
                };
                let bytes = engine.decode(output.chunk.as_bytes()).unwrap_or_default();
                let (kept, dropped, kind) = match output.stream {
                    StreamKind::Stderr => {
                        (&mut stderr, &mut stderr_dropped, OutputStreamKind::Stderr)
                    }
                    StreamKind::Stdout | StreamKind::Pty => {
                        (&mut stdout, &mut stdout_dropped, OutputStreamKind::Stdout)
                    }
                };
                if mode == OutputMode::Tee {
                    // A failing terminal does not stop the capture.
                    let _ = match kind {
                        OutputStreamKind::Stdout => tee(tokio::io::stdout(), &bytes).await,
                        OutputStreamKind::Stderr => tee(tokio::io::stderr(), &bytes).await,
                    };
                }
                forward_output_chunk(kind, &bytes).await;
                *dropped += keep_head(kept, &bytes);
            }
            method::PROCESS_EXITED => {
                exited = serde_json::from_value(params).ok();
            }
            method::PROCESS_CLOSED => break,
            _ => {}
        }
    }
    guard.connection = None;
    connection.unsubscribe(&process_id);
    // Output the reader could not queue for this (slow) consumer: lost, like a head past 1 MiB.
    let (stdout_unqueued, stderr_unqueued) = events.dropped();
    stdout_dropped += stdout_unqueued;
    stderr_dropped += stderr_unqueued;
    let Some(exited) = exited else {
        return Err(remote(RemoteError::Lost {
            url: client.environment().url.clone(),
            what: format!("process {process_id}: closed without an exit status"),
        }));
    };
    if let Some(cause) = exited.setup_failure {
        return Err(ToolError::Execution(ExecError::SandboxSetup {
            cause: format!("on exec-server {}: {cause}", client.environment().url),
        }));
    }
    let output = ExecOutput {
        exit_code: exited.exit_code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stdout_dropped_bytes: stdout_dropped,
        stderr_dropped_bytes: stderr_dropped,
    };
    if exited.sandbox_denied {
        // The executor inferred it from output and exit code, as a local run would.
        return Err(ToolError::SandboxDenied {
            output,
            network: None,
            evidence: DenialEvidence::OutputOnly,
        });
    }
    Ok(output)
}

/// Terminates the remote process unless disarmed (`connection = None`).
struct TerminateOnDrop {
    connection: Option<std::sync::Arc<super::client::Connection>>,
    process_id: String,
    timeout: std::time::Duration,
}

impl Drop for TerminateOnDrop {
    fn drop(&mut self) {
        let Some(connection) = self.connection.take() else {
            return;
        };
        connection.unsubscribe(&self.process_id);
        let params = serde_json::json!({ "processId": self.process_id });
        let timeout = self.timeout;
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = connection
                    .request(method::PROCESS_TERMINATE, params, timeout)
                    .await;
            });
        }
    }
}

async fn tee<W: tokio::io::AsyncWrite + Unpin>(mut target: W, bytes: &[u8]) -> std::io::Result<()> {
    target.write_all(bytes).await?;
    target.flush().await
}
