//! A test client of `airlock exec-server` over its three transports (stdio, loopback
//! WebSocket, Unix socket): starts the server, sends requests, and collects notifications.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use futures_util::SinkExt;
use futures_util::StreamExt;
use serde_json::Value;
use serde_json::json;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncWriteExt;
use tokio::io::BufReader;
use tokio_tungstenite::tungstenite::Message as WsMessage;

pub mod setup;

/// How long any single wait in these tests may take before the test fails (not a speed
/// assertion: it only keeps a broken server from hanging the suite).
pub const BOUND: Duration = Duration::from_secs(60);

/// The transports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    WebSocket,
    Unix,
}

pub const ALL: [Transport; 3] = [Transport::Stdio, Transport::WebSocket, Transport::Unix];

type Ws = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

enum Wire {
    Lines {
        write: Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
        read: tokio::io::Lines<BufReader<Box<dyn tokio::io::AsyncRead + Unpin + Send>>>,
    },
    Ws(Box<Ws>),
}

/// One connection to a freshly started server.
pub struct Client {
    wire: Wire,
    server: tokio::process::Child,
    _socket_dir: Option<tempfile::TempDir>,
    next_id: i64,
    /// Messages received while waiting for something else.
    pub backlog: VecDeque<Value>,
}

pub fn airlock() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_airlock"))
}

fn server_command(home: &Path, listen: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(airlock());
    command
        .args(["exec-server", "--listen", listen])
        .env("AIRLOCK_HOME", home)
        .kill_on_drop(true);
    command
}

impl Client {
    /// Starts a server for `transport` (with `AIRLOCK_HOME=home`) and connects; does not
    /// initialize.
    pub async fn connect_raw(transport: Transport, home: &Path) -> Self {
        match transport {
            Transport::Stdio => {
                let mut server = server_command(home, "stdio")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                let write: Box<dyn tokio::io::AsyncWrite + Unpin + Send> =
                    Box::new(server.stdin.take().unwrap());
                let read: Box<dyn tokio::io::AsyncRead + Unpin + Send> =
                    Box::new(server.stdout.take().unwrap());
                Self::new(
                    Wire::Lines {
                        write,
                        read: BufReader::new(read).lines(),
                    },
                    server,
                    None,
                )
            }
            Transport::Unix => {
                let dir = tempfile::Builder::new()
                    .prefix("es-sock")
                    .tempdir_in("/tmp")
                    .unwrap();
                let path = dir.path().join("exec.sock");
                let server = server_command(home, &format!("unix:{}", path.display()))
                    .spawn()
                    .unwrap();
                let stream = tokio::time::timeout(BOUND, async {
                    loop {
                        if let Ok(stream) = tokio::net::UnixStream::connect(&path).await {
                            return stream;
                        }
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                })
                .await
                .expect("the unix socket never accepted");
                let (read, write) = stream.into_split();
                let read: Box<dyn tokio::io::AsyncRead + Unpin + Send> = Box::new(read);
                Self::new(
                    Wire::Lines {
                        write: Box::new(write),
                        read: BufReader::new(read).lines(),
                    },
                    server,
                    Some(dir),
                )
            }
            Transport::WebSocket => {
                let (server, addr) = start_ws_server(home, "ws://127.0.0.1:0", None).await;
                let socket = ws_connect(&addr, None).await.unwrap();
                Self::new(Wire::Ws(Box::new(socket)), server, None)
            }
        }
    }

    fn new(wire: Wire, server: tokio::process::Child, dir: Option<tempfile::TempDir>) -> Self {
        Self {
            wire,
            server,
            _socket_dir: dir,
            next_id: 1,
            backlog: VecDeque::new(),
        }
    }

    /// Starts, connects and initializes.
    pub async fn connect(transport: Transport, home: &Path) -> Self {
        let mut client = Self::connect_raw(transport, home).await;
        let init = client
            .request("initialize", json!({"clientName": "test"}))
            .await;
        assert!(init.get("result").is_some(), "{init}");
        client.send(json!({"method": "initialized"})).await;
        client
    }

    pub async fn send_text(&mut self, text: &str) {
        match &mut self.wire {
            Wire::Lines { write, .. } => {
                write.write_all(text.as_bytes()).await.unwrap();
                write.write_all(b"\n").await.unwrap();
                write.flush().await.unwrap();
            }
            Wire::Ws(ws) => ws.send(WsMessage::text(text.to_owned())).await.unwrap(),
        }
    }

    pub async fn send(&mut self, message: Value) {
        self.send_text(&message.to_string()).await;
    }

    /// The next message from the server.
    pub async fn recv(&mut self) -> Value {
        if let Some(message) = self.backlog.pop_front() {
            return message;
        }
        self.recv_wire()
            .await
            .expect("the server closed the connection")
    }

    async fn recv_wire(&mut self) -> Option<Value> {
        tokio::time::timeout(BOUND, async {
            match &mut self.wire {
                Wire::Lines { read, .. } => {
                    let line = read.next_line().await.unwrap()?;
                    Some(serde_json::from_str(&line).unwrap())
                }
                Wire::Ws(ws) => loop {
                    match ws.next().await? {
                        Ok(WsMessage::Text(text)) => {
                            return Some(serde_json::from_str(&text).unwrap());
                        }
                        Ok(WsMessage::Close(_)) | Err(_) => return None,
                        Ok(_) => {}
                    }
                },
            }
        })
        .await
        .expect("no message from the server in time")
    }

    /// Sends a request and returns its answer (notifications meanwhile go to the backlog).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        self.answer(id).await
    }

