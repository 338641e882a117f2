//! The in-sandbox side of the managed network (spec 12 §Enforcement): `airlock net-bridge`.
//!
//! bubblewrap starts the bridge (the `airlock` binary bind-mounted read-only at
//! [`BRIDGE_EXE`]) as the first process of a network namespace that holds only loopback.
//! It listens on `127.0.0.1:<http>` and `127.0.0.1:<socks>` and forwards every connection
//! over the bind-mounted proxy Unix socket ([`PROXY_SOCKET`]), then starts the command
//! through `net-bridge --exec-confined`, which adds the [`NetworkSeccompMode::ProxyRouted`]
//! filter before `exec`: the command can open IP sockets (only loopback exists, so only
//! the bridge answers) but no `AF_UNIX` socket that could reach the proxy socket or any
//! host socket directly, and no netlink, packet or raw socket. A program that ignores
//! the proxy variables finds no route.
//!
//! With `unix_sockets` allow entries (`--unix-socket PATH`, each bind-mounted at its own
//! path) the command may also create `AF_UNIX` stream sockets, and every `connect` it
//! makes is performed by the bridge instead, for allowed sockets only (see
//! [`crate::unix_sockets`]; [`NetworkSeccompMode::ProxyRoutedUnixSockets`]).
//!
//! The bridge makes itself non-dumpable first: it runs without the command's filter, so a
//! command that could write its memory (`/proc/<pid>/mem`, same uid) would get its
//! `AF_UNIX` access.
//!
//! `airlock proxy-connect HOST PORT` (for `GIT_SSH_COMMAND`'s `ProxyCommand`) asks the
//! bridge's HTTP port for a `CONNECT` and splices stdin/stdout through it.

use std::ffi::OsString;
use std::io::Read;
use std::io::Write;
use std::net::Shutdown;
use std::net::TcpListener;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use crate::seccomp::NetworkSeccompMode;

pub use crate::proxy_env::{
    BRIDGE_EXE, HTTP_PROXY_ADDRESS_ENV, PROXY_CONNECT_SUBCOMMAND, proxy_env,
};

/// The hidden subcommand that runs the bridge.
pub const BRIDGE_SUBCOMMAND: &str = "net-bridge";
/// The proxy socket inside the sandbox (the host socket file, bound read-only).
pub const PROXY_SOCKET: &str = "/dev/.airlock-proxy.sock";
/// The socket's file name in its host directory.
pub const PROXY_SOCKET_NAME: &str = "proxy.sock";

/// Exit status when the bridge itself cannot start (nothing ran).
const SETUP_FAILURE: i32 = 125;

/// Runs `airlock net-bridge ARGS`: the bridge (`--socket PATH [--unix-socket PATH]...
/// -- COMMAND...`) or the confining stage (`--exec-confined [--notify-fd N] --
/// COMMAND...`). Returns the exit status.
pub fn run_bridge_subcommand(args: impl Iterator<Item = OsString>) -> i32 {
    let mut args = args;
    let mut socket: Option<PathBuf> = None;
    let mut confine = false;
    let mut unix_sockets: Vec<PathBuf> = Vec::new();
    let mut notify_fd: Option<i32> = None;
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--socket") => socket = args.next().map(PathBuf::from),
            Some("--exec-confined") => confine = true,
            Some("--unix-socket") => match args.next() {
                Some(path) => unix_sockets.push(PathBuf::from(path)),
                None => {
                    eprintln!("airlock net-bridge: --unix-socket needs a path (internal helper)");
                    return SETUP_FAILURE;
                }
            },
            Some("--notify-fd") => {
                match args.next().and_then(|fd| fd.to_str()?.parse::<i32>().ok()) {
                    Some(fd) if fd > 2 => notify_fd = Some(fd),
                    _ => {
                        eprintln!(
                            "airlock net-bridge: --notify-fd needs a descriptor number (internal helper)"
                        );
                        return SETUP_FAILURE;
                    }
                }
            }
            Some("--") => {
                command.extend(args.by_ref());
                break;
            }
            _ => {
                eprintln!("airlock net-bridge: unknown argument {arg:?} (internal helper)");
                return SETUP_FAILURE;
            }
        }
    }
    let Some((program, rest)) = command.split_first() else {
        eprintln!("airlock net-bridge: no command given after `--`");
        return SETUP_FAILURE;
    };
    if confine {
        if let Err(error) = confine_self(notify_fd) {
            eprintln!("airlock net-bridge: {error}");
            return SETUP_FAILURE;
        }
        let error = Command::new(program).args(rest).exec();
        eprintln!(
            "airlock: could not start {}: {error}",
            program.to_string_lossy()
        );
        return if error.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        };
    }
    let socket = socket.unwrap_or_else(|| PathBuf::from(PROXY_SOCKET));
    match bridge(&socket, &unix_sockets, &command) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("airlock net-bridge: could not set up the network bridge: {error}");
            SETUP_FAILURE
        }
    }
}

