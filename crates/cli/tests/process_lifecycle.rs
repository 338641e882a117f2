//! Issue 17 (process handling): a signalled or killed `airlock` takes its confined command
//! with it, a broken output pipe stops the command as it would stop it writing there itself,
//! a script with a bad `#!` interpreter is 127 / 126 on every path, and calls that never
//! start still get a call id and an audit line. Real `airlock` processes under the real
//! sandbox; every wait is bounded and waits for a condition.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::process::Child;
use std::process::Command;
use std::process::ExitStatus;
use std::process::Stdio;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use exec_support::Dirs;
use exec_support::airlock_bin;
use exec_support::stderr;
use exec_support::stdout;

// Linux signal numbers (the tests run only there; no libc dependency for four constants).
const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;

/// Upper bound of every wait below (a loaded 2-core machine builds while tests run).
const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `condition` until it holds or [`PATIENCE`] has passed; returns whether it held.
fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `sleep` argument no other process on the machine carries: GNU `sleep` adds up its
/// arguments, so `sleep 1000 0.000<pid><n>` sleeps as long as `sleep 1000` does.
fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    format!(
        "0.000{}{}7",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Process ids whose command line has `marker` as one of its arguments (scans `/proc`).
fn with_marker(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .split(|b| *b == 0)
                    .any(|arg| arg == marker.as_bytes())
            })
        })
        .collect()
}

/// How many `sleep` processes carry `marker` (the command itself, not bubblewrap or the
/// helper, whose argv holds it too).
fn sleepers(marker: &str) -> usize {
    with_marker(marker)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).next() == Some(b"sleep"))
        })
        .count()
}

