//! One MCP connection: reads JSON-RPC lines, dispatches them, and owns the connection's one
//! [`Session`] (created at `initialize`, when Airlock learns whether the client can elicit).
//!
//! Tool calls run as local tasks, so calls, approvals and progress interleave; a call's task
//! is dropped on `notifications/cancelled` (no response is sent, as MCP says) and at end of
//! input, which kills its process (`kill_on_drop`) and withdraws its pending approvals.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use airlock_approval::ApprovalConfig;
use airlock_approval::ApprovalTurn;
use airlock_approval::NO_REVIEWER_AVAILABLE;
use airlock_core::ExecPolicyManager;
use airlock_core::PatchCall;
use airlock_core::Session;
use airlock_core::SessionOptions;
use airlock_core::ShellCall;
use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Frame;
use airlock_jsonrpc::LineReader;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::PendingRequests;
use airlock_jsonrpc::Request;
use airlock_jsonrpc::RequestId;
use airlock_jsonrpc::WireStyle;
use airlock_protocol::SandboxPermissions;
use serde_json::Value;
use serde_json::json;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::task::JoinHandle;

use crate::elicit::Asker;
use crate::lifecycle::ClientHello;
use crate::result::ToolOutput;
use crate::tools::SandboxArg;
use crate::tools::ToolCall;

/// What the connection's session is built from (as `airlock exec` builds its own; the
/// options' output mode should be `Capture`: stdout is the protocol channel).
pub struct SessionParts {
    /// The session options (policy, reviewer, profile, environment, sandbox, audit log).
    pub options: SessionOptions,
    /// Hooks and the automatic reviewer.
    pub approval_config: ApprovalConfig,
    /// The loaded rules.
    pub exec_policy: ExecPolicyManager,
}

/// Serves one MCP connection on `reader` / `writer` until end of input; lines longer than
/// `max_line_bytes` are refused with -32600. Must run on a current-thread runtime (calls are
/// local tasks).
///
/// # Errors
/// A write error of the final flush (the client went away).
pub async fn serve<R, W>(
    reader: R,
    writer: W,
    parts: SessionParts,
    max_line_bytes: usize,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async move {
            let (sink, writer_task) = airlock_jsonrpc::spawn_writer(writer, WireStyle { with_version: true });
            let mut connection = Connection::new(sink, parts);
            let mut lines = LineReader::new(reader, max_line_bytes);
            loop {
                let frame = match lines.next_frame().await {
                    Ok(Some(frame)) => frame,
                    Ok(None) => break,
                    Err(error) => {
                        eprintln!("airlock mcp: cannot read stdin: {error}");
                        break;
                    }
                };
                match frame {
                    Frame::TooLong { len } => connection.send(Message::error(
                        None,
                        ErrorObject::invalid_request(format!(
                            "Invalid Request: a message of {len} bytes is longer than the limit of {max_line_bytes} bytes"
                        )),
                    )),
                    Frame::Line(line) => match Message::from_line(&line) {
                        Err(error) => connection.send(Message::Error(error)),
                        Ok(message) => connection.handle(message),
                    },
                }
            }
            connection.close().await;
            drop(connection);
            match tokio::time::timeout(std::time::Duration::from_secs(5), writer_task).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) | Err(_) => Ok(()),
            }
        })
        .await
}

/// The session once `initialize` succeeded.
struct Ready {
    session: Session,
    hello: ClientHello,
    /// The turn calls run in, and how many turns there were (an `abort` interrupts a turn;
    /// the next call starts a new one).
    turn: RefCell<(u64, Arc<ApprovalTurn>)>,
}

impl Ready {
    fn turn(&self) -> Arc<ApprovalTurn> {
        let mut turn = self.turn.borrow_mut();
        if turn.1.is_interrupted() {
            turn.0 += 1;
            turn.1 = self.session.start_turn(format!("mcp-turn-{}", turn.0));
        }
        turn.1.clone()
    }
}

struct Connection {
    sink: MessageSink,
    pending: PendingRequests,
    parts: Option<SessionParts>,
    ready: Option<Rc<Ready>>,
    approvals_task: Option<JoinHandle<()>>,
    running: crate::running::RunningCalls,
    calls: Rc<RefCell<HashMap<RequestId, JoinHandle<()>>>>,
    next_call: u64,
}

