//! The proxy's only listener: a Unix socket (spec 12: no TCP listener on the host). Each
//! connection is sniffed — a first byte of 5 is SOCKS5, anything else HTTP/1.1 — so one
//! socket serves both; the in-sandbox bridge forwards both of its ports to it.

use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::net::UnixListener;
use tokio::net::UnixStream;

use crate::policy::NetworkPolicy;
use crate::policy::Protocol;
use crate::policy::Refusal;

/// A client connection: the sandboxed client's own TCP socket (handed over by the bridge),
/// or a Unix stream that speaks the protocol itself.
pub(crate) trait Conn: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {
    /// The socket, for splicing a tunnel.
    fn endpoint(&self) -> crate::splice::Endpoint<'_>;
}

impl Conn for TcpStream {
    fn endpoint(&self) -> crate::splice::Endpoint<'_> {
        crate::splice::Endpoint::Tcp(self)
    }
}

impl Conn for UnixStream {
    fn endpoint(&self) -> crate::splice::Endpoint<'_> {
        crate::splice::Endpoint::Unix(self)
    }
}

/// How long a client may take to send its first bytes.
const FIRST_BYTES_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one connection attempt to a checked address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Refusals kept for the launcher's report (oldest dropped first).
const MAX_EVENTS: usize = 200;

/// A refused request as recorded (spec 12: host, port, protocol, decision; never URLs,
/// paths or bodies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedRequest {
    /// The refusal.
    pub refusal: Refusal,
    /// The protocol label.
    pub protocol: &'static str,
}

/// State shared by every connection.
pub(crate) struct Shared {
    pub(crate) policy: NetworkPolicy,
    events: Mutex<Vec<BlockedRequest>>,
}

impl Shared {
    pub(crate) fn record(&self, refusal: &Refusal, protocol: Protocol) {
        tracing::info!(
            host = %refusal.host,
            port = refusal.port,
            protocol = protocol.label(),
            reason = refusal.reason.code(),
            "network request blocked"
        );
        if let Ok(mut events) = self.events.lock() {
            if events.len() >= MAX_EVENTS {
                events.remove(0);
            }
            events.push(BlockedRequest {
                refusal: refusal.clone(),
                protocol: protocol.label(),
            });
        }
    }

    /// Checks the request and connects to one of exactly the checked addresses.
    /// `Err(Some)` is a policy refusal (recorded), `Err(None)` a failed connection.
    pub(crate) async fn dial(
        &self,
        host: &str,
        port: u16,
        protocol: Protocol,
    ) -> Result<TcpStream, Option<Refusal>> {
        let addrs = match self.policy.check(host, port, protocol).await {
            Ok(addrs) => addrs,
            Err(refusal) => {
                self.record(&refusal, protocol);
                return Err(Some(refusal));
            }
        };
        for addr in addrs {
            if let Ok(Ok(stream)) =
                tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await
            {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
        }
        Err(None)
    }
}

/// A running proxy. Dropping it stops the proxy and removes nothing (the caller owns the
/// socket's directory).
pub struct ProxyHandle {
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ProxyHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyHandle").finish_non_exhaustive()
    }
}

impl ProxyHandle {
    /// The policy being served (live lists, held approvals).
    #[must_use]
    pub fn policy(&self) -> &NetworkPolicy {
        &self.shared.policy
    }

    /// Every request refused so far, oldest first.
    #[must_use]
    pub fn blocked(&self) -> Vec<BlockedRequest> {
        self.shared
            .events
            .lock()
            .map(|events| events.clone())
            .unwrap_or_default()
    }

    /// Stops accepting and ends open connections.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Binds `socket` (which must not exist; its directory should be private) and serves
/// `policy` on a thread of its own until the handle is stopped or dropped.
///
/// # Errors
/// Binding the socket or starting the runtime failed.
pub fn start(policy: NetworkPolicy, socket: &Path) -> std::io::Result<ProxyHandle> {
    let listener = std::os::unix::net::UnixListener::bind(socket)?;
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let shared = Arc::new(Shared {
        policy,
        events: Mutex::new(Vec::new()),
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("airlock-network-proxy".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = UnixListener::from_std(listener) else {
                    return;
                };
                let accept = async {
                    loop {
                        let Ok((client, _)) = listener.accept().await else {
                            continue;
                        };
                        let shared = Arc::clone(&serving);
                        tokio::spawn(async move { accept(client, &shared).await });
                    }
                };
                tokio::select! {
                    () = accept => {}
                    _ = stopped => {}
                }
            });
        })?;
    Ok(ProxyHandle {
        shared,
        stop: Some(stop),
        thread: Some(thread),
    })
}

