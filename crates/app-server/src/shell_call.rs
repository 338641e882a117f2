//! `tool/shell`: one shell tool call through the core session, with `commandExecution` items
//! and output deltas.

use std::future::Future as _;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use airlock_app_server_protocol::CommandExecutionOutputDeltaNotification;
use airlock_app_server_protocol::CommandExecutionStatus;
use airlock_app_server_protocol::ItemNotification;
use airlock_app_server_protocol::OutputStream;
use airlock_app_server_protocol::ThreadItem;
use airlock_app_server_protocol::ToolCallStatus;
use airlock_app_server_protocol::ToolShellParams;
use airlock_app_server_protocol::ToolShellResponse;
use airlock_app_server_protocol::methods;
use airlock_core::OutputChunk;
use airlock_core::OutputStreamKind;
use airlock_core::ShellCall;
use airlock_core::ShellToolOutcome;
use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_protocol::SandboxPermissions;

use crate::patch_call::patch_response;
use crate::summary;
use crate::threads::ThreadState;

/// Messages the connection's writer may have queued before an output delta waits for it
/// (a command printing faster than the client reads is slowed down by its full pipe).
const OUTPUT_QUEUE: usize = 64;

/// How long a call whose approval an interruption withdrew may take to report `declined`
/// before it is dropped like a running one (it never started a process).
const WITHDRAWN_SETTLE: Duration = Duration::from_secs(10);

/// Checks what the core cannot express, so nothing is silently ignored.
///
/// # Errors
/// -32602 naming the field.
fn validate(params: &ToolShellParams) -> Result<(), ErrorObject> {
    if params.command.is_empty() {
        return Err(ErrorObject::invalid_params(
            "invalid params: command: must not be empty",
        ));
    }
    if params.tty == Some(true) {
        return Err(ErrorObject::invalid_params(
            "invalid params: tty: a pseudo-terminal is not supported; send tty: false",
        ));
    }
    if params.additional_permissions.is_some() {
        return Err(ErrorObject::invalid_params(
            "invalid params: additionalPermissions: not supported by this server yet; ask with sandboxPermissions: require_escalated",
        ));
    }
    if params.sandbox_permissions == Some(SandboxPermissions::WithAdditionalPermissions) {
        return Err(ErrorObject::invalid_params(
            "invalid params: sandboxPermissions: with_additional_permissions needs additionalPermissions, which this server does not support yet",
        ));
    }
    Ok(())
}

fn item_status(status: ToolCallStatus) -> CommandExecutionStatus {
    match status {
        ToolCallStatus::Completed => CommandExecutionStatus::Completed,
        ToolCallStatus::Failed => CommandExecutionStatus::Failed,
        ToolCallStatus::Declined => CommandExecutionStatus::Declined,
    }
}

