//! `[permissions.<id>.network.unix_sockets]` under the managed network (spec 12 §Config:
//! allowed sockets bind-mounted in, every other one unreachable), end to end: `airlock
//! sandbox` runs a Python client under the real sandbox against Unix socket listeners
//! this test runs on the host, in a directory it creates. Every way a command could name
//! a socket it was not given is tried: another path, an abstract name, a symbolic link
//! and a host socket inside the writable workspace, `/proc/self/fd/N`, a relative path,
//! a datagram socket, the proxy's own socket.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::Write;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::SocketAddr;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;

/// Answers every connection with `name` and closes it.
fn serve(listener: UnixListener, name: &'static str) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = writeln!(stream, "{name}");
        }
    });
}

fn listen(path: &Path, name: &'static str) {
    serve(UnixListener::bind(path).unwrap(), name);
}

struct Setup {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    sockets: tempfile::TempDir,
}

fn temp(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .unwrap()
}

fn setup(domains: &str) -> Setup {
    let setup = Setup {
        home: temp("airlock-uds-home-"),
        ws: temp("airlock-uds-ws-"),
        sockets: temp("airlock-uds-"),
    };
    std::fs::write(
        setup.home.path().join("config.toml"),
        format!(
            "default_permissions = \"net\"\n[permissions.net]\nextends = \":workspace\"\n\
             [permissions.net.network]\nenabled = true\n\
             [permissions.net.network.domains]\n\"example.com\" = \"allow\"\n{domains}\
             [permissions.net.network.unix_sockets]\n"
        ),
    )
    .unwrap();
    setup
}

/// Runs `script` with python3 inside the sandbox; (stdout, stderr).
fn run_python(setup: &Setup, script: &str) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "sandbox",
            "-C",
            setup.ws.path().to_str().unwrap(),
            "--",
            "python3",
            "-c",
            script,
        ])
        .current_dir(setup.ws.path())
        .env("AIRLOCK_HOME", setup.home.path())
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The client: `attempt(label, address, kind)` prints `label: <reply>` or `label: errno N`.
const CLIENT: &str = r#"
import errno, os, socket, sys
def attempt(label, address, kind=socket.SOCK_STREAM):
    try:
        s = socket.socket(socket.AF_UNIX, kind)
        s.settimeout(5)
        s.connect(address)
        print(f"{label}: {s.recv(64).decode().strip()}")
    except OSError as e:
        print(f"{label}: errno {errno.errorcode.get(e.errno, e.errno)}")
"#;

#[test]
fn only_the_allowed_socket_is_reachable_however_the_others_are_named() {
    let setup = setup("");
    let dir = setup.sockets.path();
    let (allowed, other) = (dir.join("allowed.sock"), dir.join("other.sock"));
    listen(&allowed, "allowed");
    listen(&other, "other");
    let in_workspace = setup.ws.path().join("host.sock");
    listen(&in_workspace, "host in workspace");
    let abstract_name = format!("airlock-uds-test-{}", std::process::id());
    serve(
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&abstract_name).unwrap()).unwrap(),
        "abstract",
    );
    std::fs::write(
        setup.home.path().join("config.toml"),
        std::fs::read_to_string(setup.home.path().join("config.toml")).unwrap()
            + &format!(
                "{:?} = \"allow\"\n{:?} = \"deny\"\n",
                allowed.display().to_string(),
                other.display().to_string()
            ),
    )
    .unwrap();
    let script = format!(
        r#"{CLIENT}
allowed, other, sockets = {allowed:?}, {other:?}, {dir:?}
attempt("allowed", allowed)
attempt("other", other)
attempt("abstract", "\0{abstract_name}")
attempt("host socket in the workspace", {in_workspace:?})
os.symlink(other, "to-other.sock")
attempt("link to other", "to-other.sock")
os.symlink(allowed, "to-allowed.sock")
attempt("link to allowed", "to-allowed.sock")
fd = os.open(other, os.O_PATH)
attempt("/proc/self/fd of other", f"/proc/self/fd/{{fd}}")
fd = os.open(allowed, os.O_PATH)
attempt("/proc/self/fd of allowed", f"/proc/self/fd/{{fd}}")
own = socket.socket(socket.AF_UNIX)
own.bind("own.sock")
own.listen(1)
attempt("own socket in the workspace", "own.sock")
attempt("proxy socket", "/dev/.airlock-proxy.sock")
os.chdir(sockets)
attempt("relative other", "other.sock")
attempt("relative allowed", "allowed.sock")
attempt("datagram", allowed, socket.SOCK_DGRAM)
"#,
        allowed = allowed.display().to_string(),
        other = other.display().to_string(),
        dir = dir.display().to_string(),
        in_workspace = in_workspace.display().to_string(),
    );
    let (out, err) = run_python(&setup, &script);
    pretty_assertions::assert_eq!(
        out,
        "allowed: allowed\n\
         other: errno EPERM\n\
         abstract: errno ECONNREFUSED\n\
         host socket in the workspace: errno EPERM\n\
         link to other: errno EPERM\n\
         link to allowed: allowed\n\
         /proc/self/fd of other: errno EPERM\n\
         /proc/self/fd of allowed: allowed\n\
         own socket in the workspace: errno EPERM\n\
         proxy socket: errno EPERM\n\
         relative other: errno EPERM\n\
         relative allowed: allowed\n\
         datagram: errno EPERM\n",
        "stderr: {err}"
    );
}

