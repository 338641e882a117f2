//! One client connection (spec 09 §Methods): `initialize` first, then each request in its own
//! task (so a long `process/read` never blocks the others); closing the connection terminates
//! its processes.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use airlock_core::remote::protocol::EnvironmentInfo;
use airlock_core::remote::protocol::InitializeParams;
use airlock_core::remote::protocol::InitializeResponse;
use airlock_core::remote::protocol::ProcessReadParams;
use airlock_core::remote::protocol::ProcessStartParams;
use airlock_core::remote::protocol::ProcessStartResponse;
use airlock_core::remote::protocol::ProcessTerminateParams;
use airlock_core::remote::protocol::ProcessTerminateResponse;
use airlock_core::remote::protocol::ProcessWriteParams;
use airlock_core::remote::protocol::ProcessWriteResponse;
use airlock_core::remote::protocol::ShellInfo;
use airlock_core::remote::protocol::WirePath;
use airlock_core::remote::protocol::WriteStatus;
use airlock_core::remote::protocol::method;
use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Frame;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::Request;
use airlock_jsonrpc::RequestId;
use airlock_jsonrpc::parse_params;
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use crate::fs;
use crate::process::Managed;
use crate::server::ServerOptions;

/// The state of one connection.
#[derive(Debug)]
pub(crate) struct Connection {
    options: Arc<ServerOptions>,
    sink: MessageSink,
    initialized: AtomicBool,
    processes: Mutex<Processes>,
}

/// The processes of a connection, and whether it has closed. One lock for both: a
/// `process/start` still in flight when the connection drops (sandbox set-up, a slow spawn)
/// registers after [`Connection::shutdown`] ran, sees `closed` under the same lock and kills
/// what it started, so no process outlives its connection.
#[derive(Debug, Default)]
struct Processes {
    by_id: HashMap<String, Arc<Managed>>,
    closed: bool,
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(value).map_err(|e| ErrorObject::internal(e.to_string()))
}

impl Connection {
    pub(crate) fn new(options: Arc<ServerOptions>, sink: MessageSink) -> Arc<Self> {
        Arc::new(Self {
            options,
            sink,
            initialized: AtomicBool::new(false),
            processes: Mutex::new(Processes::default()),
        })
    }