    /// Waits for the answer to request `id`.
    pub async fn answer(&mut self, id: i64) -> Value {
        loop {
            let message = self
                .recv_wire()
                .await
                .expect("the server closed the connection");
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    /// Collects the notifications of `process_id` up to its `process/closed`.
    pub async fn collect(&mut self, process_id: &str) -> Vec<Value> {
        let mut events = Vec::new();
        let mut pending: VecDeque<Value> = std::mem::take(&mut self.backlog);
        loop {
            let message = match pending.pop_front() {
                Some(message) => message,
                None => self
                    .recv_wire()
                    .await
                    .expect("the server closed the connection"),
            };
            if message["params"]["processId"] == json!(process_id) {
                let closed = message["method"] == "process/closed";
                events.push(message);
                if closed {
                    self.backlog.extend(pending);
                    return events;
                }
            } else {
                self.backlog.push_back(message);
            }
        }
    }

    /// The server's pid.
    pub fn server_pid(&self) -> u32 {
        self.server.id().unwrap()
    }

    /// Reads messages up to the `process/closed` of `process_id` without decoding the output
    /// notifications (for bulk output); returns the output bytes notified (base64 length)
    /// and the `process/exited` params. Other messages are dropped. Bounded by `bound`.
    pub async fn drain_raw(&mut self, process_id: &str, bound: Duration) -> (u64, Value) {
        let Wire::Lines { read, .. } = &mut self.wire else {
            panic!("drain_raw reads line transports only");
        };
        let quoted = format!("\"processId\":\"{process_id}\"");
        tokio::time::timeout(bound, async {
            let mut encoded = 0_u64;
            let mut exited = Value::Null;
            loop {
                let line = read.next_line().await.unwrap().expect("the server closed");
                if !line.contains(&quoted) {
                    continue;
                }
                if line.contains("\"process/output\"") {
                    encoded += line.len() as u64;
                } else if line.contains("\"process/exited\"") {
                    let value: Value = serde_json::from_str(&line).unwrap();
                    exited = value["params"].clone();
                } else if line.contains("\"process/closed\"") {
                    return (encoded, exited);
                }
            }
        })
        .await
        .expect("the output did not end in time")
    }

    /// Drops only the connection; the server keeps running (returned).
    pub fn drop_connection(self) -> tokio::process::Child {
        let Self { wire, server, .. } = self;
        drop(wire);
        server
    }

    /// Closes the connection and waits for the server to exit (stdio) or kills it.
    pub async fn close(mut self) {
        match &mut self.wire {
            Wire::Lines { write, .. } => {
                let _ = write.shutdown().await;
            }
            Wire::Ws(ws) => {
                let _ = ws.close(None).await;
            }
        }
        let _ = self.server.start_kill();
        let _ = self.server.wait().await;
    }
}

/// Starts a WebSocket server on `listen`; returns it and the address it printed.
pub async fn start_ws_server(
    home: &Path,
    listen: &str,
    token_file: Option<&Path>,
) -> (tokio::process::Child, String) {
    let mut command = server_command(home, listen);
    if let Some(file) = token_file {
        command.arg("--ws-token-file").arg(file);
    }
    let mut server = command.stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    let addr = tokio::time::timeout(BOUND, async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if let Some(addr) = line.strip_prefix("airlock exec-server listening on ws://") {
                return addr.to_owned();
            }
        }
        panic!("the server exited without listening");
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    (server, addr)
}

/// Connects to `ws://addr` with an optional bearer token.
pub async fn ws_connect(
    addr: &str,
    token: Option<&str>,
) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{addr}").into_client_request().unwrap();
    if let Some(token) = token {
        request
            .headers_mut()
            .insert("Authorization", format!("Bearer {token}").parse().unwrap());
    }
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio_tungstenite::client_async(request, tcp)
        .await
        .map(|(ws, _)| ws)
}

pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn unb64(text: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(text.as_str().unwrap())
        .unwrap()
}

/// The stdout (and stderr) of a process's collected events.
pub fn output_of(events: &[Value], stream: &str) -> String {
    let bytes: Vec<u8> = events
        .iter()
        .filter(|e| e["method"] == "process/output" && e["params"]["stream"] == stream)
        .flat_map(|e| unb64(&e["params"]["chunk"]))
        .collect();
    String::from_utf8(bytes).unwrap()
}

pub fn exited(events: &[Value]) -> &Value {
    &events
        .iter()
        .find(|e| e["method"] == "process/exited")
        .expect("no process/exited")["params"]
}

/// A multi-threaded runtime for one test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
