//! The managed network end to end (spec 12 §Tests): `airlock sandbox` runs `curl` under
//! the real sandbox with a `[permissions.<id>.network.domains]` profile, against origin
//! servers on this machine's loopback (the proxy reaches them from the host side; the
//! sandbox reaches only the proxy). Nothing contacts a non-local address: unlisted and
//! denied names are refused before any DNS lookup.
//! Configuration, `exec` with reviewers, and real tools (git, ssh, pip, npm) have their
//! own files: `network_config.rs`, `network_exec.rs`, `network_tools.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod network_support;

use std::io::BufRead;
use std::process::Stdio;

use network_support::command;
use network_support::origin;
use network_support::run;
use network_support::setup;

#[test]
fn allowed_host_is_reached_through_http_connect_and_socks5() {
    let port = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "curl -sS -m 10 http://localhost:{port}/; \
             curl -sS -m 10 --proxytunnel http://localhost:{port}/; \
             curl -sS -m 10 --proxy \"$ALL_PROXY\" http://localhost:{port}/; \
             echo \"$HTTPS_PROXY $ALL_PROXY NO_PROXY=[$NO_PROXY]\""
        ),
    );
    assert_eq!(
        out.lines()
            .filter(|l| *l == format!("origin {port}"))
            .count(),
        3,
        "http, CONNECT and SOCKS5 must all reach the origin\n{out}\n{err}"
    );
    assert!(
        out.contains("http://127.0.0.1:") && out.contains("socks5h://127.0.0.1:"),
        "{out}"
    );
    assert!(out.contains("NO_PROXY=[]"), "{out}");
}

#[test]
fn denied_unlisted_and_other_port_are_refused_with_their_reasons() {
    let port = origin();
    let other = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n\"**.evil.test\" = \"deny\"\n\"*\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "curl -sS -m 10 http://api.evil.test/; echo; \
             curl -sS -m 10 http://localhost:{other}/; echo; \
             curl -sS -m 10 --proxy \"$ALL_PROXY\" http://localhost:{other}/; echo \"socks rc=$?\"; \
             curl -sS -m 10 http://localhost:{port}/"
        ),
    );
    assert!(
        out.contains("Network access to \"api.evil.test\" was blocked: matches deny entry `**.evil.test` (denied)."),
        "{out}\n{err}"
    );
    assert!(
        out.contains(&format!("localhost:{other} is a loopback destination")),
        "{out}"
    );
    assert!(
        out.contains("socks rc=97"),
        "SOCKS5 refusal (curl 97): {out}\n{err}"
    );
    assert!(out.contains(&format!("origin {port}")), "{out}");
    assert!(
        err.contains("airlock: blocked by the sandbox's network policy (http): Network access to \"api.evil.test\""),
        "the launcher reports what was blocked: {err}"
    );
}

#[test]
fn private_and_metadata_spellings_are_refused_through_the_bridge() {
    let port = origin();
    let setup = setup("[permissions.net.network.domains]\n\"*\" = \"allow\"\n");
    let mut script = String::new();
    for host in [
        "127.0.0.1",
        "127.1",
        "2130706433",
        "0x7f.1",
        "0177.0.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[64:ff9b::7f00:1]",
        "localhost",
        "169.254.169.254",
        "2852039166",
        "168.63.129.16",
        "10.0.0.1",
    ] {
        script.push_str(&format!(
            "curl -sS -m 10 -g 'http://{host}:{port}/'; echo; "
        ));
    }
    let (out, err) = run(&setup, &script);
    assert_eq!(
        out.matches("(not_allowed_local)").count(),
        13,
        "{out}\n{err}"
    );
    assert!(!out.contains("origin"), "{out}");
}

#[test]
fn a_program_that_ignores_the_proxy_variables_cannot_connect() {
    let port = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "curl -sS -m 10 --noproxy '*' http://127.0.0.1:{port}/; echo \"direct rc=$?\"; \
             env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS -m 10 http://localhost:{port}/; echo \"unset rc=$?\"; \
             ls {} >/dev/null && echo socket-dir-visible; \
             python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1; \
             python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)' 2>&1 | tail -1; \
             python3 -c 'import socket; socket.socketpair(); print(\"pair ok\")'",
            airlock_linux_sandbox::bridge::PROXY_SOCKET
        ),
    );
    assert!(
        out.contains("direct rc=7"),
        "no route to the host's loopback: {out}\n{err}"
    );
    assert!(out.contains("unset rc=7"), "{out}\n{err}");
    assert!(!out.contains(&format!("origin {port}")), "{out}");
    assert!(out.contains("socket-dir-visible"), "{out}\n{err}");
    assert_eq!(
        out.matches("PermissionError: [Errno 1] Operation not permitted")
            .count(),
        2,
        "no AF_UNIX or netlink socket for the command: {out}"
    );
    assert!(out.contains("pair ok"), "socketpair still works: {out}");
}

#[test]
fn limited_mode_allows_get_and_refuses_post_and_connect() {
    let port = origin();
    let setup = setup(&format!(
        "mode = \"limited\"\n[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "curl -sS -m 10 http://localhost:{port}/; \
             curl -sS -m 10 -X POST http://localhost:{port}/; echo; \
             curl -sS -m 10 --proxytunnel http://localhost:{port}/; echo \"tunnel rc=$?\""
        ),
    );
    assert!(out.contains(&format!("origin {port}")), "{out}\n{err}");
    assert!(
        out.contains("POST is blocked by network mode \"limited\""),
        "{out}"
    );
    assert!(out.contains("tunnel rc=56"), "{out}\n{err}");
}

/// Socket inodes held by `pid`.
fn socket_inodes(pid: u32) -> Vec<String> {
    let mut inodes = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        if let Ok(target) = std::fs::read_link(entry.path()) {
            let target = target.to_string_lossy().into_owned();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|t| t.strip_suffix(']'))
            {
                inodes.push(inode.to_owned());
            }
        }
    }
    inodes
}

#[test]
fn the_proxy_has_no_tcp_listener_on_the_host() {
    let port = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let mut child = command(&setup, "echo ready; read line; true")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let inodes = socket_inodes(child.id());
    let mut listeners = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for row in std::fs::read_to_string(table).unwrap().lines().skip(1) {
            let cols: Vec<&str> = row.split_whitespace().collect();
            if cols.get(3) == Some(&"0A") {
                listeners.push(cols[9].to_owned());
            }
        }
    }
    let unix = std::fs::read_to_string("/proc/net/unix").unwrap();
    let proxy_socket = unix.lines().any(|row| {
        let cols: Vec<&str> = row.split_whitespace().collect();
        cols.len() >= 8 && inodes.contains(&cols[6].to_owned()) && cols[7].contains("airlock-net-")
    });
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(proxy_socket, "the proxy listens on its Unix socket");
    assert!(
        inodes.iter().all(|inode| !listeners.contains(inode)),
        "the launcher (and its proxy) holds no TCP listener"
    );
}
