//! The per-user index daemon behind one-shot launches (`airlock sandbox`, the
//! `airlock linux-sandbox` helper of `exec`): `airlock __nested-index SOCKET` keeps one
//! [`super::Index`] and answers queries on `$AIRLOCK_HOME/run/nested-index.sock`.
//!
//! - The run directory is created private (`0700`) and must be owned by this user and
//!   closed to others; the socket is bound under a temporary name, made `0600`, then
//!   renamed into place (a second daemon started at the same time replaces it, and the
//!   first one, seeing its socket file replaced, exits).
//! - Only peers running as this user in this mount namespace are answered
//!   ([`super::peer`]); anything else is closed unanswered. A query is read under a
//!   deadline and bounded ([`super::wire`]); a connection may carry several queries,
//!   answered in turn (a launch's writable roots); each of [`MAX_CLIENTS`] worker
//!   threads serves one connection at a time, so one slow or hostile client never holds
//!   up the others for more than it holds the index.
//! - It exits after [`IDLE_EXIT`] without a query, or when its socket file is removed
//!   or replaced. It never writes anything but its socket (and the disk cache, as any
//!   scan does, for roots the index does not cover), and removes the placeholders that
//!   launches left for it in `/tmp` and `$TMPDIR` once unused ([`super::keeper`]).

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::peer::{own_socket, private_dir, trusted_peer};
use super::wire::{MAX_QUERY, decode_query, encode_answer, read_frame, write_frame};
use crate::nested_scan::ScanOptions;
use crate::scan_cache::RECENT_CHANGE_MARGIN;

/// The hidden subcommand that runs the daemon (`airlock __nested-index SOCKET`).
pub const DAEMON_SUBCOMMAND: &str = "__nested-index";

/// The daemon exits after this long without a query.
pub const IDLE_EXIT: Duration = Duration::from_secs(15 * 60);

/// Most connections served at once (one worker thread each); more wait to be accepted,
/// and their clients scan themselves once their budget runs out.
pub const MAX_CLIENTS: usize = 16;

/// How long a connection may take to send its first query and receive its answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long after an answer the connection waits for the client's next query.
const NEXT_QUERY_WAIT: Duration = Duration::from_millis(250);

/// `airlock __nested-index SOCKET`: runs the daemon; returns the exit status (0 also when
/// another daemon already serves the socket).
pub fn run_daemon_subcommand(mut args: impl Iterator<Item = std::ffi::OsString>) -> i32 {
    let Some(socket) = args.next().map(PathBuf::from) else {
        eprintln!("usage: airlock {DAEMON_SUBCOMMAND} SOCKET");
        return 2;
    };
    // Detached from the launching terminal's session (its hang-up must not end us), and
    // holding none of the launcher's descriptors (a pipe a caller waits on to close).
    let _ = rustix::process::setsid();
    close_inherited();
    match serve(&socket) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!(
                "airlock: nested-repository index daemon: {}: {e}",
                socket.display()
            );
            1
        }
    }
}

#[allow(unsafe_code)]
fn close_inherited() {
    // SAFETY: called first thing in the daemon, before it opens any descriptor it keeps:
    // no descriptor above 2 belongs to anything in this process.
    unsafe {
        libc::syscall(libc::SYS_close_range, 3_u32, u32::MAX, 0_u32);
    }
}

fn serve(socket: &Path) -> std::io::Result<()> {
    let bad = |what: &str| std::io::Error::other(what.to_string());
    let run = socket.parent().ok_or_else(|| bad("no parent directory"))?;
    if !run.exists() {
        std::fs::DirBuilder::new().mode(0o700).create(run)?;
    }
    if !private_dir(run) {
        return Err(bad("the run directory is not private to this user"));
    }
    if super::client::ping(socket) {
        return Ok(()); // another daemon serves it
    }
    let temp = run.join(format!(".nested-index.{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let listener = UnixListener::bind(&temp)?;
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o600))?;
    std::fs::rename(&temp, socket)?;
    let mine = own_socket(socket).ok_or_else(|| bad("socket not in place"))?;
    super::enable_in_process();
    let seed = run
        .parent()
        .map(|home| home.join("cache").join("nested-repos"));
    // The workers wait in `accept` themselves (the kernel hands each connection to one of
    // them): a launch's query is answered without a thread started for it or a hand-over
    // between threads. Beyond MAX_CLIENTS at once, connections wait in the backlog until
    // their client's budget runs out (it then scans itself).
    listener.set_nonblocking(false)?;
    let listener = Arc::new(listener);
    let active = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(Mutex::new(Instant::now()));
    for _ in 0..MAX_CLIENTS {
        let (listener, count, stamp, seed) = (
            Arc::clone(&listener),
            Arc::clone(&active),
            Arc::clone(&last),
            seed.clone(),
        );
        std::thread::Builder::new()
            .name("nested-index".into())
            .spawn(move || serve_connections(&listener, &count, &stamp, seed.as_deref()))?;
    }
    loop {
        std::thread::sleep(Duration::from_secs(1));
        if own_socket(socket) != Some(mine) {
            super::keeper::sweep_all();
            return Ok(()); // removed or replaced
        }
        let idle = last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed();
        if idle > IDLE_EXIT && active.load(Ordering::SeqCst) == 0 {
            let _ = std::fs::remove_file(socket);
            super::keeper::sweep_all();
            return Ok(());
        }
    }
}

/// One worker: accepts connections and serves them, one at a time, until the daemon exits.
fn serve_connections(
    listener: &UnixListener,
    active: &AtomicUsize,
    last: &Mutex<Instant>,
    seed: Option<&Path>,
) {
    loop {
        let Ok((stream, _)) = listener.accept() else {
            // Out of descriptors or memory for a moment: try again a little later.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        active.fetch_add(1, Ordering::SeqCst);
        if handle(stream, seed.map(Path::to_path_buf)) {
            *last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        }
        active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serves one connection: its queries in turn, the first within [`CLIENT_TIMEOUT`],
/// each later one within [`NEXT_QUERY_WAIT`] of the previous answer (a launch asks about
/// its writable roots back to back, then hangs up). Whether a trusted peer's query was
/// answered.
fn handle(mut stream: UnixStream, seed: Option<PathBuf>) -> bool {
    if stream.set_nonblocking(false).is_err()
        || stream.set_read_timeout(Some(CLIENT_TIMEOUT)).is_err()
        || stream.set_write_timeout(Some(CLIENT_TIMEOUT)).is_err()
        || !trusted_peer(&stream)
    {
        return false;
    }
    let mut answered = false;
    while let Ok(body) = read_frame(&mut stream, MAX_QUERY) {
        let Some(query) = decode_query(&body) else {
            break;
        };
        let options = ScanOptions {
            skip: query.skip,
            cache_dir: seed.clone(),
            recent: RECENT_CHANGE_MARGIN,
        };
        let outcome = super::scan(&query.root, &options).ok();
        if write_frame(&mut stream, &encode_answer(outcome.as_ref())).is_err() {
            break;
        }
        answered = true;
        if stream.set_read_timeout(Some(NEXT_QUERY_WAIT)).is_err() {
            break;
        }
    }
    answered
}
