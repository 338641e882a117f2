//! The set-up the managed-network test binaries share: loopback origins, a profile with a
//! `[permissions.net.network]` table, and ways to run `airlock` in it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::process::Output;
use std::time::Duration;

/// A loopback origin answering every request with `origin <port>`.
pub fn origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let body = format!("origin {port}\n");
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

pub struct Setup {
    pub home: tempfile::TempDir,
    pub ws: tempfile::TempDir,
}

pub fn setup(network: &str) -> Setup {
    assert!(
        Path::new("/usr/bin/curl").exists(),
        "these tests need curl (apt-get install curl)"
    );
    let home = tempfile::Builder::new()
        .prefix("airlock-net-home-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let ws = tempfile::Builder::new()
        .prefix("airlock-net-ws-")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "default_permissions = \"net\"\n[permissions.net]\nextends = \":workspace\"\n[permissions.net.network]\nenabled = true\n{network}"
        ),
    )
    .unwrap();
    Setup { home, ws }
}

pub fn command(setup: &Setup, script: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_airlock"));
    command
        .args([
            "sandbox",
            "-C",
            setup.ws.path().to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ])
        .current_dir(setup.ws.path())
        .env("AIRLOCK_HOME", setup.home.path())
        .env_remove("LD_LIBRARY_PATH");
    command
}

pub fn run(setup: &Setup, script: &str) -> (String, String) {
    let Output { stdout, stderr, .. } = command(setup, script).output().unwrap();
    (
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

pub fn airlock_in(setup: &Setup, args: &[&str]) -> (String, String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(setup.ws.path())
        .env("AIRLOCK_HOME", setup.home.path())
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}