/// Runs one `tool/shell` call; the result comes when it is over, after every output delta.
/// Interrupting the turn kills a running command (status `failed`) and aborts a pending
/// approval (status `declined`); `timeoutMs` kills it too (status `failed`).
///
/// # Errors
/// -32602 naming the field for unusable params or an unknown turn.
pub async fn run(
    sink: &MessageSink,
    thread: Arc<ThreadState>,
    params: ToolShellParams,
) -> Result<ToolShellResponse, ErrorObject> {
    validate(&params)?;
    let entry = thread.turn(&params.turn_id)?;
    if entry.turn.is_interrupted() {
        return Ok(summary::not_run(
            ToolCallStatus::Declined,
            "the turn was interrupted or has ended; start a new turn",
        ));
    }
    let command_text = shlex::try_join(params.command.iter().map(String::as_str))
        .unwrap_or_else(|_| params.command.join(" "));
    let cwd = params.cwd.as_ref().map_or_else(
        || thread.context_cwd(),
        |dir| thread.context_cwd().join(dir),
    );
    let item = |status, exit_code, duration_ms| ThreadItem::CommandExecution {
        id: params.call_id.clone(),
        command: command_text.clone(),
        cwd: cwd.clone(),
        status,
        exit_code,
        duration_ms,
    };
    let notify = |method: &str, item: ThreadItem| {
        let note = ItemNotification {
            thread_id: thread.id.clone(),
            turn_id: params.turn_id.clone(),
            item,
        };
        sink.send(Message::notification(
            method,
            serde_json::to_value(note).ok(),
        ));
    };
    notify(
        methods::ITEM_STARTED,
        item(CommandExecutionStatus::InProgress, None, None),
    );
    let started = Instant::now();
    let (chunks_tx, mut chunks) =
        tokio::sync::mpsc::channel::<OutputChunk>(airlock_core::OUTPUT_SINK_CHUNKS);
    let call = ShellCall {
        call_id: params.call_id.clone(),
        command: params.command.clone(),
        cwd: params.cwd.clone(),
        sandbox_permissions: params.sandbox_permissions.unwrap_or_default(),
        justification: params.justification.clone(),
        prefix_rule: params.prefix_rule.clone(),
    };
    let session = Arc::clone(&thread.session);
    let turn = Arc::clone(&entry.turn);
    let timeout = params.timeout_ms.map(Duration::from_millis);
    let run = async {
        let exec = airlock_core::with_output_sink(chunks_tx, session.shell_tool(&turn, call));
        let timed = async {
            match timeout {
                Some(limit) => tokio::time::timeout(limit, exec).await.ok(),
                None => Some(exec.await),
            }
        };
        let mut timed = std::pin::pin!(timed);
        let finished = tokio::select! {
            biased;
            outcome = &mut timed => Some(outcome),
            () = entry.turn.interrupted() => {
                // A call whose approval the interruption withdrew resolves to `abort`
                // without running: wait for it (bounded), so it reports `declined` however
                // busy the machine is. Any other call may be running: one that does not
                // finish within a few polls is killed by dropping it.
                if entry.turn.withdrew_approval_of(&params.call_id) {
                    tokio::time::timeout(WITHDRAWN_SETTLE, &mut timed).await.ok()
                } else {
                let mut settled = None;
                for _ in 0..4 {
                    let polled = std::future::poll_fn(|cx| std::task::Poll::Ready(timed.as_mut().poll(cx))).await;
                    if let std::task::Poll::Ready(outcome) = polled {
                        settled = Some(outcome);
                        break;
                    }
                    tokio::task::yield_now().await;
                }
                settled
                }
            }
        };
        match finished {
            Some(Some(outcome)) => Ok(outcome),
            Some(None) => Err(format!(
                "timed out after {} ms; the command was killed",
                params.timeout_ms.unwrap_or_default()
            )),
            None => Err(
                "interrupted: the turn was interrupted while the command ran; it was killed"
                    .to_owned(),
            ),
        }
    };
    let forward = async {
        while let Some(chunk) = chunks.recv().await {
            let note = CommandExecutionOutputDeltaNotification {
                thread_id: thread.id.clone(),
                turn_id: params.turn_id.clone(),
                item_id: params.call_id.clone(),
                stream: match chunk.stream {
                    OutputStreamKind::Stdout => OutputStream::Stdout,
                    OutputStreamKind::Stderr => OutputStream::Stderr,
                },
                delta: String::from_utf8_lossy(&chunk.bytes).into_owned(),
            };
            // Only as fast as the client takes them (red-team F8: output never piles up).
            sink.wait_room(OUTPUT_QUEUE).await;
            sink.send(Message::notification(
                methods::OUTPUT_DELTA,
                serde_json::to_value(note).ok(),
            ));
        }
    };
    let (outcome, ()) = tokio::join!(run, forward);
    let response = match outcome {
        Ok(ShellToolOutcome::Command(outcome)) => {
            if let Some(error) = &outcome.audit_error {
                tracing::warn!("audit log: {error}");
            }
            summary::shell_response(&outcome)
        }
        Ok(ShellToolOutcome::Patch(outcome)) => {
            let patch = patch_response(&outcome);
            let mut response = summary::not_run(patch.status, patch.stderr.clone());
            response.stdout = patch.stdout;
            response.stderr = patch.stderr;
            response.decision.decision = "apply_patch".to_owned();
            if response.status == ToolCallStatus::Completed {
                response.reason = None;
            }
            response
        }
        Ok(ShellToolOutcome::ImplicitPatch { message }) => {
            summary::not_run(ToolCallStatus::Declined, message)
        }
        Err(reason) => summary::not_run(ToolCallStatus::Failed, reason),
    };
    let duration = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    notify(
        methods::ITEM_COMPLETED,
        item(
            item_status(response.status),
            response.exit_code,
            Some(duration),
        ),
    );
    Ok(response)
}