#[test]
fn without_an_allowed_socket_the_command_gets_no_unix_socket_at_all() {
    let setup = setup("");
    let listening = setup.sockets.path().join("host.sock");
    listen(&listening, "host");
    let script = format!(
        "{CLIENT}\nattempt(\"host\", {:?})\n",
        listening.display().to_string()
    );
    let (out, err) = run_python(&setup, &script);
    assert_eq!(out, "host: errno EPERM\n", "stderr: {err}");
}

#[test]
fn an_entry_that_is_a_link_or_missing_is_left_out_with_a_warning() {
    let setup = setup("");
    let dir = setup.sockets.path();
    let real = dir.join("real.sock");
    listen(&real, "real");
    let link = dir.join("link.sock");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let missing = dir.join("missing.sock");
    std::fs::write(
        setup.home.path().join("config.toml"),
        std::fs::read_to_string(setup.home.path().join("config.toml")).unwrap()
            + &format!(
                "{:?} = \"allow\"\n{:?} = \"allow\"\n",
                link.display().to_string(),
                missing.display().to_string()
            ),
    )
    .unwrap();
    let script = format!(
        "{CLIENT}\nattempt(\"link\", {:?})\nattempt(\"real\", {:?})\n",
        link.display().to_string(),
        real.display().to_string()
    );
    let (out, err) = run_python(&setup, &script);
    assert_eq!(
        out, "link: errno EPERM\nreal: errno EPERM\n",
        "stderr: {err}"
    );
    assert!(
        err.contains(&format!(
            "network.unix_sockets entry {} is not reachable from the sandbox: it is a symbolic link",
            link.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "network.unix_sockets entry {} is not reachable from the sandbox",
            missing.display()
        )),
        "{err}"
    );
}

#[test]
fn tcp_through_the_proxy_still_works_while_connect_calls_are_supervised() {
    let origin = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = origin.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::Read;
        for stream in origin.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\norigin\n",
            );
        }
    });
    let setup = setup(&format!("\"127.0.0.1:{port}\" = \"allow\"\n"));
    let allowed = setup.sockets.path().join("allowed.sock");
    listen(&allowed, "allowed");
    std::fs::write(
        setup.home.path().join("config.toml"),
        std::fs::read_to_string(setup.home.path().join("config.toml")).unwrap()
            + &format!("{:?} = \"allow\"\n", allowed.display().to_string()),
    )
    .unwrap();
    let script = format!(
        r#"{CLIENT}
import urllib.request
print(urllib.request.urlopen("http://127.0.0.1:{port}/", timeout=10).read().decode().strip())
attempt("allowed", {allowed:?})
direct = socket.socket()
direct.settimeout(5)
try:
    direct.connect(("127.0.0.1", {port}))
    print("direct: connected")
except OSError as e:
    print(f"direct: errno {{errno.errorcode.get(e.errno, e.errno)}}")
"#,
        allowed = allowed.display().to_string(),
    );
    let (out, err) = run_python(&setup, &script);
    assert_eq!(
        out, "origin\nallowed: allowed\ndirect: errno ECONNREFUSED\n",
        "stderr: {err}"
    );
}
