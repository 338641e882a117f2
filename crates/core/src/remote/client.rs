//! The connection to one exec-server (spec 09 §Client side): connect lazily, `initialize`,
//! route answers to their requests and notifications to their process, bound every request in
//! time, and reconnect on the next call after a loss. A lost connection fails the calls that
//! were using it; nothing ever falls back to running locally.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Frame;
use airlock_jsonrpc::LineReader;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::RequestId;
use airlock_jsonrpc::WireStyle;
use futures_util::SinkExt;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::sync::oneshot;

use super::protocol::InitializeParams;
use super::protocol::InitializeResponse;
use super::protocol::method;
use super::subscription::QueueCounters;
use super::subscription::Subscriber;
use super::subscription::Subscription;
use super::subscription::route;

/// The default bound on one request (connect, start, terminate): 30 s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A remote environment (spec 09 §Client side `remote { url, token? }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEnvironment {
    /// `ws://HOST:PORT` or `unix:PATH`.
    pub url: String,
    /// The bearer token a WebSocket exec-server requires (sent as `Authorization: Bearer`).
    pub token: Option<String>,
    /// The bound on each request and on connecting.
    pub request_timeout: Duration,
}

/// Where an exec-server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// `ws://HOST:PORT[/path]`; `authority` is `HOST:PORT`.
    WebSocket {
        /// The URL as given.
        url: String,
        /// `HOST:PORT`.
        authority: String,
    },
    /// `unix:PATH` (absolute).
    Unix(PathBuf),
}

impl Endpoint {
    /// Parses an environment URL.
    ///
    /// # Errors
    /// A message naming the URL and the accepted forms.
    pub fn parse(url: &str) -> Result<Self, String> {
        if let Some(path) = url.strip_prefix("unix:") {
            let path = PathBuf::from(path.strip_prefix("//").unwrap_or(path));
            if !path.is_absolute() {
                return Err(format!(
                    "exec-server URL {url:?}: unix:PATH needs an absolute path"
                ));
            }
            return Ok(Self::Unix(path));
        }
        if let Some(rest) = url.strip_prefix("ws://") {
            let authority = rest.split('/').next().unwrap_or_default();
            if authority.is_empty() || !authority.contains(':') {
                return Err(format!("exec-server URL {url:?}: expected ws://HOST:PORT"));
            }
            return Ok(Self::WebSocket {
                url: url.to_owned(),
                authority: authority.to_owned(),
            });
        }
        Err(format!(
            "exec-server URL {url:?} is not supported; use ws://HOST:PORT or unix:/absolute/path"
        ))
    }
}

/// Why a remote call failed. Every variant means: the outcome on the executor is unknown or
/// the call was refused; the caller must not run the command anywhere else instead.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// Could not connect or initialize.
    #[error("cannot connect to exec-server {url}: {message}")]
    Connect {
        /// The environment URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// The connection closed while the call was in flight.
    #[error(
        "lost the connection to exec-server {url} during {what}; the command was not run locally instead"
    )]
    Lost {
        /// The environment URL.
        url: String,
        /// The request or process that was in flight.
        what: String,
    },
    /// No answer within the request timeout.
    #[error("exec-server {url} did not answer {method} within {timeout_ms} ms")]
    Timeout {
        /// The environment URL.
        url: String,
        /// The method.
        method: String,
        /// The bound.
        timeout_ms: u128,
    },
    /// The server answered with an error.
    #[error("exec-server {url} refused {method}: {} (code {})", error.message, error.code)]
    Server {
        /// The environment URL.
        url: String,
        /// The method.
        method: String,
        /// The error it sent.
        error: ErrorObject,
    },
}

type Waiter = oneshot::Sender<Result<Value, ErrorObject>>;

/// One live connection.
#[derive(Debug)]
pub struct Connection {
    url: String,
    sink: MessageSink,
    next_id: AtomicI64,
    closed: Arc<AtomicBool>,
    pending: Arc<Mutex<HashMap<RequestId, Waiter>>>,
    subscribers: Arc<Mutex<HashMap<String, Subscriber>>>,
}

