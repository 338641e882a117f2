//! The listeners (spec 09 §Transport): stdio and Unix sockets carry one JSON message per line;
//! WebSocket one message per text frame, after the bearer-token check of the upgrade request.

use std::path::PathBuf;
use std::sync::Arc;

use airlock_jsonrpc::DEFAULT_MAX_LINE_BYTES;
use airlock_jsonrpc::Frame;
use airlock_jsonrpc::LineReader;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::WireStyle;
use airlock_jsonrpc::spawn_writer;
use airlock_sandbox::SandboxManager;
use futures_util::SinkExt;
use futures_util::StreamExt;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::handshake::server::ErrorResponse;
use tokio_tungstenite::tungstenite::handshake::server::Request as WsRequest;
use tokio_tungstenite::tungstenite::handshake::server::Response as WsResponse;
use tokio_tungstenite::tungstenite::http::StatusCode;

use crate::connection::Connection;
use crate::listen::Listen;
use crate::listen::ListenError;
use crate::listen::TokenDigest;

/// What the server enforces with.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// The server's own sandbox manager.
    pub manager: SandboxManager,
    /// The `airlock` executable providing `airlock linux-sandbox` (the server binary itself).
    pub linux_helper: Option<PathBuf>,
    /// The bearer token WebSocket clients must present (required off loopback).
    pub token: Option<TokenDigest>,
}

/// Serves `listen` until stdin closes (stdio) or forever (sockets).
///
/// # Errors
/// [`ListenError`] before anything listens (token rules, bind failure as
/// [`ListenError::Form`]-like I/O error), or the I/O error of the listener.
#[allow(clippy::result_large_err)] // the upgrade callback's type is tungstenite's
pub async fn serve(listen: Listen, options: ServerOptions) -> Result<(), ServeError> {
    listen.check_token(options.token.as_ref())?;
    let options = Arc::new(options);
    match listen {
        Listen::Stdio => {
            serve_lines(tokio::io::stdin(), tokio::io::stdout(), options).await;
            Ok(())
        }
        Listen::Unix(path) => {
            if path.exists() {
                return Err(ServeError::Bind(format!(
                    "{} already exists; remove the stale socket first (it is never deleted automatically)",
                    path.display()
                )));
            }
            // Created 0600 from the start (umask 0177 around the bind): no other user can
            // connect in between, and no chmod by path follows that a symlink swapped in at
            // that moment could redirect (red-team F13).
            let previous = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
            let bound = tokio::net::UnixListener::bind(&path);
            rustix::process::umask(previous);
            let listener =
                bound.map_err(|e| ServeError::Bind(format!("{}: {e}", path.display())))?;
            eprintln!("airlock exec-server listening on unix:{}", path.display());
            loop {
                let (stream, _) = listener.accept().await.map_err(ServeError::Io)?;
                let options = Arc::clone(&options);
                tokio::spawn(async move {
                    let (read, write) = stream.into_split();
                    serve_lines(read, write, options).await;
                });
            }
        }
        Listen::WebSocket(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| ServeError::Bind(format!("{addr}: {e}")))?;
            let local = listener.local_addr().map_err(ServeError::Io)?;
            eprintln!("airlock exec-server listening on ws://{local}");
            loop {
                let (stream, _) = listener.accept().await.map_err(ServeError::Io)?;
                let options = Arc::clone(&options);
                tokio::spawn(async move {
                    let token = options.token.clone();
                    let check = move |request: &WsRequest, response: WsResponse| {
                        authorize(token.as_ref(), request).map(|()| response)
                    };
                    let Ok(socket) = tokio_tungstenite::accept_hdr_async(stream, check).await
                    else {
                        return;
                    };
                    serve_websocket(socket, options).await;
                });
            }
        }
    }
}

/// Why the server could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A `--listen` / token rule.
    #[error(transparent)]
    Listen(#[from] ListenError),
    /// Could not bind.
    #[error("cannot listen on {0}")]
    Bind(String),
    /// The listener failed.
    #[error("exec-server listener failed: {0}")]
    Io(std::io::Error),
}

/// The upgrade request's check: with a token configured, `Authorization: Bearer TOKEN` must
/// match (constant-time digest comparison); anything else is a 401 before any method runs.
// The error type is fixed by tungstenite's handshake `Callback`; it is built once per refusal.
#[allow(clippy::result_large_err)]
fn authorize(token: Option<&TokenDigest>, request: &WsRequest) -> Result<(), ErrorResponse> {
    let Some(token) = token else {
        return Ok(());
    };
    let presented = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if token.matches(presented) {
        return Ok(());
    }
    let mut response = ErrorResponse::new(Some("missing or wrong bearer token".to_owned()));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    Err(response)
}

async fn serve_lines<R, W>(read: R, write: W, options: Arc<ServerOptions>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sink, mut writer) = spawn_writer(write, WireStyle::default());
    let connection = Connection::new(options, sink);
    let mut reader = LineReader::new(read, DEFAULT_MAX_LINE_BYTES);
    while let Ok(Some(frame)) = reader.next_frame().await {
        connection.handle_frame(frame);
    }
    connection.shutdown();
    drop(connection);
    // Let the answers already queued go out; requests still waiting hold the sink.
    if tokio::time::timeout(std::time::Duration::from_secs(2), &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
}

async fn serve_websocket<S>(
    socket: tokio_tungstenite::WebSocketStream<S>,
    options: Arc<ServerOptions>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut write, mut read) = socket.split();
    let (sink, mut outgoing) = MessageSink::channel();
    let mut writer = tokio::spawn(async move {
        while let Some(message) = outgoing.recv().await {
            let text = message.to_value(false).to_string();
            if write.send(WsMessage::text(text)).await.is_err() {
                break;
            }
        }
    });
    let connection = Connection::new(options, sink);
    while let Some(Ok(frame)) = read.next().await {
        match frame {
            WsMessage::Text(text) => connection.handle_frame(Frame::Line(text.as_bytes().to_vec())),
            WsMessage::Binary(bytes) => connection.handle_frame(Frame::Line(bytes.to_vec())),
            WsMessage::Close(_) => break,
            _ => {}
        }
    }
    connection.shutdown();
    drop(connection);
    // Let the answers already queued go out; requests still waiting hold the sink.
    if tokio::time::timeout(std::time::Duration::from_secs(2), &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
}
