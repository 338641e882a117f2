//! End to end (issue 15): `airlock exec` with a remote environment runs its command on an
//! `airlock exec-server` started in a network namespace of its own (`unshare -n`), the
//! executor's sandbox denial leads to the same retry logic as a local one, and a missing or
//! lost executor fails the call without running anything locally.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::time::Duration;
use std::time::Instant;

use exec_support::Dirs;
use exec_support::airlock_bin;
use exec_support::exists;
use exec_support::stderr;

/// An exec-server on a Unix socket, in its own network namespace.
struct Executor {
    child: Child,
    socket: PathBuf,
    dir: Option<tempfile::TempDir>,
}

impl Drop for Executor {
    /// Also when a test fails: no executor outlives its test.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Executor {
    fn start(home: &Path) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("es-remote")
            .tempdir_in("/tmp")
            .unwrap();
        let socket = dir.path().join("exec.sock");
        // `unshare -n` as root; `-r` maps us to root in a user namespace otherwise.
        let mut unshare = Command::new("unshare");
        if !rustix_is_root() {
            unshare.arg("-r");
        }
        let child = unshare
            .args(["-n", "--"])
            .arg(airlock_bin())
            .args(["exec-server", "--listen"])
            .arg(format!("unix:{}", socket.display()))
            .env("AIRLOCK_HOME", home)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("unshare is needed for this test (util-linux)");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "the exec-server never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        let theirs = std::fs::read_link(format!("/proc/{}/ns/net", child.id())).unwrap();
        let ours = std::fs::read_link("/proc/self/ns/net").unwrap();
        assert_ne!(
            theirs, ours,
            "the executor must run in its own network namespace"
        );
        Self {
            child,
            socket,
            dir: Some(dir),
        }
    }

    fn config(&self) -> String {
        format!(
            "[environment]\ntype = \"remote\"\nurl = \"unix:{}\"\nrequest_timeout_ms = 20000\n",
            self.socket.display()
        )
    }

    fn stop(self) {
        drop(self);
    }
}