    /// Handles one incoming frame; malformed input is answered and the connection goes on.
    pub(crate) fn handle_frame(self: &Arc<Self>, frame: Frame) {
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len } => {
                self.sink.send(Message::error(
                    None,
                    ErrorObject::invalid_request(format!(
                        "Invalid Request: message of {len} bytes exceeds the limit of {} bytes",
                        airlock_jsonrpc::DEFAULT_MAX_LINE_BYTES
                    )),
                ));
                return;
            }
        };
        match Message::from_line(&line) {
            Err(error) => {
                self.sink.send(Message::Error(error));
            }
            Ok(Message::Request(request)) => self.handle_request(request),
            Ok(Message::Notification(notification)) => {
                if notification.method != method::INITIALIZED {
                    // Codex answers stray notifications with an error carrying id -1.
                    self.sink.send(Message::error(
                        Some(RequestId::Integer(-1)),
                        ErrorObject::method_not_found(&notification.method),
                    ));
                }
            }
            // This server sends no requests, so answers are ignored.
            Ok(Message::Response(_) | Message::Error(_)) => {}
        }
    }

    fn handle_request(self: &Arc<Self>, request: Request) {
        let Request { id, method, params } = request;
        if method == method::INITIALIZE {
            let result = self.initialize(params);
            self.answer(id, result);
            return;
        }
        if !self.initialized.load(Ordering::SeqCst) {
            self.answer(
                id,
                Err(ErrorObject::invalid_request(format!(
                    "{method}: call `initialize` first"
                ))),
            );
            return;
        }
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let result = this.dispatch(&method, params).await;
            this.answer(id, result);
        });
    }

    fn answer(&self, id: RequestId, result: Result<Value, ErrorObject>) {
        self.sink.send(match result {
            Ok(value) => Message::response(id, value),
            Err(error) => Message::error(Some(id), error),
        });
    }

    fn initialize(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let _params: InitializeParams = parse_params(params)?;
        if self.initialized.swap(true, Ordering::SeqCst) {
            return Err(ErrorObject::invalid_request(
                "initialize: already initialized",
            ));
        }
        let shell_path = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".to_owned());
        let shell_name = shell_path.rsplit('/').next().unwrap_or("sh").to_owned();
        let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
        let capabilities = [("sandboxedFileOperations", true), ("pty", cfg!(unix))]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        to_value(&InitializeResponse {
            session_id: format!("exec-{}-{}", std::process::id(), next_session()),
            environment_info: EnvironmentInfo {
                shell: ShellInfo {
                    name: shell_name,
                    path: shell_path,
                },
                cwd: WirePath(cwd),
                platform_os: std::env::consts::OS.to_owned(),
                capabilities,
            },
        })
    }

    async fn dispatch(&self, name: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let options = &self.options;
        match name {
            method::PROCESS_START => self.start(parse_params(params)?),
            method::PROCESS_READ => {
                let p: ProcessReadParams = parse_params(params)?;
                let process = self.process(&p.process_id)?;
                let wait = Duration::from_millis(p.wait_ms.unwrap_or(0));
                to_value(
                    &process
                        .read(p.after_seq.unwrap_or(0), p.max_bytes, wait)
                        .await,
                )
            }
            method::PROCESS_WRITE => {
                let p: ProcessWriteParams = parse_params(params)?;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(p.chunk.as_bytes())
                    .map_err(|e| {
                        ErrorObject::invalid_params(format!("invalid params: chunk: {e}"))
                    })?;
                let status = match self.process(&p.process_id) {
                    Ok(process) => process.write(&bytes).await,
                    Err(_) => WriteStatus::UnknownProcess,
                };
                to_value(&ProcessWriteResponse { status })
            }
            method::PROCESS_TERMINATE => {
                let p: ProcessTerminateParams = parse_params(params)?;
                let running = self.process(&p.process_id).is_ok_and(|p| p.terminate());
                to_value(&ProcessTerminateResponse { running })
            }
            method::FS_READ_FILE => fs::read_file(options, parse_params(params)?).await,
            method::FS_WRITE_FILE => fs::write_file(options, parse_params(params)?).await,
            method::FS_CREATE_DIRECTORY => {
                fs::create_directory(options, parse_params(params)?).await
            }
            method::FS_GET_METADATA => fs::get_metadata(options, parse_params(params)?).await,
            method::FS_READ_DIRECTORY => fs::read_directory(options, parse_params(params)?).await,
            method::FS_REMOVE => fs::remove(options, parse_params(params)?).await,
            method::FS_COPY => fs::copy(options, parse_params(params)?).await,
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    fn process(&self, id: &str) -> Result<Arc<Managed>, ErrorObject> {
        self.lock()
            .by_id
            .get(id)
            .cloned()
            .ok_or_else(|| ErrorObject::invalid_request(format!("unknown process id {id}")))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Processes> {
        self.processes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn start(&self, p: ProcessStartParams) -> Result<Value, ErrorObject> {
        if p.argv.is_empty() {
            return Err(ErrorObject::invalid_params(
                "invalid params: argv: must not be empty",
            ));
        }
        if p.process_id.is_empty() {
            return Err(ErrorObject::invalid_params(
                "invalid params: processId: must not be empty",
            ));
        }
        if self.lock().closed {
            return Err(closed_error());
        }
        let cwd = p.cwd.0;
        let resolved = p
            .sandbox
            .as_ref()
            .map(|context| crate::sandbox::resolve(&self.options, context, &cwd))
            .transpose()?;
        let launch = crate::sandbox::launch(&self.options, p.argv, &cwd, p.env, resolved.as_ref())?;
        let mut processes = self.lock();
        if processes.closed {
            // Closed during the set-up: nothing is started.
            return Err(closed_error());
        }
        if processes.by_id.contains_key(&p.process_id) {
            return Err(ErrorObject::invalid_request(format!(
                "process id {} is already in use on this connection",
                p.process_id
            )));
        }
        let managed = Managed::spawn(
            p.process_id.clone(),
            &launch,
            p.arg0.as_deref(),
            p.pipe_stdin,
            p.tty,
            self.sink.clone(),
        )?;
        processes.by_id.insert(p.process_id.clone(), managed);
        to_value(&ProcessStartResponse {
            process_id: p.process_id,
            sandbox_type: launch.sandbox,
        })
    }

    /// The connection closed: kill what it started, and refuse what is still starting (see
    /// [`Processes`]).
    pub(crate) fn shutdown(&self) {
        let mut processes = self.lock();
        processes.closed = true;
        for process in processes.by_id.values() {
            process.terminate();
        }
    }
}

fn closed_error() -> ErrorObject {
    ErrorObject::invalid_request("process/start: the connection closed; nothing was started")
}

fn next_session() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::SeqCst)
}