impl Connection {
    /// Whether the peer has gone away.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst) || self.sink.is_closed()
    }

    /// Receives the notifications whose `params.processId` is `process_id`. Subscribe before
    /// `process/start` so nothing is missed. The subscription ends when the connection is
    /// lost; its queued output is bounded by [`MAX_QUEUED_OUTPUT`].
    pub fn subscribe(&self, process_id: &str) -> Subscription {
        let (tx, rx) = mpsc::unbounded_channel();
        let counters = Arc::new(QueueCounters::default());
        lock(&self.subscribers).insert(
            process_id.to_owned(),
            Subscriber {
                tx,
                counters: Arc::clone(&counters),
            },
        );
        if self.is_closed() {
            lock(&self.subscribers).remove(process_id);
        }
        Subscription { rx, counters }
    }

    /// Stops routing notifications of `process_id`.
    pub fn unsubscribe(&self, process_id: &str) {
        lock(&self.subscribers).remove(process_id);
    }

    /// Sends a request and waits at most `timeout` for its answer.
    ///
    /// # Errors
    /// [`RemoteError`]: lost, timed out, or the server's error.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RemoteError> {
        let id = RequestId::Integer(self.next_id.fetch_add(1, Ordering::SeqCst));
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        let lost = || RemoteError::Lost {
            url: self.url.clone(),
            what: method.to_owned(),
        };
        if self.is_closed()
            || !self
                .sink
                .send(Message::request(id.clone(), method, Some(params)))
        {
            lock(&self.pending).remove(&id);
            return Err(lost());
        }
        match tokio::time::timeout(timeout, rx).await {
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(RemoteError::Timeout {
                    url: self.url.clone(),
                    method: method.to_owned(),
                    timeout_ms: timeout.as_millis(),
                })
            }
            Ok(Err(_)) => Err(lost()),
            Ok(Ok(Err(error))) => Err(RemoteError::Server {
                url: self.url.clone(),
                method: method.to_owned(),
                error,
            }),
            Ok(Ok(Ok(value))) => Ok(value),
        }
    }

    fn dispatch(&self, message: Message) {
        match message {
            Message::Response(response) => {
                if let Some(waiter) = lock(&self.pending).remove(&response.id) {
                    let _ = waiter.send(Ok(response.result));
                }
            }
            Message::Error(error) => {
                if let Some(waiter) = error.id.and_then(|id| lock(&self.pending).remove(&id)) {
                    let _ = waiter.send(Err(error.error));
                }
            }
            Message::Notification(notification) => {
                let process_id = notification
                    .params
                    .as_ref()
                    .and_then(|p| p.get("processId"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if let Some(id) = process_id
                    && let Some(subscriber) = lock(&self.subscribers).get(&id)
                {
                    route(subscriber, notification);
                }
            }
            // The exec-server sends no requests to its client.
            Message::Request(_) => {}
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        // Dropping the waiters and subscribers wakes every in-flight call with "lost".
        lock(&self.pending).clear();
        lock(&self.subscribers).clear();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A client for one remote environment: one connection at a time, re-established by the first
/// call after a loss.
#[derive(Debug)]
pub struct ExecServerClient {
    environment: RemoteEnvironment,
    current: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

impl ExecServerClient {
    /// A client for `environment`; nothing is connected yet.
    #[must_use]
    pub fn new(environment: RemoteEnvironment) -> Self {
        Self {
            environment,
            current: tokio::sync::Mutex::new(None),
        }
    }

    /// The environment.
    #[must_use]
    pub const fn environment(&self) -> &RemoteEnvironment {
        &self.environment
    }

    /// The live connection, connecting (and initializing) when there is none or it was lost.
    ///
    /// # Errors
    /// [`RemoteError::Connect`] (bounded by the request timeout).
    pub async fn connection(&self) -> Result<Arc<Connection>, RemoteError> {
        let mut current = self.current.lock().await;
        if let Some(connection) = current.as_ref()
            && !connection.is_closed()
        {
            return Ok(Arc::clone(connection));
        }
        *current = None;
        let timeout = self.environment.request_timeout;
        let url = self.environment.url.clone();
        let connect_error = |message: String| RemoteError::Connect {
            url: url.clone(),
            message,
        };
        let connection = tokio::time::timeout(timeout, connect(&self.environment))
            .await
            .map_err(|_| connect_error(format!("no connection within {} ms", timeout.as_millis())))?
            .map_err(connect_error)?;
        let params = serde_json::to_value(InitializeParams {
            client_name: "airlock".to_owned(),
        })
        .unwrap_or(Value::Null);
        let answer = connection
            .request(method::INITIALIZE, params, timeout)
            .await?;
        serde_json::from_value::<InitializeResponse>(answer)
            .map_err(|e| connect_error(format!("bad initialize answer: {e}")))?;
        connection
            .sink
            .send(Message::notification(method::INITIALIZED, None));
        *current = Some(Arc::clone(&connection));
        Ok(connection)
    }
}

async fn connect(environment: &RemoteEnvironment) -> Result<Arc<Connection>, String> {
    let endpoint = Endpoint::parse(&environment.url)?;
    let (sink, mut rx) = MessageSink::channel();
    let connection = Arc::new(Connection {
        url: environment.url.clone(),
        sink,
        next_id: AtomicI64::new(1),
        closed: Arc::new(AtomicBool::new(false)),
        pending: Arc::default(),
        subscribers: Arc::default(),
    });
    let style = WireStyle::default();
    match endpoint {
        Endpoint::Unix(path) => {
            let stream = tokio::net::UnixStream::connect(&path)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let (read, mut write) = stream.into_split();
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                while let Some(message) = rx.recv().await {
                    let mut line = serde_json::to_vec(&message.to_value(style.with_version))
                        .unwrap_or_default();
                    line.push(b'\n');
                    if write.write_all(&line).await.is_err() {
                        break;
                    }
                }
            });
            let reader_side = Arc::clone(&connection);
            tokio::spawn(async move {
                let mut reader = LineReader::new(read, airlock_jsonrpc::DEFAULT_MAX_LINE_BYTES);
                while let Ok(Some(frame)) = reader.next_frame().await {
                    if let Frame::Line(line) = frame
                        && let Ok(message) = Message::from_line(&line)
                    {
                        reader_side.dispatch(message);
                    }
                }
                reader_side.close();
            });
        }
        Endpoint::WebSocket { url, authority } => {
            use tokio_tungstenite::tungstenite::Message as WsMessage;
            use tokio_tungstenite::tungstenite::client::IntoClientRequest;
            let tcp = tokio::net::TcpStream::connect(&authority)
                .await
                .map_err(|e| format!("{authority}: {e}"))?;
            let mut request = url
                .as_str()
                .into_client_request()
                .map_err(|e| format!("bad URL: {e}"))?;
            if let Some(token) = &environment.token {
                let value = format!("Bearer {token}").parse().map_err(|_| {
                    "the token contains characters not allowed in a header".to_owned()
                })?;
                request.headers_mut().insert("Authorization", value);
            }
            let (socket, _) = tokio_tungstenite::client_async(request, tcp)
                .await
                .map_err(|e| format!("WebSocket handshake failed: {e}"))?;
            let (mut write, mut read) = socket.split();
            tokio::spawn(async move {
                while let Some(message) = rx.recv().await {
                    let text = message.to_value(style.with_version).to_string();
                    if write.send(WsMessage::text(text)).await.is_err() {
                        break;
                    }
                }
                let _ = write.close().await;
            });
            let reader_side = Arc::clone(&connection);
            tokio::spawn(async move {
                while let Some(Ok(frame)) = read.next().await {
                    match frame {
                        WsMessage::Text(text) => {
                            if let Ok(message) = Message::from_line(text.as_bytes()) {
                                reader_side.dispatch(message);
                            }
                        }
                        WsMessage::Close(_) => break,
                        _ => {}
                    }
                }
                reader_side.close();
            });
        }
    }
    Ok(connection)
}

#[cfg(test)]
mod tests {
    use super::super::subscription::MAX_QUEUED_OUTPUT;
    use super::*;
    use airlock_jsonrpc::Notification;

    #[test]
    fn endpoints() {
        assert_eq!(
            Endpoint::parse("unix:/run/x.sock").unwrap(),
            Endpoint::Unix("/run/x.sock".into())
        );
        assert!(matches!(
            Endpoint::parse("ws://10.0.0.7:4500").unwrap(),
            Endpoint::WebSocket { authority, .. } if authority == "10.0.0.7:4500"
        ));
        assert!(Endpoint::parse("unix:rel").is_err());
        assert!(Endpoint::parse("ws://host").is_err());
        assert!(Endpoint::parse("wss://host:1").is_err());
    }

    fn notification(method: &str, params: Value) -> Message {
        Message::Notification(Notification {
            method: method.to_owned(),
            params: Some(params),
        })
    }

    /// A consumer that does not read while a process prints 64 MiB: the queue stays within
    /// its bound, the rest is counted per stream, and the exit and close events still arrive.
    #[tokio::test]
    async fn a_slow_consumer_bounds_the_queued_output_and_counts_the_rest() {
        let (sink, _rx) = MessageSink::channel();
        let connection = Connection {
            url: "unix:/test".into(),
            sink,
            next_id: AtomicI64::new(1),
            closed: Arc::default(),
            pending: Arc::default(),
            subscribers: Arc::default(),
        };
        let mut events = connection.subscribe("p1");
        let chunk = "A".repeat(1 << 20); // 1 MiB of base64 = 768 KiB of output
        for (seq, stream) in (1_u64..=64).zip(["stdout", "stderr"].into_iter().cycle()) {
            let params = serde_json::json!({
                "processId": "p1", "seq": seq, "stream": stream, "chunk": chunk,
            });
            connection.dispatch(notification(method::PROCESS_OUTPUT, params));
            assert!(events.counters.queued.load(Ordering::SeqCst) <= MAX_QUEUED_OUTPUT);
        }
        for closing in [method::PROCESS_EXITED, method::PROCESS_CLOSED] {
            let params = serde_json::json!({ "processId": "p1", "seq": 65, "exitCode": 0 });
            connection.dispatch(notification(closing, params));
        }
        let mut outputs = 0;
        let mut last = String::new();
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_secs(5), events.recv()).await
        {
            if event.method == method::PROCESS_OUTPUT {
                outputs += 1;
            }
            last.clone_from(&event.method);
            if last == method::PROCESS_CLOSED {
                break;
            }
        }
        assert_eq!(outputs, 8, "8 MiB of base64 queued");
        assert_eq!(last, method::PROCESS_CLOSED);
        let (stdout, stderr) = events.dropped();
        assert_eq!(stdout + stderr, 56 * (768 << 10));
        assert_eq!(stdout, 28 * (768 << 10));
        assert_eq!(events.counters.queued.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn an_unreachable_executor_is_a_connect_error() {
        let client = ExecServerClient::new(RemoteEnvironment {
            url: "unix:/nonexistent/airlock-exec.sock".into(),
            token: None,
            request_timeout: Duration::from_secs(5),
        });
        let error = client.connection().await.unwrap_err();
        assert!(matches!(error, RemoteError::Connect { .. }), "{error}");
    }
}