fn rustix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[test]
fn remote_command_runs_on_the_executor_with_its_sandbox() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.ws.join(".git")).unwrap();
    let executor = Executor::start(&dirs.home);
    dirs.config(&executor.config());
    // The executor's network namespace has only a (down) loopback device: the command ran
    // there, not here.
    let out = dirs.exec(&[
        "-a",
        "never",
        "--",
        "sh",
        "-c",
        "cat /proc/net/dev; echo > made",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("lo:"), "{stdout}");
    assert_eq!(
        stdout.lines().count(),
        3,
        "only lo in the executor's namespace: {stdout}"
    );
    assert!(
        exists(dirs.ws.join("made")),
        ":workspace lets the workspace be written"
    );
    // The executor applies :workspace: .git is read-only there.
    let out = dirs.exec(&["-a", "never", "--", "touch", ".git/planted"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Read-only file system"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("not retried"), "{}", stderr(&out));
    assert!(!exists(dirs.ws.join(".git/planted")));
    let audit = dirs.audit();
    let last = audit.last().unwrap();
    assert_eq!(last["attempts"][0]["sandbox_denied"], true, "{last}");
    executor.stop();
}

/// The same retry logic as locally (exec_cli `sandbox_denial_retry_and_no_retry`): under
/// `untrusted` the denied write is retried without the sandbox after a second approval;
/// under `on-request` it is not retried.
#[test]
fn remote_denial_follows_the_local_retry_logic() {
    let dirs = Dirs::new();
    let executor = Executor::start(&dirs.home);
    dirs.config(&format!("{}{}", dirs.hook("allow"), executor.config()));
    let Some(target) = dirs.outside_file("retried.txt") else {
        executor.stop();
        return;
    };
    let out = dirs.exec_leaving_sandbox(&["-a", "untrusted", "--", "touch", &target]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(exists(&target));
    assert!(
        stderr(&out).contains("Read-only file system"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("retried without the sandbox"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        dirs.requests("hook").len(),
        2,
        "the unsandboxed retry is asked for again"
    );
    let attempts = &dirs.audit()[0]["attempts"];
    assert_eq!(attempts[0]["sandbox_denied"], true, "{attempts}");
    assert_eq!(attempts.as_array().unwrap().len(), 2, "{attempts}");

    let Some(target) = dirs.outside_file("not-retried.txt") else {
        executor.stop();
        return;
    };
    let out = dirs.exec(&["-a", "on-request", "--", "touch", &target]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!exists(&target));
    assert!(stderr(&out).contains("not retried"), "{}", stderr(&out));
    executor.stop();
}

/// No executor, or one that goes away mid-command: a clear error, nothing run locally.
#[test]
fn missing_or_lost_executor_fails_without_local_fallback() {
    let dirs = Dirs::new();
    let executor = Executor::start(&dirs.home);
    dirs.config(&executor.config());
    let socket = executor.socket.clone();
    // Lost mid-command.
    let mut exec = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "exec",
            "-a",
            "never",
            "--",
            "sh",
            "-c",
            "echo started; sleep 30; echo > late",
        ])
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0_u8; 8];
    std::io::Read::read_exact(exec.stdout.as_mut().unwrap(), &mut first).unwrap();
    assert_eq!(&first, b"started\n");
    executor.stop();
    let out = exec.wait_with_output().unwrap();
    let text = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("lost the connection to exec-server"),
        "{text}"
    );
    assert!(text.contains("not run locally"), "{text}");
    assert!(!exists(dirs.ws.join("late")));
    // Nothing listens any more.
    std::fs::remove_file(&socket).ok();
    let out = dirs.exec(&["-a", "never", "--", "sh", "-c", "echo > local-fallback"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("cannot connect to exec-server"),
        "{}",
        stderr(&out)
    );
    assert!(
        !exists(dirs.ws.join("local-fallback")),
        "never a local fallback"
    );
}

#[test]
fn bad_environment_config_is_refused_with_the_key() {
    let dirs = Dirs::new();
    dirs.config("[environment]\ntype = \"remote\"\nurl = \"http://example.invalid\"\n");
    let out = dirs.exec(&["-a", "never", "--", "true"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("environment.url"), "{}", stderr(&out));
    dirs.config("[environment]\ntype = \"remote\"\nurl = \"unix:/x\"\ntoken = \"inline\"\n");
    let out = dirs.exec(&["-a", "never", "--", "true"]);
    assert!(
        stderr(&out).contains("environment.token"),
        "{}",
        stderr(&out)
    );
}

/// `airlock exec` over a loopback WebSocket with the token from `token_file`; a wrong token
/// is refused before anything runs.
#[test]
fn remote_over_websocket_with_a_token() {
    let dirs = Dirs::new();
    let token_file = dirs.scripts.join("token");
    std::fs::write(&token_file, "a-long-random-token-for-tests-0123456789\n").unwrap();
    let mut server = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "exec-server",
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-token-file",
        ])
        .arg(&token_file)
        .env("AIRLOCK_HOME", &dirs.home)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut reader = std::io::BufReader::new(server.stderr.take().unwrap());
    std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("airlock exec-server listening on ws://")
        .unwrap_or_else(|| panic!("unexpected: {line}"))
        .to_owned();
    let config = |file: &Path| {
        format!(
            "[environment]\ntype = \"remote\"\nurl = \"ws://{addr}\"\ntoken_file = \"{}\"\n",
            file.display()
        )
    };
    dirs.config(&config(&token_file));
    let out = dirs.exec(&[
        "-a",
        "never",
        "--",
        "sh",
        "-c",
        "echo over-ws; echo > ws-made",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "over-ws\n");
    assert!(exists(dirs.ws.join("ws-made")));
    let wrong = dirs.scripts.join("wrong");
    std::fs::write(&wrong, "a-long-random-token-for-tests-0123456780\n").unwrap();
    dirs.config(&config(&wrong));
    let out = dirs.exec(&["-a", "never", "--", "sh", "-c", "echo > wrong-token"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("cannot connect to exec-server"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(dirs.ws.join("wrong-token")));
    let _ = server.kill();
    let _ = server.wait();
}

/// The client reconnects: a session keeps working after its executor restarts, and a call
/// made while it is down fails with a clear error (library level, one long-lived client).
#[test]
fn client_reconnects_after_the_executor_restarts() {
    use airlock_core::remote::ExecServerClient;
    use airlock_core::remote::RemoteEnvironment;
    let dirs = Dirs::new();
    let executor = Executor::start(&dirs.home);
    let client = ExecServerClient::new(RemoteEnvironment {
        url: format!("unix:{}", executor.socket.display()),
        token: None,
        request_timeout: Duration::from_secs(20),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let read = |client: &ExecServerClient| {
        runtime.block_on(async {
            let connection = client.connection().await?;
            connection
                .request(
                    "process/read",
                    serde_json::json!({"processId": "none"}),
                    Duration::from_secs(20),
                )
                .await
        })
    };
    let first = read(&client).unwrap_err().to_string();
    assert!(first.contains("unknown process id none"), "{first}");
    let socket = executor.socket.clone();
    let _socket_dir = stop_keeping_socket_dir(executor);
    let down = read(&client).unwrap_err().to_string();
    assert!(down.contains("exec-server"), "{down}");
    // A new executor on the same socket path.
    let mut again = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["exec-server", "--listen"])
        .arg(format!("unix:{}", socket.display()))
        .env("AIRLOCK_HOME", &dirs.home)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !socket.exists() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = read(&client).unwrap_err().to_string();
    assert!(
        after.contains("unknown process id none"),
        "reconnected: {after}"
    );
    let _ = again.kill();
    let _ = again.wait();
}

/// Stops `executor` and removes its socket, returning the socket's directory (still alive)
/// so a new server can bind the same path.
fn stop_keeping_socket_dir(mut executor: Executor) -> tempfile::TempDir {
    let _ = executor.child.kill();
    let _ = executor.child.wait();
    std::fs::remove_file(&executor.socket).unwrap();
    executor.dir.take().unwrap()
}

/// `thread/start` of `airlock serve` accepts a remote environment through its `config`
/// (`environment.*` keys): its shell calls run on the executor, and once the executor is gone
/// they fail naming it instead of running locally.
#[test]
fn app_server_thread_with_a_remote_environment() {
    use std::io::BufRead as _;
    use std::io::Write as _;
    let dirs = Dirs::new();
    let executor = Executor::start(&dirs.home);
    let mut serve = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("serve")
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut input = serve.stdin.take().unwrap();
    let mut output = std::io::BufReader::new(serve.stdout.take().unwrap());
    let mut call = |id: i64, method: &str, params: serde_json::Value| -> serde_json::Value {
        if method == SEND_ONLY {
            writeln!(input, "{params}").unwrap();
            input.flush().unwrap();
            return serde_json::Value::Null;
        }
        let message = serde_json::json!({"id": id, "method": method, "params": params});
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert_ne!(output.read_line(&mut line).unwrap(), 0, "serve exited");
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if value.get("id") == Some(&serde_json::json!(id)) && value.get("method").is_none() {
                return value;
            }
        }
    };
    call(
        1,
        "initialize",
        serde_json::json!({"clientInfo": {"name": "t", "version": "1"}}),
    );
    let url = format!("unix:{}", executor.socket.display());
    let thread = call(
        2,
        "thread/start",
        serde_json::json!({"cwd": dirs.ws, "approvalPolicy": "never",
            "config": {"environment": {"type": "remote", "url": url}}}),
    );
    let thread_id = thread["result"]["thread"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{thread}"))
        .to_owned();
    let turn = call(3, "turn/start", serde_json::json!({"threadId": thread_id}));
    let turn_id = turn["result"]["turn"]["id"].as_str().unwrap().to_owned();
    let shell = |call: &mut dyn FnMut(i64, &str, serde_json::Value) -> serde_json::Value,
                 id: i64,
                 thread: &str,
                 turn: &str,
                 script: &str| {
        call(
            id,
            "tool/shell",
            serde_json::json!({"threadId": thread, "turnId": turn, "callId": format!("c{id}"),
                "command": ["sh", "-c", script]}),
        )
    };
    let ran = shell(
        &mut call,
        4,
        &thread_id,
        &turn_id,
        "echo on-executor; echo > via-serve",
    );
    assert_eq!(ran["result"]["exitCode"], 0, "{ran}");
    assert_eq!(ran["result"]["stdout"], "on-executor\n", "{ran}");
    assert!(exists(dirs.ws.join("via-serve")));
    // turn/interrupt kills a command running on the executor.
    let pid_file = dirs.ws.join("remote.pid");
    let script = format!("echo $$ > '{}'; exec sleep 1000", pid_file.display());
    let message = serde_json::json!({"id": 40, "method": "tool/shell", "params": {"threadId": thread_id,
        "turnId": turn_id, "callId": "long", "command": ["sh", "-c", script]}});
    call_raw(&mut call, &message);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
        assert!(
            Instant::now() < deadline,
            "the remote command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupted = call(
        41,
        "turn/interrupt",
        serde_json::json!({"threadId": thread_id, "turnId": turn_id}),
    );
    assert!(interrupted.get("result").is_some(), "{interrupted}");
    let sandbox_pid = std::fs::read_to_string(&pid_file).unwrap();
    // The shell ran in the sandbox's pid namespace: find it on the host by its command line.
    let marker = format!("echo $$ > '{}'", pid_file.display());
    let deadline = Instant::now() + Duration::from_secs(30);
    while running_with(&marker) {
        assert!(
            Instant::now() < deadline,
            "the interrupted remote command (pid {sandbox_pid}) still runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let turn = call(42, "turn/start", serde_json::json!({"threadId": thread_id}));
    let turn_id = turn["result"]["turn"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{turn}"))
        .to_owned();
    executor.stop();
    let lost = shell(&mut call, 5, &thread_id, &turn_id, "echo > after-stop");
    assert!(lost.to_string().contains("exec-server"), "{lost}");
    assert!(
        !exists(dirs.ws.join("after-stop")),
        "never a local fallback"
    );
    drop(input);
    let _ = serve.kill();
    let _ = serve.wait();
}

/// A pseudo-method of the serve test's `call`: write the params as a raw message, do not wait.
const SEND_ONLY: &str = "\0send";

fn call_raw(
    call: &mut dyn FnMut(i64, &str, serde_json::Value) -> serde_json::Value,
    message: &serde_json::Value,
) {
    call(0, SEND_ONLY, message.clone());
}

/// Whether a process whose command line contains `needle` runs on this host.
fn running_with(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        text.contains(needle)
            && !text.contains("cargo")
            && std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| !s.contains(") Z "))
    })
}
