//! Asking the index daemon ([`super::daemon`]) from a one-shot launch. Fail closed: any
//! error or doubt (no daemon, a socket file not ours, a peer that is not this user in
//! this mount namespace, a malformed or late answer) means "scan yourself", which gives
//! the same outcome as without the daemon.

use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::peer::{own_socket, private_dir, trusted_peer};
use super::wire::{MAX_ANSWER, Query, decode_answer, encode_query};
use crate::nested_scan::{ScanOptions, ScanOutcome};

/// How long one query may take, connection included; a daemon busy with a first walk
/// of a big tree answers later launches.
pub const QUERY_BUDGET: Duration = Duration::from_millis(50);

/// The socket of the daemon that serves launches whose scan cache is `cache_dir`
/// (`$AIRLOCK_HOME/cache/nested-repos` -> `$AIRLOCK_HOME/run/nested-index.sock`): the
/// same Airlock home, judged usable the same way.
#[must_use]
pub fn socket_for(cache_dir: &Path) -> Option<PathBuf> {
    if !cache_dir.ends_with("cache/nested-repos") {
        return None;
    }
    let home = cache_dir.parent()?.parent()?;
    Some(home.join("run").join("nested-index.sock"))
}

/// What asking gave.
#[derive(Debug)]
pub enum Asked {
    /// The daemon's outcome.
    Answer(ScanOutcome),
    /// No daemon listens there (one may be started).
    NoDaemon,
    /// Something is off: scan yourself, start nothing.
    Failed,
}

fn connect(socket: &Path) -> Result<UnixStream, Asked> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let addr = SocketAddrUnix::new(socket).map_err(|_| Asked::Failed)?;
    let fd: OwnedFd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|_| Asked::Failed)?;
    match rustix::net::connect(&fd, &addr) {
        Ok(()) => {}
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::CONNREFUSED) => {
            return Err(Asked::NoDaemon);
        }
        Err(_) => return Err(Asked::Failed), // EAGAIN: backlog full, a busy daemon
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(false).map_err(|_| Asked::Failed)?;
    Ok(stream)
}

fn remaining(deadline: Instant) -> Option<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

fn read_exact_by(stream: &mut UnixStream, buf: &mut [u8], deadline: Instant) -> Option<()> {
    let mut at = 0;
    while at < buf.len() {
        stream.set_read_timeout(Some(remaining(deadline)?)).ok()?;
        match stream.read(&mut buf[at..]) {
            Ok(0) => return None,
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(())
}

/// Asks the daemon at `socket` for `root`'s outcome within [`QUERY_BUDGET`]. Inside a
/// [`Batch`], the connection of an earlier query to the same socket is used again (its
/// peer was checked when it was made).
#[must_use]
pub fn ask(socket: &Path, root: &Path, options: &ScanOptions) -> Asked {
    let deadline = Instant::now() + QUERY_BUDGET;
    let query = Query {
        root: root.to_path_buf(),
        skip: options.skip.clone(),
    };
    let Some(frame) = encode_query(&query) else {
        return Asked::Failed;
    };
    if let Some(mut stream) = Batch::take(socket) {
        // A daemon that ended the connection meanwhile (it exited, or it answers one
        // query per connection) is asked again on a new one.
        if let Some(outcome) = exchange(&mut stream, &frame, deadline) {
            Batch::keep(socket, stream);
            return Asked::Answer(outcome);
        }
    }
    let mut stream = match connect_trusted(socket) {
        Ok(stream) => stream,
        Err(asked) => return asked,
    };
    match exchange(&mut stream, &frame, deadline) {
        Some(outcome) => {
            Batch::keep(socket, stream);
            Asked::Answer(outcome)
        }
        None => Asked::Failed,
    }
}

/// A connection to the daemon at `socket` whose peer is this user in this mount
/// namespace, made through a socket file that is this user's and private (checked
/// before and after connecting, so a file swapped in between is noticed).
fn connect_trusted(socket: &Path) -> Result<UnixStream, Asked> {
    let Some(run) = socket.parent() else {
        return Err(Asked::Failed);
    };
    match std::fs::symlink_metadata(run) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Asked::NoDaemon),
        Err(_) => return Err(Asked::Failed),
        Ok(_) if !private_dir(run) => return Err(Asked::Failed),
        Ok(_) => {}
    }
    let before = match std::fs::symlink_metadata(socket) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Asked::NoDaemon),
        Err(_) => return Err(Asked::Failed),
        Ok(_) => own_socket(socket).ok_or(Asked::Failed)?,
    };
    let stream = connect(socket)?;
    if !trusted_peer(&stream) || own_socket(socket) != Some(before) {
        return Err(Asked::Failed);
    }
    Ok(stream)
}

/// Sends one query frame and reads its answer by `deadline`; `None` on any error, a
/// late or malformed answer, or a daemon that could not answer.
fn exchange(stream: &mut UnixStream, frame: &[u8], deadline: Instant) -> Option<ScanOutcome> {
    stream.set_write_timeout(Some(remaining(deadline)?)).ok()?;
    stream.write_all(frame).ok()?;
    let mut len = [0u8; 4];
    read_exact_by(stream, &mut len, deadline)?;
    let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
    if len > MAX_ANSWER {
        return None;
    }
    let mut body = vec![0u8; len];
    read_exact_by(stream, &mut body, deadline)?;
    decode_answer(&body).flatten()
}

thread_local! {
    /// The open batch's connection (`None` inside a batch before its first answer).
    static BATCH: std::cell::RefCell<Option<Option<(PathBuf, UnixStream)>>> =
        const { std::cell::RefCell::new(None) };
}

/// While alive, this thread's queries to one daemon share a connection (a launch asks
/// about each of its writable roots in turn: one connection, peer check and daemon
/// thread instead of one per root). Dropping it hangs up, so the daemon's connection
/// slot is free as soon as the launch's plan is made. Nested batches join the outer one.
#[must_use = "the batch ends when this guard is dropped"]
pub struct Batch {
    outer: bool,
}

impl Batch {
    /// Opens a batch on this thread (or joins the one open).
    pub fn begin() -> Self {
        let outer = BATCH.with(|b| {
            let mut b = b.borrow_mut();
            let outer = b.is_none();
            if outer {
                *b = Some(None);
            }
            outer
        });
        Self { outer }
    }

    fn take(socket: &Path) -> Option<UnixStream> {
        BATCH.with(|b| {
            let mut b = b.borrow_mut();
            let open = b.as_mut()?;
            match open.take() {
                Some((path, stream)) if path == socket => Some(stream),
                _ => None,
            }
        })
    }

    fn keep(socket: &Path, stream: UnixStream) {
        BATCH.with(|b| {
            if let Some(open) = b.borrow_mut().as_mut() {
                *open = Some((socket.to_path_buf(), stream));
            }
        });
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if self.outer {
            BATCH.with(|b| *b.borrow_mut() = None);
        }
    }
}

/// Whether a trusted daemon is listening at `socket` (connects and hangs up).
#[must_use]
pub fn ping(socket: &Path) -> bool {
    own_socket(socket).is_some() && connect(socket).is_ok_and(|stream| trusted_peer(&stream))
}

/// Starts a daemon for `socket` with the program `exe`, detached (its own session, no
/// standard streams); errors ignored (the launch scans itself anyway).
pub fn spawn_daemon(exe: &Path, socket: &Path) {
    use std::process::{Command, Stdio};
    let _ = Command::new(exe)
        .arg(super::daemon::DAEMON_SUBCOMMAND)
        .arg(socket)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}
