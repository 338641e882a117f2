//! One client connection: handshake, dispatch, teardown.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use airlock_app_server_protocol::CommandExecParams;
use airlock_app_server_protocol::EmptyResponse;
use airlock_app_server_protocol::InitializeParams;
use airlock_app_server_protocol::InitializeResponse;
use airlock_app_server_protocol::PolicyExplainParams;
use airlock_app_server_protocol::Thread;
use airlock_app_server_protocol::ThreadIdParams;
use airlock_app_server_protocol::ThreadStartParams;
use airlock_app_server_protocol::ThreadStartResponse;
use airlock_app_server_protocol::ThreadStartedNotification;
use airlock_app_server_protocol::ToolApplyPatchParams;
use airlock_app_server_protocol::ToolShellParams;
use airlock_app_server_protocol::TurnInterruptParams;
use airlock_app_server_protocol::TurnNotification;
use airlock_app_server_protocol::TurnStartResponse;
use airlock_app_server_protocol::WarningNotification;
use airlock_app_server_protocol::methods;
use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Frame;
use airlock_jsonrpc::LineReader;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::PendingRequests;
use airlock_jsonrpc::Request;
use airlock_jsonrpc::SERVER_OVERLOADED;
use airlock_jsonrpc::parse_params;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::AsyncRead;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::backend::Backend;
use crate::backend::ThreadContext;
use crate::bridge::Bridge;
use crate::threads::ThreadState;

/// Requests of one connection running at once; one more gets -32001 `Server overloaded; retry
/// later.` (Codex's backpressure answer).
pub const MAX_IN_FLIGHT: usize = 1024;

/// The cap on one incoming line: 16 MiB (a large patch fits; a runaway client is refused
/// without being buffered).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

struct Shared {
    backend: Arc<dyn Backend>,
    sink: MessageSink,
    pending: PendingRequests,
    threads: Mutex<HashMap<String, Arc<ThreadState>>>,
    connection: u64,
    next_thread: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(value)
        .map_err(|e| ErrorObject::internal(format!("cannot encode the result: {e}")))
}