/// What the first message on the proxy socket carried.
enum First {
    /// The bridge handed over the client's TCP socket (the proxy then talks to the client
    /// directly: one copy per byte instead of two).
    Socket(TcpStream),
    /// The first bytes of a client speaking over the Unix stream itself.
    Bytes(Vec<u8>),
}

async fn accept(unix: UnixStream, shared: &Shared) {
    match tokio::time::timeout(FIRST_BYTES_TIMEOUT, first_message(&unix)).await {
        Ok(Ok(First::Socket(tcp))) => {
            drop(unix);
            handle(tcp, Vec::new(), shared).await;
        }
        Ok(Ok(First::Bytes(first))) if !first.is_empty() => handle(unix, first, shared).await,
        _ => {}
    }
}

/// Reads the first message with its ancillary data: an `SCM_RIGHTS` descriptor that is a
/// connected stream socket is the client; anything else is ordinary bytes.
async fn first_message(unix: &UnixStream) -> std::io::Result<First> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    loop {
        unix.readable().await?;
        let received = unix.try_io(tokio::io::Interest::READABLE, || {
            let mut bytes = vec![0u8; 4096];
            let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let message = rustix::net::recvmsg(
                unix,
                &mut [std::io::IoSliceMut::new(&mut bytes)],
                &mut control,
                RecvFlags::CMSG_CLOEXEC,
            )
            .map_err(std::io::Error::from)?;
            bytes.truncate(message.bytes);
            let mut socket = None;
            for item in control.drain() {
                if let RecvAncillaryMessage::ScmRights(fds) = item {
                    for fd in fds {
                        socket.get_or_insert(fd);
                    }
                }
            }
            Ok((bytes, socket))
        });
        match received {
            Ok((_, Some(fd))) => {
                let tcp = std::net::TcpStream::from(fd);
                // Only a connected TCP socket is a client; any other descriptor is dropped.
                tcp.peer_addr()?;
                tcp.set_nonblocking(true)?;
                let tcp = TcpStream::from_std(tcp)?;
                let _ = tcp.set_nodelay(true);
                return Ok(First::Socket(tcp));
            }
            Ok((bytes, None)) => return Ok(First::Bytes(bytes)),
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(error) => return Err(error),
        }
    }
}

async fn handle<C: Conn>(mut client: C, mut first: Vec<u8>, shared: &Shared) {
    if first.is_empty() {
        first = vec![0u8; 4096];
        let read = tokio::time::timeout(FIRST_BYTES_TIMEOUT, client.read(&mut first)).await;
        let Ok(Ok(n)) = read else { return };
        if n == 0 {
            return;
        }
        first.truncate(n);
    }
    if first[0] == 0x05 {
        crate::socks5::serve(client, first, shared).await;
    } else {
        crate::http::serve(client, first, shared).await;
    }
}

/// Sends `rest` upstream, then copies both ways until both sides closed (or either
/// failed): spliced through pipes on Linux (see [`crate::splice`]), through user-space
/// buffers elsewhere.
pub(crate) async fn splice<C: Conn>(mut client: C, mut upstream: TcpStream, rest: Vec<u8>) {
    if !rest.is_empty() && upstream.write_all(&rest).await.is_err() {
        return;
    }
    if cfg!(target_os = "linux") {
        let _ = crate::splice::bidirectional(client.endpoint(), &upstream).await;
        return;
    }
    let _ = tokio::io::copy_bidirectional_with_sizes(
        &mut client,
        &mut upstream,
        crate::splice::COPY_BUFFER,
        crate::splice::COPY_BUFFER,
    )
    .await;
}