/// Starts `airlock ARGS` in the workspace, stdin and stdout closed, stderr captured.
fn start(dirs: &Dirs, args: &[&str]) -> Child {
    Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (bounded) for `child` to exit; kills it and fails when it does not.
fn wait_bounded(child: &mut Child, what: &str) -> ExitStatus {
    let mut status = None;
    let exited = eventually(|| {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if !exited {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what}: airlock did not exit");
    }
    status.unwrap()
}

fn signal(pid: u32, signal: i32) {
    let status = Command::new("kill")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Runs `prefix -- COMMAND` where COMMAND sleeps with a marker, waits until the marked
/// process exists, sends `sig` to airlock, and checks that airlock ends with the signal's
/// status and that no marked process is left. `tree` adds a second, background sleeper.
fn signal_case(dirs: &Dirs, prefix: &[&str], sig: i32, tree: bool) -> (ExitStatus, String) {
    let mark = marker();
    let script = format!("sleep 1000 {mark} & sleep 1000 {mark}; wait");
    let mut args: Vec<&str> = prefix.to_vec();
    args.push("--");
    if tree {
        args.extend(["sh", "-c", &script]);
    } else {
        args.extend(["sleep", "1000", &mark]);
    }
    let what = format!("{args:?} + signal {sig}");
    let mut child = start(dirs, &args);
    let wanted = if tree { 2 } else { 1 };
    if !eventually(|| sleepers(&mark) >= wanted) {
        let _ = child.kill();
        let _ = child.wait();
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("{what}: the command never started: {err}");
    }
    signal(child.id(), sig);
    let status = wait_bounded(&mut child, &what);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        eventually(|| with_marker(&mark).is_empty()),
        "{what}: still running after airlock ended: {:?}; stderr: {err}",
        with_marker(&mark)
    );
    // The helper removed the mount points it made in the (empty) workspace.
    let leftovers = || -> Vec<_> {
        std::fs::read_dir(&dirs.ws)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect()
    };
    assert!(
        eventually(|| leftovers().is_empty()),
        "{what}: left in the workspace: {:?}",
        leftovers()
    );
    (status, err)
}

/// Item 1: SIGTERM, SIGINT and SIGHUP to `airlock exec` stop the confined command (the
/// helper, both bubblewrap processes and everything inside), unsandboxed too, and airlock
/// ends by the same signal.
#[test]
fn signals_to_exec_stop_the_confined_command() {
    let dirs = Dirs::new();
    for (prefix, sig, tree) in [
        (&["exec"][..], SIGTERM, false),
        (&["exec"], SIGTERM, true),
        (&["exec"], SIGINT, false),
        (&["exec"], SIGHUP, false),
        // Output captured (not streamed): no relay, but the death signal still applies.
        (&["exec", "--json"], SIGTERM, false),
        (&["exec", "-P", ":danger-full-access"], SIGTERM, false),
        (&["exec", "-P", ":danger-full-access"], SIGTERM, true),
    ] {
        let (status, err) = signal_case(&dirs, prefix, sig, tree);
        assert_eq!(
            status.signal(),
            Some(sig),
            "{prefix:?} {sig}: {status:?}, stderr: {err}"
        );
    }
}

/// Item 1: `airlock sandbox` stopped by a signal reports `128 + N`, never "could not start
/// the sandbox" (the command did run), and leaves nothing running.
#[test]
fn signals_to_sandbox_report_the_signal_not_a_setup_failure() {
    let dirs = Dirs::new();
    for (prefix, sig, tree) in [
        (&["sandbox"][..], SIGTERM, false),
        (&["sandbox"], SIGTERM, true),
        (&["sandbox"], SIGINT, false),
        (&["sandbox", "-P", ":read-only"], SIGHUP, false),
    ] {
        let (status, err) = signal_case(&dirs, prefix, sig, tree);
        assert_eq!(status.code(), Some(128 + sig), "{prefix:?} {sig}: {err}");
        assert!(
            !err.contains("could not start") && !err.contains("nothing ran"),
            "{prefix:?} {sig}: {err}"
        );
    }
}

/// A signal that reaches `airlock sandbox` while the sandbox is being set up stops the
/// launch whole (red-team finding of 2026-12-06: forwarded to bubblewrap, it killed only
/// its outer process, the sandbox's first process had not armed its death signal yet, and
/// the command ran on after airlock reported `128 + N`). Signals at 0-30 ms after the
/// start, three signals, every delay: airlock ends with `128 + N` and nothing marked is
/// left running.
#[test]
fn a_signal_during_sandbox_set_up_stops_the_launch_whole() {
    let dirs = Dirs::new();
    let mut left = Vec::new();
    for delay_ms in 0..30_u64 {
        for sig in [SIGTERM, SIGINT, SIGHUP] {
            let mark = marker();
            let mut child = start(&dirs, &["sandbox", "--", "sleep", "1000", &mark]);
            std::thread::sleep(Duration::from_millis(delay_ms));
            signal(child.id(), sig);
            let status = wait_bounded(&mut child, "sandbox during set-up");
            // Before airlock catches signals (its first moments) the signal ends it itself.
            assert!(
                status.code() == Some(128 + sig) || status.signal() == Some(sig),
                "signal {sig} after {delay_ms} ms: {status:?}"
            );
            // Give a survivor the time to show up as the command.
            std::thread::sleep(Duration::from_millis(20));
            if !eventually(|| with_marker(&mark).is_empty()) {
                left.push((sig, delay_ms, with_marker(&mark)));
                for pid in with_marker(&mark) {
                    signal(pid, SIGKILL);
                }
            }
        }
    }
    assert!(
        left.is_empty(),
        "still running after airlock ended: {left:?}"
    );
}

/// Item 1: even SIGKILL, which airlock cannot handle, takes the sandbox down (the helper's
/// death signal and bubblewrap's `--die-with-parent`).
#[test]
fn killed_exec_takes_the_sandbox_down() {
    let dirs = Dirs::new();
    for prefix in [&["exec"][..], &["exec", "-P", ":danger-full-access"]] {
        let (status, _) = signal_case(&dirs, prefix, SIGKILL, false);
        assert_eq!(status.signal(), Some(SIGKILL));
    }
}

/// Runs `airlock ARGS` with stdout a pipe the test closes after the first line; returns
/// that line and airlock's status (bounded wait: before the fix, `exec` never ended).
fn first_line_then_close(dirs: &Dirs, args: &[&str]) -> (String, ExitStatus, String) {
    let mut child = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH")
        .args(args)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0_u8; 1];
    while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    drop(out);
    let status = wait_bounded(&mut child, &format!("{args:?} | head -1"));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (String::from_utf8_lossy(&line).into_owned(), status, err)
}

/// Item 2: `airlock exec -- yes | head -1` ends, with the command's own SIGPIPE status
/// (141, as `yes | head -1` reports `yes`); `sandbox` keeps doing the same.
#[test]
fn broken_stdout_pipe_stops_the_command_with_sigpipe() {
    let dirs = Dirs::new();
    for (args, first) in [
        (&["exec", "--", "yes"][..], "y"),
        (&["exec", "--", "seq", "1", "3000000"], "1"),
        (&["exec", "-P", ":danger-full-access", "--", "yes"], "y"),
        (&["sandbox", "--", "yes"], "y"),
    ] {
        let (line, status, err) = first_line_then_close(&dirs, args);
        assert_eq!(line, first, "{args:?}");
        assert_eq!(status.code(), Some(141), "{args:?}: {status:?} {err}");
    }
}

/// Item 3: a script whose `#!` interpreter is missing is 127, one whose interpreter is not
/// executable 126, on all four paths, with a message naming the interpreter and never a
/// sandbox set-up failure.
#[test]
fn bad_interpreter_is_127_or_126_everywhere() {
    let dirs = Dirs::new();
    let script = |name: &str, text: &str| {
        let path = dirs.ws.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script("badinterp.sh", "#!/nonexistent/interp\necho hi\n");
    std::fs::write(dirs.ws.join("interp"), "plain data\n").unwrap();
    script("noexecinterp.sh", "#!./interp\necho hi\n");
    for prefix in [
        &["exec"][..],
        &["sandbox"],
        &["exec", "-P", ":danger-full-access"],
        &["sandbox", "-P", ":danger-full-access"],
    ] {
        for (name, code, words) in [
            (
                "./badinterp.sh",
                127,
                "bad interpreter /nonexistent/interp: No such file or directory",
            ),
            ("./noexecinterp.sh", 126, "bad interpreter ./interp"),
        ] {
            let mut args = prefix.to_vec();
            args.extend(["--", name]);
            let mut child = start(&dirs, &args);
            let status = wait_bounded(&mut child, name);
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            assert_eq!(status.code(), Some(code), "{args:?}: {err}");
            assert!(err.contains(words), "{args:?}: {err}");
            assert!(
                !err.contains("sandbox") && !err.contains("doctor"),
                "{args:?}: {err}"
            );
        }
    }
}

/// Item 4: calls that end 127 / 126 before anything runs still get a call id (printed
/// with `-v`, in `--json`) and an audit line with that id.
#[test]
fn unrunnable_calls_get_a_call_id_and_an_audit_line() {
    let dirs = Dirs::new();
    let verbose = dirs.exec(&["-v", "--", "nosuchcmd-17"]);
    assert_eq!(verbose.status.code(), Some(127), "{}", stderr(&verbose));
    let err = stderr(&verbose);
    let call_id = err
        .split_whitespace()
        .skip_while(|word| *word != "call")
        .nth(1)
        .unwrap_or_else(|| panic!("no call id: {err}"))
        .to_owned();
    assert!(call_id.starts_with("call-"), "{err}");
    assert!(err.contains("command not found: nosuchcmd-17"), "{err}");

    let noexec = dirs.ws.join("noexec.sh");
    std::fs::write(&noexec, "echo hi\n").unwrap();
    let json = dirs.exec(&["--json", "--", "./noexec.sh"]);
    assert_eq!(json.status.code(), Some(126), "{}", stderr(&json));
    let result: serde_json::Value = serde_json::from_str(stdout(&json).trim()).unwrap();
    let json_id = result["call_id"].as_str().unwrap().to_owned();
    assert_eq!(result["status"], "not_executable");
    assert_ne!(json_id, call_id);

    let audit = dirs.audit();
    assert_eq!(audit.len(), 2, "{audit:?}");
    for (line, id, code) in [(&audit[0], &call_id, 127), (&audit[1], &json_id, 126)] {
        assert_eq!(line["call_id"], id.as_str());
        assert_eq!(line["outcome"]["status"], "unrunnable");
        assert_eq!(line["outcome"]["exit_code"], code);
        assert_eq!(line["attempts"], serde_json::json!([]));
    }
}