impl Shared {
    fn thread(&self, id: &str) -> Result<Arc<ThreadState>, ErrorObject> {
        lock(&self.threads).get(id).cloned().ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "invalid params: threadId: unknown thread `{id}`; start one with thread/start"
            ))
        })
    }

    fn notify<T: Serialize>(&self, method: &str, params: &T) {
        self.sink.send(Message::notification(
            method,
            serde_json::to_value(params).ok(),
        ));
    }

    fn start_thread(&self, mut params: ThreadStartParams) -> Result<Value, ErrorObject> {
        let id = format!(
            "serve-{}-{}-{}",
            std::process::id(),
            self.connection,
            self.next_thread.fetch_add(1, Ordering::Relaxed)
        );
        let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
        let setup = self
            .backend
            .start_thread(&id, &params, events_tx)
            .map_err(|e| {
                ErrorObject::invalid_params(format!("invalid params: thread/start: {e}"))
            })?;
        params.cwd = Some(setup.cwd.clone());
        let thread = Arc::new(ThreadState::new(
            id.clone(),
            ThreadContext {
                thread_id: id.clone(),
                params,
            },
            setup.session,
        ));
        tokio::spawn(
            Bridge {
                thread_id: id.clone(),
                approvals: Arc::downgrade(thread.session.approvals()),
                sink: self.sink.clone(),
                pending: self.pending.clone(),
                outstanding: Arc::clone(&thread.outstanding),
            }
            .run(events_rx),
        );
        lock(&self.threads).insert(id.clone(), Arc::clone(&thread));
        let response = ThreadStartResponse {
            thread: Thread { id: id.clone() },
            approval_policy: setup.approval_policy,
            permission_profile: setup.permission_profile,
            cwd: setup.cwd,
        };
        self.notify(
            methods::THREAD_STARTED,
            &ThreadStartedNotification {
                thread: Thread { id: id.clone() },
            },
        );
        for message in setup.warnings {
            self.notify(
                methods::WARNING,
                &WarningNotification {
                    thread_id: Some(id.clone()),
                    message,
                },
            );
        }
        to_value(&response)
    }

    /// Handles the requests that answer at once and change connection state (in order).
    fn handle_now(&self, request: &Request) -> Option<Result<Value, ErrorObject>> {
        let params = request.params.clone();
        Some(match request.method.as_str() {
            methods::INITIALIZE => Err(ErrorObject::invalid_request("Already initialized")),
            methods::THREAD_START => parse(params).and_then(|p| self.start_thread(p)),
            methods::THREAD_END => parse::<ThreadIdParams>(params).and_then(|p| {
                let thread = self.thread(&p.thread_id)?;
                thread.end();
                lock(&self.threads).remove(&p.thread_id);
                to_value(&EmptyResponse {})
            }),
            methods::TURN_START => parse::<ThreadIdParams>(params).and_then(|p| {
                let thread = self.thread(&p.thread_id)?;
                let turn = thread.start_turn(&self.sink);
                self.notify(
                    methods::TURN_STARTED,
                    &TurnNotification {
                        thread_id: thread.id.clone(),
                        turn: turn.clone(),
                    },
                );
                to_value(&TurnStartResponse { turn })
            }),
            methods::TURN_INTERRUPT => parse::<TurnInterruptParams>(params).and_then(|p| {
                self.thread(&p.thread_id)?.interrupt(&p.turn_id)?;
                to_value(&EmptyResponse {})
            }),
            _ => return None,
        })
    }

    /// Handles the requests that take time (run concurrently).
    async fn handle_later(self: Arc<Self>, request: Request) -> Result<Value, ErrorObject> {
        let params = request.params;
        match request.method.as_str() {
            methods::TOOL_SHELL => {
                let p: ToolShellParams = parse(params)?;
                let thread = self.thread(&p.thread_id)?;
                to_value(&crate::shell_call::run(&self.sink, thread, p).await?)
            }
            methods::TOOL_APPLY_PATCH => {
                let p: ToolApplyPatchParams = parse(params)?;
                let thread = self.thread(&p.thread_id)?;
                to_value(&crate::patch_call::run(&self.sink, thread, p).await?)
            }
            methods::POLICY_EXPLAIN => {
                let p: PolicyExplainParams = parse(params)?;
                if p.command.is_empty() {
                    return Err(ErrorObject::invalid_params(
                        "invalid params: command: must not be empty",
                    ));
                }
                let thread = self.thread(&p.thread_id)?;
                self.backend
                    .explain(&thread.context, &p)
                    .map_err(|e| ErrorObject::invalid_params(format!("policy/explain: {e}")))
            }
            methods::INSTRUCTIONS_RENDER => {
                let p: ThreadIdParams = parse(params)?;
                let thread = self.thread(&p.thread_id)?;
                let rendered = self
                    .backend
                    .render_instructions(&thread.context)
                    .map_err(ErrorObject::internal)?;
                to_value(&rendered)
            }
            methods::COMMAND_EXEC => {
                let p: CommandExecParams = parse(params)?;
                if p.command.is_empty() {
                    return Err(ErrorObject::invalid_request("command must not be empty"));
                }
                let result = self
                    .backend
                    .command_exec(p)
                    .await
                    .map_err(ErrorObject::invalid_request)?;
                to_value(&result)
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

fn parse<T: DeserializeOwned>(params: Option<Value>) -> Result<T, ErrorObject> {
    parse_params(params)
}

/// Serves one connection until `reader` ends (or fails), writing through `sink`. Then tears
/// down: every pending server request is withdrawn, every thread's turn interrupted, every
/// running call dropped (which kills its processes), and this returns once all are gone.
pub async fn serve_connection<R: AsyncRead + Unpin>(
    reader: R,
    sink: MessageSink,
    backend: Arc<dyn Backend>,
) {
    let shared = Arc::new(Shared {
        backend,
        sink: sink.clone(),
        pending: PendingRequests::new(),
        threads: Mutex::default(),
        connection: NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
        next_thread: AtomicU64::new(1),
    });
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let mut tasks = JoinSet::new();
    let mut lines = LineReader::new(reader, MAX_LINE_BYTES);
    let mut initialized = false;
    loop {
        // Reap finished calls so the set does not grow with the connection's history.
        while tasks.try_join_next().is_some() {}
        let frame = match lines.next_frame().await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(error) => {
                tracing::info!("connection {}: read failed: {error}", shared.connection);
                break;
            }
        };
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len } => {
                sink.send(Message::error(
                    None,
                    ErrorObject::invalid_request(format!(
                        "Invalid Request: message of {len} bytes exceeds the limit of {MAX_LINE_BYTES} bytes"
                    )),
                ));
                continue;
            }
        };
        let message = match Message::from_line(&line) {
            Ok(message) => message,
            Err(error) => {
                sink.send(Message::Error(error));
                continue;
            }
        };
        let request = match message {
            Message::Request(request) => request,
            Message::Notification(_) => continue, // `initialized` and anything else: nothing to do.
            response @ (Message::Response(_) | Message::Error(_)) => {
                if !shared.pending.resolve_message(&response) {
                    tracing::warn!(
                        "connection {}: answer to no pending request ignored",
                        shared.connection
                    );
                }
                continue;
            }
        };
        if !initialized {
            let answer = if request.method == methods::INITIALIZE {
                parse::<InitializeParams>(request.params.clone()).and_then(|p| {
                    tracing::info!("client {} {}", p.client_info.name, p.client_info.version);
                    initialized = true;
                    to_value(&InitializeResponse {
                        user_agent: format!("airlock/{}", env!("CARGO_PKG_VERSION")),
                        airlock_home: shared.backend.airlock_home(),
                        platform_family: std::env::consts::FAMILY.to_owned(),
                        platform_os: std::env::consts::OS.to_owned(),
                    })
                })
            } else {
                Err(ErrorObject::invalid_request("Not initialized"))
            };
            reply(&sink, request.id, answer);
            continue;
        }
        if let Some(answer) = shared.handle_now(&request) {
            reply(&sink, request.id, answer);
            continue;
        }
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            sink.send(Message::error(
                Some(request.id),
                ErrorObject::new(SERVER_OVERLOADED, "Server overloaded; retry later."),
            ));
            continue;
        };
        let shared = Arc::clone(&shared);
        let sink = sink.clone();
        tasks.spawn(async move {
            let id = request.id.clone();
            let answer = shared.handle_later(request).await;
            reply(&sink, id, answer);
            drop(permit);
        });
    }
    // Teardown: nobody can answer any more. The calls still in flight are counted
    // before anything is withdrawn: an approval that is closed below resolves its call
    // at once, and counting afterwards made the number depend on that race.
    while tasks.try_join_next().is_some() {}
    let running = tasks.len();
    shared.pending.close();
    let threads: Vec<Arc<ThreadState>> = lock(&shared.threads).drain().map(|(_, t)| t).collect();
    for thread in &threads {
        thread.abort();
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    // One line on stderr (the server's log, spec 10): what the disconnect aborted.
    eprintln!(
        "airlock serve: connection {} closed: {} thread(s) ended, {running} call(s) aborted, {} pending request(s) left",
        shared.connection,
        threads.len(),
        shared.pending.len()
    );
}

fn reply(sink: &MessageSink, id: airlock_jsonrpc::RequestId, answer: Result<Value, ErrorObject>) {
    sink.send(match answer {
        Ok(result) => Message::response(id, result),
        Err(error) => Message::error(Some(id), error),
    });
}
