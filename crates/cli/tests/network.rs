//! The managed network end to end (spec 12 §Tests): `airlock sandbox` runs `curl` under
//! the real sandbox with a `[permissions.<id>.network.domains]` profile, against origin
//! servers on this machine's loopback (the proxy reaches them from the host side; the
//! sandbox reaches only the proxy). Nothing contacts a non-local address: unlisted and
//! denied names are refused before any DNS lookup.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::BufRead;
use std::io::Read;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::time::Duration;

/// A loopback origin answering every request with `origin <port>`.
fn origin() -> u16 {
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

struct Setup {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

fn setup(network: &str) -> Setup {
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

fn command(setup: &Setup, script: &str) -> Command {
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

fn run(setup: &Setup, script: &str) -> (String, String) {
    let Output { stdout, stderr, .. } = command(setup, script).output().unwrap();
    (
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

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

#[test]
fn network_rule_lines_feed_the_lists() {
    let port = origin();
    let setup = setup("[permissions.net.network.domains]\n\"unused.test\" = \"allow\"\n");
    std::fs::create_dir_all(setup.home.path().join("rules")).unwrap();
    std::fs::write(
        setup.home.path().join("rules/default.rules"),
        "network_rule(host=\"localhost\", protocol=\"http\", decision=\"allow\")\n\
         network_rule(host=\"blocked.test\", protocol=\"https\", decision=\"deny\")\n",
    )
    .unwrap();
    let (out, err) = run(
        &setup,
        &format!(
            "curl -sS -m 10 http://localhost:{port}/; curl -sS -m 10 http://blocked.test/; echo"
        ),
    );
    assert!(out.contains(&format!("origin {port}")), "{out}\n{err}");
    assert!(
        out.contains("matches deny entry `blocked.test` (denied)"),
        "{out}\n{err}"
    );
}

fn airlock_in(setup: &Setup, args: &[&str]) -> (String, String, Option<i32>) {
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

#[test]
fn permissions_show_and_explain_print_the_effective_network_rules() {
    let setup = setup(
        "mode = \"limited\"\n[permissions.net.network.domains]\n\"github.com:443\" = \"allow\"\n\"evil.test\" = \"deny\"\n",
    );
    std::fs::create_dir_all(setup.home.path().join("rules")).unwrap();
    std::fs::write(
        setup.home.path().join("rules/default.rules"),
        "network_rule(host=\"pypi.org\", protocol=\"https\", decision=\"allow\")\n",
    )
    .unwrap();
    let want = [
        "network: managed proxy (mode limited, local destinations refused unless an IP literal or localhost is allowed by name)",
        "  deny  evil.test (config)",
        "  allow github.com:443 (config)",
        "  allow pypi.org (network_rule)",
    ];
    let (show, err, _) = airlock_in(&setup, &["permissions", "show"]);
    for line in want {
        assert!(
            show.lines().any(|l| l == line),
            "{line:?} missing:\n{show}\n{err}"
        );
    }
    let (explain, err, _) = airlock_in(&setup, &["explain", "--", "curl", "https://github.com"]);
    for line in want {
        assert!(
            explain.lines().any(|l| l == line),
            "{line:?} missing:\n{explain}\n{err}"
        );
    }
}

#[test]
fn an_invalid_domains_entry_is_a_load_error_naming_it() {
    let setup = setup("[permissions.net.network.domains]\n\"github.com:99999\" = \"allow\"\n");
    let (_, err, code) = airlock_in(&setup, &["sandbox", "--", "true"]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains(
            "invalid host pattern `github.com:99999`: port must be a number from 1 to 65535"
        ) && err.contains("permissions.net.network.domains.\"github.com:99999\""),
        "{err}"
    );
}

#[test]
fn exec_runs_behind_the_proxy_and_hints_when_a_program_bypasses_it() {
    let port = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let url = format!("http://localhost:{port}/");
    let (out, err, code) = airlock_in(&setup, &["exec", "--", "curl", "-sS", "-m", "10", &url]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(out, format!("origin {port}\n"));
    let (out, err, _) = airlock_in(
        &setup,
        &[
            "exec",
            "--",
            "curl",
            "-sS",
            "-m",
            "10",
            "--noproxy",
            "*",
            &url,
        ],
    );
    assert!(!out.contains("origin"), "{out}");
    assert!(
        err.contains("airlock: hint: the command seems to have failed reaching the network; under this profile the sandbox reaches the network only through Airlock's proxy"),
        "{err}"
    );
}

/// A static file server over `dir` on loopback (python3's `http.server`), killed on drop.
struct FileServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn file_server(dir: &Path) -> FileServer {
    let port = {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let server = FileServer {
        child: Command::new("python3")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("these tests need python3"),
        port,
    };
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the file server did not start");
}

#[test]
fn git_clone_over_http_goes_through_the_proxy() {
    let served = tempfile::Builder::new()
        .prefix("airlock-net-git-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let git = |args: &[&str], dir: &Path| {
        let ok = Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", served.path())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    let work = served.path().join("work");
    std::fs::create_dir(&work).unwrap();
    git(&["init", "-q"], &work);
    std::fs::write(work.join("hello.txt"), "through the proxy\n").unwrap();
    git(&["add", "hello.txt"], &work);
    git(
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ],
        &work,
    );
    git(
        &["clone", "-q", "--bare", "work", "repo.git"],
        served.path(),
    );
    git(&["update-server-info"], &served.path().join("repo.git"));
    let server = file_server(served.path());
    let port = server.port;
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "git clone -q http://localhost:{port}/repo.git cloned && cat cloned/hello.txt; \
             git clone -q http://127.0.0.1:{port}/repo.git refused; echo \"refused rc=$?\""
        ),
    );
    assert!(out.contains("through the proxy"), "{out}\n{err}");
    assert!(out.contains("refused rc=128"), "{out}\n{err}");
    assert!(setup.ws.path().join("cloned/hello.txt").exists());
    assert!(
        err.contains("Network access to \"127.0.0.1\" was blocked"),
        "{err}"
    );
}

#[test]
fn proxy_connect_tunnels_stdio_for_ssh_and_is_refused_for_other_hosts() {
    let port = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "echo \"$GIT_SSH_COMMAND\"; \
             printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /dev/.airlock-bridge proxy-connect localhost {port}; \
             printf x | /dev/.airlock-bridge proxy-connect localhost 22; echo \"refused rc=$?\""
        ),
    );
    assert!(
        out.contains("ssh -o ProxyCommand='/dev/.airlock-bridge proxy-connect %h %p'"),
        "{out}"
    );
    assert!(out.contains(&format!("origin {port}")), "{out}\n{err}");
    assert!(out.contains("refused rc=1"), "{out}\n{err}");
    assert!(
        err.contains("airlock proxy-connect: Network access to \"localhost\" was blocked"),
        "{err}"
    );
}

/// A `PermissionRequest` hook that logs its input and answers `behavior`.
fn hook(setup: &Setup, behavior: &str) -> (String, std::path::PathBuf) {
    let log = setup.home.path().join("hook.log");
    let script = setup.home.path().join("hook.sh");
    std::fs::write(
        &script,
        format!(
            "tr -d '\\n' >> '{log}'\necho >> '{log}'\necho '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{{\"behavior\":\"{behavior}\",\"message\":\"hook says {behavior}\"}}}}}}'\n",
            log = log.display()
        ),
    )
    .unwrap();
    (
        format!(
            "[[hooks.permission_request]]\nmatcher = \"*\"\ncommand = \"sh '{}'\"\ntimeout = 20\n",
            script.display()
        ),
        log,
    )
}

fn exec_setup(port_allowed_by_hook: bool) -> (Setup, std::path::PathBuf, u16) {
    let port = origin();
    // `allow_local_binding` lets a loopback origin stand in for an unlisted public host.
    let setup = setup(
        "allow_local_binding = true\n[permissions.net.network.domains]\n\"unused.test\" = \"allow\"\n",
    );
    let (hooks, log) = hook(
        &setup,
        if port_allowed_by_hook {
            "allow"
        } else {
            "deny"
        },
    );
    let config = std::fs::read_to_string(setup.home.path().join("config.toml")).unwrap();
    std::fs::write(
        setup.home.path().join("config.toml"),
        format!("{config}{hooks}"),
    )
    .unwrap();
    (setup, log, port)
}

#[test]
fn exec_asks_the_session_reviewers_about_an_unlisted_host() {
    let (setup, log, port) = exec_setup(true);
    let url = format!("http://localhost:{port}/");
    let (out, err, code) = airlock_in(
        &setup,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            &format!("curl -sS -m 20 {url}; curl -sS -m 20 {url}"),
        ],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(out, format!("origin {port}\norigin {port}\n"), "{err}");
    let asked = std::fs::read_to_string(&log).unwrap();
    let network_questions: Vec<&str> = asked
        .lines()
        .filter(|line| line.contains(&format!("network-access http://localhost:{port}")))
        .collect();
    assert_eq!(
        network_questions.len(),
        2,
        "`approved` is once per request: {asked}"
    );
    let audit = std::fs::read_to_string(setup.home.path().join("log/audit.jsonl")).unwrap();
    let network: Vec<serde_json::Value> = audit
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["type"] == "network_request")
        .collect();
    assert_eq!(network.len(), 2, "{audit}");
    for entry in &network {
        assert_eq!(entry["host"], "localhost");
        assert_eq!(entry["port"], port);
        assert_eq!(entry["protocol"], "http");
        assert_eq!(entry["decision"], "Approved");
    }
    assert!(
        network
            .iter()
            .all(|entry| !entry.to_string().contains("http://")),
        "no URL in the network entries: {network:?}"
    );
}

#[test]
fn exec_refuses_an_unlisted_host_the_reviewer_denies_and_never_asks_under_never() {
    let (setup, log, port) = exec_setup(false);
    let url = format!("http://localhost:{port}/");
    let (out, err, _) = airlock_in(&setup, &["exec", "--", "curl", "-sS", "-m", "20", &url]);
    assert!(
        out.contains("the reviewer denied access (not_allowed)"),
        "{out}\n{err}"
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("network-access")
    );
    let audit = std::fs::read_to_string(setup.home.path().join("log/audit.jsonl")).unwrap();
    assert!(
        audit
            .lines()
            .any(|line| line.contains("\"type\":\"network_request\"")
                && line.contains("\"decision\":\"blocked\"")),
        "{audit}"
    );
    std::fs::remove_file(&log).unwrap();
    let (out, err, _) = airlock_in(
        &setup,
        &["exec", "-a", "never", "--", "curl", "-sS", "-m", "20", &url],
    );
    assert!(out.contains("(not_allowed)"), "{out}\n{err}");
    let asked = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !asked.contains("network-access"),
        "never asks under `never`: {asked}"
    );
}

#[test]
fn doctor_checks_the_managed_network_path() {
    let setup = setup("");
    let (out, err, _) = airlock_in(&setup, &["doctor", "--json"]);
    let checks: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let network = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "managed network (proxy, bridge, network namespace)")
        .expect("the check is listed");
    assert_eq!(network["ok"], true, "{network}");
}

/// Writes a minimal wheel `tinypkg-1.0` and a PEP 503 simple index for it under `dir`.
fn python_index(dir: &Path) {
    let script = r#"
import os, sys, zipfile, hashlib, base64
root = sys.argv[1]
os.makedirs(f"{root}/simple/tinypkg", exist_ok=True)
os.makedirs(f"{root}/files", exist_ok=True)
name = "tinypkg-1.0-py3-none-any.whl"
files = {
    "tinypkg/__init__.py": b"VALUE = 1\n",
    "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{path},sha256={digest},{len(data)}\n"
record += "tinypkg-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(f"{root}/files/{name}", "w") as wheel:
    for path, data in files.items():
        wheel.writestr(path, data)
    wheel.writestr("tinypkg-1.0.dist-info/RECORD", record)
with open(f"{root}/simple/tinypkg/index.html", "w") as index:
    index.write(f'<html><body><a href="../../files/{name}">{name}</a></body></html>\n')
"#;
    let ok = Command::new("python3")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-c", script, dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn pip_download_from_a_local_index_goes_through_the_proxy() {
    let has_pip = Command::new("python3")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !has_pip {
        eprintln!("skipping: python3 has no pip");
        return;
    }
    let served = tempfile::Builder::new()
        .prefix("airlock-net-pypi-")
        .tempdir_in("/var/tmp")
        .unwrap();
    python_index(served.path());
    let server = file_server(served.path());
    let port = server.port;
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let pip = "python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check --retries 0 --timeout 20";
    let (out, err) = run(
        &setup,
        &format!(
            "{pip} --index-url http://localhost:{port}/simple/ -d dl tinypkg >/dev/null 2>&1; ls dl; \
             {pip} --index-url http://127.0.0.1:{port}/simple/ -d dl2 tinypkg >/dev/null 2>&1; echo \"refused rc=$?\""
        ),
    );
    assert!(out.contains("tinypkg-1.0-py3-none-any.whl"), "{out}\n{err}");
    assert!(
        setup
            .ws
            .path()
            .join("dl/tinypkg-1.0-py3-none-any.whl")
            .exists()
    );
    assert!(!out.contains("refused rc=0"), "{out}\n{err}");
    assert!(
        err.contains("Network access to \"127.0.0.1\" was blocked"),
        "{err}"
    );
}

#[test]
fn npm_reads_a_local_registry_stub_through_the_proxy() {
    if !Command::new("npm")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
    {
        eprintln!("skipping: npm is not installed");
        return;
    }
    let served = tempfile::Builder::new()
        .prefix("airlock-net-npm-")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::fs::write(
        served.path().join("tinypkg"),
        r#"{"name":"tinypkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"tinypkg","version":"1.0.0","description":"served through the proxy","dist":{"tarball":"http://localhost:1/tinypkg-1.0.0.tgz"}}}}"#,
    )
    .unwrap();
    let server = file_server(served.path());
    let port = server.port;
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "export npm_config_cache=\"$PWD/.npm-cache\" npm_config_fetch_retries=0; \
             npm view tinypkg description --registry http://localhost:{port}/; \
             npm view tinypkg description --registry http://127.0.0.1:{port}/ >/dev/null 2>&1; echo \"refused rc=$?\""
        ),
    );
    assert!(out.contains("served through the proxy"), "{out}\n{err}");
    assert!(!out.contains("refused rc=0"), "{out}\n{err}");
    assert!(
        err.contains("Network access to \"127.0.0.1\" was blocked"),
        "{err}"
    );
}