impl Connection {
    fn new(sink: MessageSink, parts: SessionParts) -> Self {
        Self {
            sink,
            pending: PendingRequests::new(),
            parts: Some(parts),
            ready: None,
            approvals_task: None,
            running: Rc::default(),
            calls: Rc::default(),
            next_call: 0,
        }
    }

    fn send(&self, message: Message) {
        let _ = self.sink.send(message);
    }

    fn handle(&mut self, message: Message) {
        match message {
            Message::Request(request) => self.request(request),
            // Only cancellation matters; `notifications/initialized`, client progress, roots
            // changes... are accepted and ignored.
            Message::Notification(notification) => {
                if notification.method == "notifications/cancelled" {
                    self.cancel(notification.params.as_ref());
                }
            }
            reply @ (Message::Response(_) | Message::Error(_)) => {
                if !self.pending.resolve_message(&reply) {
                    eprintln!("airlock mcp: ignored an answer to no pending request");
                }
            }
        }
    }

    /// `notifications/cancelled {requestId}`: drops that call (no response is sent).
    fn cancel(&self, params: Option<&Value>) {
        let id = params
            .and_then(|params| params.get("requestId"))
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        if let Some(id) = id
            && let Some(call) = self.calls.borrow_mut().remove(&id)
        {
            call.abort();
        }
    }

    fn request(&mut self, request: Request) {
        let Request { id, method, params } = request;
        let answer = match method.as_str() {
            "initialize" => self.initialize(params.as_ref()),
            "ping" => Ok(json!({})),
            _ if self.ready.is_none() => Err(ErrorObject::invalid_request(
                "Not initialized: send `initialize` first",
            )),
            "tools/list" => Ok(crate::tools::list()),
            "tools/call" => match self.start_call(id.clone(), params) {
                Ok(()) => return,
                Err(error) => Err(error),
            },
            other => Err(ErrorObject::method_not_found(other)),
        };
        self.send(match answer {
            Ok(result) => Message::response(id, result),
            Err(error) => Message::error(Some(id), error),
        });
    }

    fn initialize(&mut self, params: Option<&Value>) -> Result<Value, ErrorObject> {
        let hello = crate::lifecycle::read_hello(params).map_err(ErrorObject::invalid_params)?;
        let Some(parts) = self.parts.take() else {
            return Err(ErrorObject::invalid_request(
                "Invalid Request: already initialized (one session per connection)",
            ));
        };
        let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
        let session = Session::new(
            parts.options,
            parts.approval_config,
            parts.exec_policy,
            hello.form_elicitation.then_some(events_tx),
        );
        for warning in session.warnings() {
            eprintln!("airlock mcp: warning: {warning}");
        }
        if hello.form_elicitation {
            let asker = Asker {
                approvals: Arc::downgrade(session.approvals()),
                sink: self.sink.clone(),
                pending: self.pending.clone(),
                protocol_version: hello.protocol_version.clone(),
                calls: self.running.clone(),
            };
            self.approvals_task = Some(tokio::task::spawn_local(crate::elicit::serve_approvals(
                asker, events_rx,
            )));
        }
        let result = crate::lifecycle::initialize_result(&hello);
        let turn = session.start_turn("mcp-turn-1");
        self.ready = Some(Rc::new(Ready {
            session,
            hello,
            turn: RefCell::new((1, turn)),
        }));
        Ok(result)
    }

