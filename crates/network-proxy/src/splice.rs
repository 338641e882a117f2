//! Copying a tunnel's bytes without bringing them into the proxy (issue 14 benchmark:
//! throughput ≥ 0.8× direct). On Linux each direction moves data socket → pipe → socket
//! with `splice(2)`: the kernel hands pages along instead of copying them through a
//! user-space buffer, which halves the proxy's memory traffic and its system time on a
//! bulk download. Elsewhere [`tokio::io::copy_bidirectional_with_sizes`] with large
//! buffers does the same job with two copies per byte.

use std::io;

use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::net::UnixStream;

/// The buffers of the portable copy (bytes per direction).
pub(crate) const COPY_BUFFER: usize = 256 * 1024;
/// The pipe capacity asked for (bytes); the kernel's limit (`/proc/sys/fs/pipe-max-size`,
/// 1 MiB by default) or an exhausted per-user pipe budget may leave it smaller, which
/// only means more system calls.
#[cfg(target_os = "linux")]
const PIPE_CAPACITY: usize = 1024 * 1024;

/// A socket one side of a tunnel is made of.
#[derive(Clone, Copy)]
pub(crate) enum Endpoint<'a> {
    /// A TCP connection (the sandboxed client's own socket, or the origin).
    Tcp(&'a TcpStream),
    /// A client speaking over the proxy's Unix socket itself.
    Unix(&'a UnixStream),
}

#[cfg(target_os = "linux")]
impl<'a> Endpoint<'a> {
    async fn ready(self, interest: Interest) -> io::Result<()> {
        match self {
            Self::Tcp(stream) => stream.ready(interest).await.map(drop),
            Self::Unix(stream) => stream.ready(interest).await.map(drop),
        }
    }

    /// Runs `f` on the socket; a `WouldBlock` from it clears the readiness it used.
    fn try_io<R>(self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        match self {
            Self::Tcp(stream) => stream.try_io(interest, f),
            Self::Unix(stream) => stream.try_io(interest, f),
        }
    }

    fn fd(self) -> std::os::fd::BorrowedFd<'a> {
        use std::os::fd::AsFd;
        match self {
            Self::Tcp(stream) => stream.as_fd(),
            Self::Unix(stream) => stream.as_fd(),
        }
    }
}

/// Copies both ways between `client` and `upstream` until both directions reached end of
/// file (each end shuts the other side's writing half down, as
/// `copy_bidirectional` does) or either failed.
pub(crate) async fn bidirectional(client: Endpoint<'_>, upstream: &TcpStream) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let upstream = Endpoint::Tcp(upstream);
        tokio::try_join!(pump(client, upstream), pump(upstream, client))?;
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (client, upstream);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// One direction: `from` → pipe → `to`, one pipe's worth at a time. The pipe is always
/// empty before the next read, so a `WouldBlock` on the reading side means "no data" and
/// one on the writing side "socket buffer full" — never "pipe full" or "pipe empty",
/// which would clear the wrong socket's readiness.
#[cfg(target_os = "linux")]
async fn pump(from: Endpoint<'_>, to: Endpoint<'_>) -> io::Result<()> {
    use rustix::pipe::{PipeFlags, SpliceFlags, fcntl_getpipe_size, fcntl_setpipe_size};
    let (pipe_out, pipe_in) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
    let _ = fcntl_setpipe_size(&pipe_in, PIPE_CAPACITY);
    let chunk = fcntl_getpipe_size(&pipe_in).unwrap_or(64 * 1024).max(4096);
    let flags = SpliceFlags::NONBLOCK | SpliceFlags::MOVE;
    loop {
        from.ready(Interest::READABLE).await?;
        let read = from.try_io(Interest::READABLE, || {
            rustix::pipe::splice(from.fd(), None, &pipe_in, None, chunk, flags).map_err(Into::into)
        });
        let mut left = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => return Err(error),
        };
        while left > 0 {
            to.ready(Interest::WRITABLE).await?;
            let written = to.try_io(Interest::WRITABLE, || {
                rustix::pipe::splice(&pipe_out, None, to.fd(), None, left, flags)
                    .map_err(Into::into)
            });
            match written {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => left -= n,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(error) => return Err(error),
            }
        }
    }
    // End of file: pass it on (the other direction may still be running).
    match rustix::net::shutdown(to.fd(), rustix::net::Shutdown::Write) {
        Ok(()) | Err(rustix::io::Errno::NOTCONN) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A connected pair of TCP streams on loopback.
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (connected, accepted) = tokio::join!(TcpStream::connect(address), listener.accept());
        (connected.unwrap(), accepted.unwrap().0)
    }

    #[tokio::test]
    async fn moves_every_byte_both_ways_and_passes_end_of_file_on() {
        let (mut client, proxy_client) = pair().await;
        let (proxy_upstream, mut origin) = pair().await;
        let tunnel = tokio::spawn(async move {
            bidirectional(Endpoint::Tcp(&proxy_client), &proxy_upstream).await
        });
        let download: Vec<u8> = (0..5 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
        let expected = download.clone();
        let origin_side = tokio::spawn(async move {
            let mut request = [0u8; 5];
            origin.read_exact(&mut request).await.unwrap();
            origin.write_all(&download).await.unwrap();
            origin.shutdown().await.unwrap();
            let mut rest = Vec::new();
            origin.read_to_end(&mut rest).await.unwrap();
            (request, rest)
        });
        client.write_all(b"hello").await.unwrap();
        let mut received = Vec::new();
        client.read_to_end(&mut received).await.unwrap();
        assert!(received == expected, "{} bytes received", received.len());
        client.write_all(b" after").await.unwrap();
        client.shutdown().await.unwrap();
        let (request, rest) = origin_side.await.unwrap();
        assert_eq!(&request, b"hello");
        assert_eq!(rest, b" after");
        tunnel.await.unwrap().unwrap();
    }
}
