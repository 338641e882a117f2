//! `airlock exec-server --listen unix:PATH` creates its socket private to the user from the
//! start (umask around the bind), with no chmod by path afterwards (red-team F13: a
//! symlink swapped in between bind and chmod would have had its target's mode changed).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::os::unix::fs::FileTypeExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

#[test]
fn the_unix_socket_is_created_0600() {
    let dir = tempfile::Builder::new()
        .prefix("airlock-es-socket-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let socket = dir.path().join("exec.sock");
    let mut server = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["exec-server", "--listen"])
        .arg(format!("unix:{}", socket.display()))
        .env("AIRLOCK_HOME", dir.path().join("home"))
        .env_remove("LD_LIBRARY_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let meta = std::fs::symlink_metadata(&socket);
    let _ = server.kill();
    let _ = server.wait();
    let meta = meta.expect("the server created its socket within 20 s");
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}