    fn start_call(&mut self, id: RequestId, params: Option<Value>) -> Result<(), ErrorObject> {
        let params = params.unwrap_or_else(|| json!({}));
        let name = params.get("name").and_then(Value::as_str).ok_or_else(|| {
            ErrorObject::invalid_params("invalid params: missing string field `name`")
        })?;
        let call = crate::tools::parse_call(name, params.get("arguments").cloned())
            .map_err(ErrorObject::invalid_params)?;
        if self.calls.borrow().contains_key(&id) {
            return Err(ErrorObject::invalid_request(format!(
                "Invalid Request: a call with id {id} is still running"
            )));
        }
        let Some(ready) = self.ready.clone() else {
            return Err(ErrorObject::invalid_request(
                "Not initialized: send `initialize` first",
            ));
        };
        self.next_call += 1;
        let call_id = format!("mcp-call-{}", self.next_call);
        let token = params.pointer("/_meta/progressToken").cloned();
        let sink = self.sink.clone();
        let calls = self.calls.clone();
        let (asking, asking_rx) = tokio::sync::watch::channel(false);
        let justification = match &call {
            ToolCall::Shell(args) => args.justification.clone(),
            ToolCall::ApplyPatch(_) => None,
        };
        self.running.borrow_mut().insert(
            call_id.clone(),
            crate::running::CallInfo {
                justification,
                asking,
            },
        );
        let running = self.running.clone();
        let request_id = id.clone();
        let task = tokio::task::spawn_local(async move {
            // Forgotten when the task ends or is dropped (cancelled).
            let _forget = Forget(running, call_id.clone());
            let output = crate::progress::with_progress(
                run_tool(&ready, call, call_id, asking_rx),
                token,
                &sink,
            )
            .await;
            calls.borrow_mut().remove(&request_id);
            let _ = sink.send(Message::response(request_id, output.into_result()));
        });
        self.calls.borrow_mut().insert(id, task);
        Ok(())
    }

    /// End of input: withdraw server requests, stop every call (killing its process), end
    /// the session.
    async fn close(&mut self) {
        self.pending.close();
        let calls: Vec<_> = self
            .calls
            .borrow_mut()
            .drain()
            .map(|(_, call)| call)
            .collect();
        for call in calls {
            call.abort();
            let _ = call.await;
        }
        if let Some(ready) = self.ready.take() {
            ready.session.approvals().end_turn();
        }
        if let Some(task) = self.approvals_task.take() {
            let _ = task.await;
        }
    }
}

/// Removes a call from the running calls when its task ends.
struct Forget(crate::running::RunningCalls, String);

impl Drop for Forget {
    fn drop(&mut self) {
        self.0.borrow_mut().remove(&self.1);
    }
}

/// Runs one checked call in the connection's session.
async fn run_tool(
    ready: &Ready,
    call: ToolCall,
    call_id: String,
    asking: tokio::sync::watch::Receiver<bool>,
) -> ToolOutput {
    let turn = ready.turn();
    let session = &ready.session;
    let mut output = match call {
        ToolCall::Shell(args) => {
            let shell = ShellCall {
                call_id,
                command: args.command.into_argv(),
                cwd: args.workdir,
                sandbox_permissions: match args.sandbox_permissions {
                    SandboxArg::UseDefault => SandboxPermissions::UseDefault,
                    SandboxArg::RequireEscalated => SandboxPermissions::RequireEscalated,
                },
                justification: args.justification,
                prefix_rule: None,
            };
            let run = session.shell_tool(&turn, shell);
            let outcome = match args.timeout_ms {
                None => run.await,
                Some(ms) => {
                    let budget = std::time::Duration::from_millis(ms);
                    match crate::running::with_budget(run, budget, asking).await {
                        Some(outcome) => outcome,
                        None => {
                            return ToolOutput::refused(
                                format!(
                                    "the call did not finish within timeout_ms = {ms} (time spent waiting for approval not counted) and was stopped (its process was killed)"
                                ),
                                None,
                            );
                        }
                    }
                }
            };
            if let airlock_core::ShellToolOutcome::Command(command) = &outcome
                && let Some(error) = &command.audit_error
            {
                eprintln!("airlock mcp: warning: {error}");
            }
            crate::result::shell_output(outcome)
        }
        ToolCall::ApplyPatch(args) => {
            let outcome = session
                .apply_patch(
                    &turn,
                    PatchCall {
                        call_id,
                        patch: args.input,
                        workdir: None,
                    },
                )
                .await;
            if let Some(error) = &outcome.audit_error {
                eprintln!("airlock mcp: warning: {error}");
            }
            crate::result::patch_output(outcome.result, &outcome.record.trace)
        }
    };
    if !ready.hello.form_elicitation
        && let Some(reason) = &mut output.reason
        && reason.contains(NO_REVIEWER_AVAILABLE)
    {
        reason.push_str(&format!(
            " ({} did not declare the `elicitation` capability, so Airlock cannot ask the user; configure a \
             [hooks] permission_request hook or [auto_review], or use a client that supports elicitation)",
            ready.hello.client_name
        ));
    }
    output
}