/// The confining stage: the command's filter, and with `notify_fd` (the bridge's end of a
/// socket pair) the `connect` notification filter, whose listener goes to the bridge.
fn confine_self(notify_fd: Option<i32>) -> Result<(), String> {
    let Some(fd) = notify_fd else {
        return crate::seccomp::install(NetworkSeccompMode::ProxyRouted)
            .map_err(|error| error.to_string());
    };
    let channel = crate::fds::adopt_inherited(fd)
        .map_err(|error| format!("--notify-fd {fd} is not an open descriptor: {error}"))?;
    crate::seccomp::install(NetworkSeccompMode::ProxyRoutedUnixSockets)
        .map_err(|error| error.to_string())?;
    let listener = crate::unix_sockets::install_notify_filter().map_err(|error| {
        format!("cannot hand the command's connect calls to the bridge (seccomp user notification, Linux 5.6+ needed for network.unix_sockets): {error}")
    })?;
    send_fd(&channel, &listener)
        .map_err(|error| format!("cannot hand the connect listener to the bridge: {error}"))?;
    Ok(())
}

fn send_fd(channel: &impl std::os::fd::AsFd, fd: &impl std::os::fd::AsFd) -> std::io::Result<()> {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [fd.as_fd()];
    control.push(SendAncillaryMessage::ScmRights(&fds));
    rustix::net::sendmsg(
        channel,
        &[std::io::IoSlice::new(b"\0")],
        &mut control,
        SendFlags::empty(),
    )?;
    Ok(())
}

/// Receives the descriptor [`send_fd`] sent; `None` when the sender closed first.
fn receive_fd(channel: &impl std::os::fd::AsFd) -> std::io::Result<Option<std::os::fd::OwnedFd>> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    let mut byte = [0u8; 1];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    rustix::net::recvmsg(
        channel,
        &mut [std::io::IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut received = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                received.get_or_insert(fd);
            }
        }
    }
    Ok(received)
}

fn bridge(socket: &Path, unix_sockets: &[PathBuf], command: &[OsString]) -> std::io::Result<i32> {
    // Before anything else: the command must not be able to write this process's memory.
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
    let allowlist = crate::unix_sockets::UnixSocketAllowlist::open(unix_sockets)
        .map_err(std::io::Error::other)?;
    let http = TcpListener::bind("127.0.0.1:0")?;
    let socks = TcpListener::bind("127.0.0.1:0")?;
    let http_addr = http.local_addr()?;
    let socks_addr = socks.local_addr()?;
    for listener in [http, socks] {
        let socket = socket.to_path_buf();
        std::thread::spawn(move || accept_loop(&listener, &socket));
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from(BRIDGE_EXE));
    let mut child = Command::new(&exe);
    child.arg(BRIDGE_SUBCOMMAND).arg("--exec-confined");
    let channel = if allowlist.is_empty() {
        None
    } else {
        let (ours, theirs) = UnixStream::pair()?;
        crate::fds::make_inheritable(&theirs)?;
        child.arg("--notify-fd").arg(theirs.as_raw_fd().to_string());
        Some((ours, theirs))
    };
    child
        .arg("--")
        .args(command)
        .envs(proxy_env(&http_addr.to_string(), &socks_addr.to_string()));
    crate::signals::catch();
    let child = child.spawn()?;
    if let Some((ours, theirs)) = channel {
        drop(theirs);
        // `None`: the confining stage failed before sending (its message is on stderr)
        // and exits; nothing of the command ran.
        if let Some(listener) = receive_fd(&ours)? {
            crate::unix_sockets::supervise(listener, allowlist)?;
        }
    }
    crate::signals::forward_to(child.id());
    reap_until(child.id())
}

