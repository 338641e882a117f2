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

/// Asks the daemon at `socket` for `root`'s outcome within [`QUERY_BUDGET`].
#[must_use]
pub fn ask(socket: &Path, root: &Path, options: &ScanOptions) -> Asked {
    let deadline = Instant::now() + QUERY_BUDGET;
    let Some(run) = socket.parent() else {
        return Asked::Failed;
    };
    if !run.exists() {
        return Asked::NoDaemon;
    }
    if !private_dir(run) {
        return Asked::Failed;
    }
    let before = match std::fs::symlink_metadata(socket) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Asked::NoDaemon,
        Err(_) => return Asked::Failed,
        Ok(_) => match own_socket(socket) {
            Some(id) => id,
            None => return Asked::Failed,
        },
    };
    let mut stream = match connect(socket) {
        Ok(stream) => stream,
        Err(asked) => return asked,
    };
    if !trusted_peer(&stream) || own_socket(socket) != Some(before) {
        return Asked::Failed;
    }
    let query = Query {
        root: root.to_path_buf(),
        skip: options.skip.clone(),
    };
    let Some(frame) = encode_query(&query) else {
        return Asked::Failed;
    };
    let Some(left) = remaining(deadline) else {
        return Asked::Failed;
    };
    if stream.set_write_timeout(Some(left)).is_err() || stream.write_all(&frame).is_err() {
        return Asked::Failed;
    }
    let mut len = [0u8; 4];
    if read_exact_by(&mut stream, &mut len, deadline).is_none() {
        return Asked::Failed;
    }
    let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
    if len > MAX_ANSWER {
        return Asked::Failed;
    }
    let mut body = vec![0u8; len];
    if read_exact_by(&mut stream, &mut body, deadline).is_none() {
        return Asked::Failed;
    }
    match decode_answer(&body) {
        Some(Some(outcome)) => Asked::Answer(outcome),
        _ => Asked::Failed,
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
