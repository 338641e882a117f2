//! Asking the index daemon ([`super::daemon`]) from a one-shot launch. Fail closed: any
//! error or doubt (no daemon, a socket file not ours, a peer that is not this user in
//! this mount namespace, a malformed or late answer) means "scan yourself", which gives
//! the same outcome as without the daemon.

use std::collections::VecDeque;
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
/// peer was checked when it was made), and the answer to a query [`prefetch`] sent on it
/// is read instead of asking again.
#[must_use]
pub fn ask(socket: &Path, root: &Path, options: &ScanOptions) -> Asked {
    let deadline = Instant::now() + QUERY_BUDGET;
    let Some(frame) = query_frame(root, options) else {
        return Asked::Failed;
    };
    if let Some(mut open) = Batch::take(socket) {
        // Answers come in the order the queries were sent: those of other prefetched
        // queries are read and set aside (their roots are asked again if they are asked).
        let mut answered = None;
        while let Some(sent) = open.sent.pop_front() {
            let Some(answer) = read_answer(&mut open.stream, deadline) else {
                answered = Some(None); // the connection failed: ask on a new one
                break;
            };
            if sent == frame {
                answered = Some(Some(answer));
                break;
            }
        }
        match answered {
            Some(Some(answer)) => {
                Batch::keep(socket, open);
                return answer.map_or(Asked::Failed, Asked::Answer);
            }
            Some(None) => {}
            // A daemon that ended the connection meanwhile (it exited, or it answers one
            // query per connection) is asked again on a new one.
            None => {
                if let Some(outcome) = exchange(&mut open.stream, &frame, deadline) {
                    Batch::keep(socket, open);
                    return Asked::Answer(outcome);
                }
            }
        }
    }
    let mut stream = match connect_trusted(socket) {
        Ok(stream) => stream,
        Err(asked) => return asked,
    };
    match exchange(&mut stream, &frame, deadline) {
        Some(outcome) => {
            Batch::keep(socket, Open::new(stream));
            Asked::Answer(outcome)
        }
        None => Asked::Failed,
    }
}

/// Sends the query for `root` on this thread's [`Batch`] connection to the daemon at
/// `socket` (made now if there is none) without waiting: the daemon works on it while
/// the launch goes on, and the [`ask`] for the same root and options reads the answer.
/// Does nothing outside a batch, or when no trusted daemon takes the connection (the
/// `ask` then finds out for itself).
pub fn prefetch(socket: &Path, root: &Path, options: &ScanOptions) {
    if !Batch::is_open() {
        return;
    }
    let Some(frame) = query_frame(root, options) else {
        return;
    };
    let mut open = match Batch::take(socket) {
        Some(open) => open,
        None => match connect_trusted(socket) {
            Ok(stream) => Open::new(stream),
            Err(_) => return,
        },
    };
    if open.sent.contains(&frame) {
        // Sent ahead already; its answer is still to be read.
        Batch::keep(socket, open);
        return;
    }
    let deadline = Instant::now() + QUERY_BUDGET;
    let sent = remaining(deadline)
        .and_then(|left| open.stream.set_write_timeout(Some(left)).ok())
        .and_then(|()| open.stream.write_all(&frame).ok());
    if sent.is_some() {
        open.sent.push_back(frame);
        Batch::keep(socket, open);
    }
}

fn query_frame(root: &Path, options: &ScanOptions) -> Option<Vec<u8>> {
    encode_query(&Query {
        root: root.to_path_buf(),
        skip: options.skip.clone(),
    })
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
    read_answer(stream, deadline)?
}

/// Reads one answer by `deadline`: `None` when the connection failed or the answer is
/// late or malformed, `Some(None)` when the daemon could not answer that query.
fn read_answer(stream: &mut UnixStream, deadline: Instant) -> Option<Option<ScanOutcome>> {
    let mut len = [0u8; 4];
    read_exact_by(stream, &mut len, deadline)?;
    let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
    if len > MAX_ANSWER {
        return None;
    }
    let mut body = vec![0u8; len];
    read_exact_by(stream, &mut body, deadline)?;
    decode_answer(&body)
}

/// A batch's connection: the socket it was made through, and the queries sent on it
/// whose answers are still to be read, in order.
struct Open {
    socket: PathBuf,
    stream: UnixStream,
    sent: VecDeque<Vec<u8>>,
}

impl Open {
    fn new(stream: UnixStream) -> Self {
        Self {
            socket: PathBuf::new(),
            stream,
            sent: VecDeque::new(),
        }
    }
}

thread_local! {
    /// The open batch's connection (`Some(None)` inside a batch before its first one).
    static BATCH: std::cell::RefCell<Option<Option<Open>>> =
        const { std::cell::RefCell::new(None) };
}

/// While alive, this thread's queries to one daemon share a connection (a launch asks
/// about each of its writable roots in turn: one connection, peer check and daemon
/// worker instead of one per root), and queries can be sent ahead ([`prefetch`]).
/// Dropping it hangs up, so the daemon's worker is free as soon as the launch's plan is
/// made. Nested batches join the outer one.
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

    fn is_open() -> bool {
        BATCH.with(|b| b.borrow().is_some())
    }

    fn take(socket: &Path) -> Option<Open> {
        BATCH.with(|b| {
            let mut b = b.borrow_mut();
            let open = b.as_mut()?;
            match open.take() {
                Some(conn) if conn.socket == socket => Some(conn),
                _ => None,
            }
        })
    }

    fn keep(socket: &Path, mut open: Open) {
        open.socket = socket.to_path_buf();
        BATCH.with(|b| {
            if let Some(slot) = b.borrow_mut().as_mut() {
                *slot = Some(open);
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
/// standard streams) and with no other descriptor of this process: a launch starts it
/// while descriptors meant for bubblewrap are inheritable (the status pipe, an early
/// bubblewrap's argument pipe and seccomp programs, see [`crate::early_bwrap`]); errors
/// ignored (the launch scans itself anyway).
pub fn spawn_daemon(exe: &Path, socket: &Path) {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let mut command = Command::new(exe);
    command
        .arg(super::daemon::DAEMON_SUBCOMMAND)
        .arg(socket)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: the hook only makes system calls (close_range, fcntl): async-signal-safe.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(|| crate::fds::keep_only_in_child(&[]));
    }
    let _ = command.spawn();
}