/// Waits for `pid`, reaping every other child on the way: the bridge is the sandbox's
/// pid 1 (see [`crate::launch::NamespaceOptions::payload_as_pid_1`]), so orphaned
/// processes of the command become its children. Returns the shell-style status.
fn reap_until(pid: u32) -> std::io::Result<i32> {
    use rustix::process::{WaitOptions, wait};
    loop {
        match wait(WaitOptions::empty()) {
            Ok(Some((reaped, status))) if reaped.as_raw_nonzero().get().unsigned_abs() == pid => {
                return Ok(status
                    .exit_status()
                    .or_else(|| status.terminating_signal().map(|s| 128 + s))
                    .unwrap_or(1));
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
}

/// Hands every accepted connection to the proxy: the connected TCP socket itself travels
/// over the proxy socket (`SCM_RIGHTS`), so the proxy talks to the client directly and no
/// byte is copied here. A connection the proxy cannot take is closed.
fn accept_loop(listener: &TcpListener, socket: &Path) {
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        let _ = client.set_nodelay(true);
        let _ = hand_over(&client, socket);
    }
}

fn hand_over(client: &TcpStream, socket: &Path) -> std::io::Result<()> {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    use std::os::fd::AsFd;
    let proxy = UnixStream::connect(socket)?;
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [client.as_fd()];
    control.push(SendAncillaryMessage::ScmRights(&fds));
    rustix::net::sendmsg(
        &proxy,
        &[std::io::IoSlice::new(b"\0")],
        &mut control,
        SendFlags::empty(),
    )?;
    Ok(())
}

fn copy(mut from: impl Read, mut to: impl Write) {
    let mut buffer = vec![0u8; 128 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    return;
                }
            }
        }
    }
}

/// `airlock proxy-connect HOST PORT`: `CONNECT HOST:PORT` through the bridge, then
/// stdin/stdout spliced through the tunnel. Returns the exit status.
pub fn run_proxy_connect(args: impl Iterator<Item = OsString>) -> i32 {
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    let [host, port] = args.as_slice() else {
        eprintln!("usage: airlock proxy-connect HOST PORT");
        return 2;
    };
    let Ok(proxy) = std::env::var(HTTP_PROXY_ADDRESS_ENV) else {
        eprintln!(
            "airlock proxy-connect: {HTTP_PROXY_ADDRESS_ENV} is not set (run inside a sandbox with a managed network)"
        );
        return 2;
    };
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let result = (|| -> std::io::Result<Option<String>> {
        let mut stream = TcpStream::connect(&proxy)?;
        write!(
            stream,
            "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n"
        )?;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
            if stream.read(&mut byte)? == 0 {
                break;
            }
            head.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        if !text.starts_with("HTTP/1.1 200") {
            let mut body = String::new();
            let _ = stream.read_to_string(&mut body);
            return Ok(Some(body.trim().to_owned()));
        }
        let reader = stream.try_clone()?;
        let down = std::thread::spawn(move || copy(reader, std::io::stdout()));
        copy(std::io::stdin(), &stream);
        let _ = stream.shutdown(Shutdown::Write);
        let _ = down.join();
        Ok(None)
    })();
    match result {
        Ok(None) => 0,
        Ok(Some(refusal)) => {
            eprintln!("airlock proxy-connect: {refusal}");
            1
        }
        Err(error) => {
            eprintln!("airlock proxy-connect: {error}");
            1
        }
    }
}
