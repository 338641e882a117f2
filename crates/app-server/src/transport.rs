//! The transports: stdio, and a Unix socket (mode 0600) serving one connection per client.

use std::path::Path;
use std::sync::Arc;

use airlock_jsonrpc::WireStyle;
use airlock_jsonrpc::spawn_writer;

use crate::backend::Backend;
use crate::connection::serve_connection;

/// Codex's app-server omits `"jsonrpc":"2.0"` on the wire; so does Airlock.
const STYLE: WireStyle = WireStyle {
    with_version: false,
};

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Serves one connection on stdin / stdout until stdin ends; logs go to stderr.
///
/// # Errors
/// The runtime cannot start.
pub fn run_stdio(backend: Arc<dyn Backend>) -> std::io::Result<()> {
    runtime()?.block_on(async move {
        stop_on_signals()?;
        let (sink, writer) = match own_pipe(1, rustix::fs::OFlags::WRONLY)
            .and_then(|fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok())
        {
            Some(pipe) => spawn_writer(pipe, STYLE),
            None => spawn_writer(tokio::io::stdout(), STYLE),
        };
        // On a worker, not this thread: the calls it spawns then start on the worker that
        // read them, without waking another thread for each.
        let served = tokio::spawn(async move {
            match own_pipe(0, rustix::fs::OFlags::RDONLY)
                .and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok())
            {
                Some(pipe) => serve_connection(pipe, sink, backend).await,
                None => serve_connection(tokio::io::stdin(), sink, backend).await,
            }
        });
        let _ = served.await;
        // The sink's last clone is gone: the writer flushes what is queued and ends.
        let _ = writer.await;
        Ok(())
    })
}

/// When descriptor `fd` (stdin or stdout) is a pipe: a new open file description of that
/// pipe (through `/proc/self/fd`), non-blocking, for the runtime's event loop to read or
/// write directly. tokio's own stdin and stdout hand every read and write to a blocking
/// thread instead, two thread switches per call of the protocol. A new description, not
/// `fd` itself, is made non-blocking: `fd`'s description may be shared with the process
/// that started the server. `None` (use tokio's stdio) for anything else: a terminal, a
/// socket, a file, no `/proc`.
fn own_pipe(fd: i32, access: rustix::fs::OFlags) -> Option<std::os::fd::OwnedFd> {
    use rustix::fs::{FileType, Mode, OFlags};
    use std::os::fd::AsFd as _;
    let stat = match fd {
        0 => rustix::fs::fstat(std::io::stdin().as_fd()),
        _ => rustix::fs::fstat(std::io::stdout().as_fd()),
    }
    .ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Fifo {
        return None;
    }
    rustix::fs::open(
        format!("/proc/self/fd/{fd}").as_str(),
        access | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

/// Listens on the Unix socket `path` (created with mode 0600; an existing socket file is
/// replaced, any other file is refused) and serves each client on its own connection.
///
/// # Errors
/// The path holds something other than a socket, or binding fails.
pub fn run_unix(path: &Path, backend: Arc<dyn Backend>) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not a socket; pick another path",
                    path.display()
                ),
            ));
        }
        std::fs::remove_file(path)?;
    }
    runtime()?.block_on(async move {
        stop_on_signals()?;
        // Created 0600 from the start (umask 0177 around the bind), so no other user can
        // connect in between; peers are also checked by uid on accept.
        let previous = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
        let bound = tokio::net::UnixListener::bind(path);
        rustix::process::umask(previous);
        // No chmod by path afterwards: a symlink swapped in at that moment would have its
        // target's mode changed (red-team F13).
        let listener = bound?;
        let own_uid = rustix::process::getuid().as_raw();
        tracing::info!("listening on unix:{}", path.display());
        eprintln!("airlock serve: listening on unix:{}", path.display());
        loop {
            let (stream, _) = listener.accept().await?;
            match stream.peer_cred() {
                Ok(cred) if cred.uid() == own_uid => {}
                other => {
                    tracing::warn!("refused a connection from another user ({other:?})");
                    continue;
                }
            }
            let backend = Arc::clone(&backend);
            tokio::spawn(async move {
                let (read, write) = stream.into_split();
                let (sink, writer) = spawn_writer(write, STYLE);
                serve_connection(read, sink, backend).await;
                let _ = writer.await;
            });
        }
    })
}

/// Ends the server on `SIGTERM`, `SIGINT` or `SIGHUP` (exit status 128 + the signal, as a
/// shell reports a death by it) after killing every command it is running, sandbox and
/// all, even one whose sandbox is still being set up (`airlock_core::kill_all_launches`).
/// Without this the signal would end the server at once and leave that cleanup to
/// bubblewrap's `--die-with-parent`, which misses a sandbox mid set-up.
///
/// # Errors
/// A handler cannot be installed.
fn stop_on_signals() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        let (kind, name) = tokio::select! {
            _ = terminate.recv() => (SignalKind::terminate(), "SIGTERM"),
            _ = interrupt.recv() => (SignalKind::interrupt(), "SIGINT"),
            _ = hangup.recv() => (SignalKind::hangup(), "SIGHUP"),
        };
        #[cfg(target_os = "linux")]
        let killed = airlock_core::kill_all_launches();
        #[cfg(not(target_os = "linux"))]
        let killed = 0;
        tracing::info!("stopped by {name}: {killed} running command(s) killed");
        eprintln!("airlock serve: stopped by {name}: {killed} running command(s) killed");
        std::process::exit(128 + kind.as_raw_value());
    });
    Ok(())
}
