//! `airlock serve` (spec 10) with a command printing far more than it keeps (red-team F8): a
//! `tool/shell` call's output is streamed as deltas at the pace the client reads, a
//! `command/exec` result and a `tool/shell` one keep the first MiB and say how much was cut,
//! and the server's peak memory stays bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead as _;
use std::io::Write as _;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;
use serde_json::json;

/// The output of the command: 1 GiB.
const PRINTED: u64 = 1 << 30;
/// The bound on the server's peak resident set: 200 MiB.
const PEAK_BOUND_KIB: u64 = 200 * 1024;
/// How long the whole exchange may take (a debug build on a busy machine is slow).
const BOUND: Duration = Duration::from_secs(600);

/// `VmHWM` (peak resident set) of `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_gigabyte_of_output_keeps_the_app_server_memory_bounded() {
    let root = tempfile::Builder::new()
        .prefix("airlock-serve-big-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("serve")
        .current_dir(&ws)
        .env("AIRLOCK_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = serve.id();
    let mut input = serve.stdin.take().unwrap();
    let output = std::io::BufReader::new(serve.stdout.take().unwrap());
    // A reader thread: every line, with only a substring test for the output deltas.
    let (lines_tx, lines) = mpsc::channel::<(Option<Value>, usize)>();
    std::thread::spawn(move || {
        for line in output.lines() {
            let Ok(line) = line else { break };
            let delta = line.contains("\"item/commandExecution/outputDelta\"");
            let value = (!delta).then(|| serde_json::from_str(&line).unwrap());
            if lines_tx.send((value, line.len())).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + BOUND;
    let mut delta_bytes = 0_u64;
    let mut call = |id: i64, method: &str, params: Value| -> Value {
        let message = json!({"id": id, "method": method, "params": params});
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let (value, len) = lines.recv_timeout(left).expect("no answer in time");
            let Some(value) = value else {
                delta_bytes += len as u64;
                continue;
            };
            if value.get("id") == Some(&json!(id)) && value.get("method").is_none() {
                return value;
            }
        }
    };
    call(
        1,
        "initialize",
        json!({"clientInfo": {"name": "t", "version": "1"}}),
    );
    let thread = call(
        2,
        "thread/start",
        json!({"cwd": ws, "approvalPolicy": "never"}),
    );
    let thread_id = thread["result"]["thread"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{thread}"))
        .to_owned();
    let turn = call(3, "turn/start", json!({"threadId": thread_id}));
    let turn_id = turn["result"]["turn"]["id"].as_str().unwrap().to_owned();
    let before = peak_rss_kib(pid);
    let ran = call(
        4,
        "tool/shell",
        json!({"threadId": thread_id, "turnId": turn_id, "callId": "big",
            "command": ["head", "-c", PRINTED.to_string(), "/dev/zero"]}),
    );
    let peak = peak_rss_kib(pid);
    eprintln!("serve VmHWM: {before} KiB before, {peak} KiB after 1 GiB of output");
    let _ = serve.kill();
    let _ = serve.wait();
    let result = &ran["result"];
    assert_eq!(result["exitCode"], 0, "{ran}");
    // Every byte was streamed as deltas (each at least as long as its bytes).
    assert!(delta_bytes > PRINTED, "only {delta_bytes} bytes of deltas");
    // The result keeps the first MiB and reports the rest.
    let kept = result["stdout"].as_str().unwrap().len() as u64;
    assert_eq!(kept, 1 << 20);
    assert_eq!(
        result["stdoutTruncatedBytes"],
        PRINTED - kept,
        "{result:.200}"
    );
    assert!(result.get("stderrTruncatedBytes").is_none());
    assert!(
        peak < PEAK_BOUND_KIB,
        "the server's peak RSS reached {peak} KiB"
    );
}

#[test]
fn command_exec_keeps_the_first_mebibyte_of_a_gigabyte() {
    let root = tempfile::Builder::new()
        .prefix("airlock-serve-exec-big-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("serve")
        .current_dir(&ws)
        .env("AIRLOCK_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = serve.id();
    let mut input = serve.stdin.take().unwrap();
    let output = std::io::BufReader::new(serve.stdout.take().unwrap());
    let (lines_tx, lines) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in output.lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    let mut call = |id: i64, method: &str, params: Value| -> Value {
        let message = json!({"id": id, "method": method, "params": params});
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        loop {
            let value = lines.recv_timeout(BOUND).expect("no answer in time");
            if value.get("id") == Some(&json!(id)) && value.get("method").is_none() {
                return value;
            }
        }
    };
    call(
        1,
        "initialize",
        json!({"clientInfo": {"name": "t", "version": "1"}}),
    );
    let ran = call(
        2,
        "command/exec",
        json!({"command": ["head", "-c", PRINTED.to_string(), "/dev/zero"],
            "permissionProfile": ":read-only"}),
    );
    let peak = peak_rss_kib(pid);
    eprintln!("serve VmHWM after command/exec of 1 GiB: {peak} KiB");
    let _ = serve.kill();
    let _ = serve.wait();
    let result = &ran["result"];
    assert_eq!(result["exitCode"], 0, "{ran:.300}");
    assert_eq!(result["stdout"].as_str().unwrap().len(), 1 << 20);
    assert_eq!(result["stdoutTruncatedBytes"], PRINTED - (1 << 20));
    assert!(
        peak < PEAK_BOUND_KIB,
        "the server's peak RSS reached {peak} KiB"
    );
}
