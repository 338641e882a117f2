//! The early-started bubblewrap (`airlock_linux_sandbox::early_bwrap`) against the real
//! bubblewrap: the command runs only when the whole argument list arrived. One test
//! function, so that no other test of this binary spawns children while descriptors are
//! being marked close-on-exec process-wide.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use airlock_linux_sandbox::early_bwrap::EarlyBwrap;

const ROLE: &str = "AIRLOCK_EARLY_BWRAP_TEST_ROLE";
const BWRAP: &str = "/usr/bin/bwrap";

/// A command that leaves `marker` behind when it runs.
fn marking(marker: &Path) -> Vec<OsString> {
    ["/bin/sh", "-c", "echo ran > \"$0\""]
        .iter()
        .map(OsString::from)
        .chain([marker.as_os_str().to_owned()])
        .collect()
}

/// The smallest real launch that can write `dir`.
fn plan(dir: &Path, command: &[OsString]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = ["--ro-bind", "/", "/", "--dev", "/dev", "--bind"]
        .iter()
        .map(OsString::from)
        .collect();
    argv.extend([dir.as_os_str().to_owned(), dir.as_os_str().to_owned()]);
    argv.extend(["--unshare-pid", "--die-with-parent", "--"].map(OsString::from));
    argv.extend(command.iter().cloned());
    argv
}

fn start(command: &[OsString]) -> EarlyBwrap {
    EarlyBwrap::start(Command::new(BWRAP), &[], &[], command).unwrap()
}

fn gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for the init process to reap it.
        if state.is_empty() || state.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// The launcher role: start bubblewrap for the marking command, say its pid, and wait to
/// be killed before sending anything.
fn launcher(marker: &Path) {
    let mut early = start(&marking(marker));
    println!("bwrap-pid {}", early.started().unwrap());
    std::thread::sleep(Duration::from_secs(60));
    drop(early);
}

#[test]
fn bubblewrap_runs_the_command_only_with_its_whole_argument_list() {
    if let Some(marker) = std::env::var_os(ROLE) {
        launcher(Path::new(&marker));
        return;
    }
    if !Path::new(BWRAP).exists() {
        eprintln!("skipped: no {BWRAP} on this host (the helper's own tests report it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let marker = |name: &str| -> PathBuf { dir.join(name) };

    // Sent: the command runs under the plan.
    let command = marking(&marker("sent"));
    let early = start(&command);
    let (mut child, keeper) = early.send(&plan(&dir, &command), &command).unwrap();
    assert!(child.wait().unwrap().success());
    drop(keeper);
    assert_eq!(std::fs::read_to_string(marker("sent")).unwrap(), "ran\n");

    // The starting thread must outlive bubblewrap: `--die-with-parent` is tied to that
    // thread, so releasing it while bubblewrap runs kills the launch (why it is kept).
    let command: Vec<OsString> = ["/bin/sh", "-c", "sleep 0.5; echo ran > \"$0\""]
        .iter()
        .map(OsString::from)
        .chain([marker("released").into_os_string()])
        .collect();
    let early = start(&command);
    let (mut child, keeper) = early.send(&plan(&dir, &command), &command).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(keeper);
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(child.wait().unwrap().signal(), Some(9));
    std::thread::sleep(Duration::from_millis(600));
    assert!(!marker("released").exists());

    // Abandoned (the plan failed or needs other descriptors): killed before it reads.
    let mut early = start(&marking(&marker("abandoned")));
    let pid = early.started().unwrap();
    let seccomp = early.abandon();
    assert!(seccomp.is_empty());
    assert!(gone(pid, Duration::from_secs(5)));
    assert!(!marker("abandoned").exists());

    // Refused by `send` (a list that does not end in the command; one too long for any
    // pipe): handed back still waiting, and killed when dropped.
    let command = marking(&marker("refused"));
    let early = start(&command);
    let early = early
        .send(&plan(&dir, &marking(&marker("other"))), &command)
        .unwrap_err();
    let mut huge = vec![
        OsString::from("--setenv"),
        "X".into(),
        "x".repeat(2 << 20).into(),
    ];
    huge.extend(plan(&dir, &command));
    let mut early = early.send(&huge, &command).unwrap_err();
    let pid = early.started().unwrap();
    assert!(!gone(pid, Duration::from_millis(200)), "still waiting");
    drop(early);
    assert!(gone(pid, Duration::from_secs(5)));
    assert!(!marker("refused").exists());

    // The launcher killed (SIGKILL) before it sent anything: bubblewrap reads an empty
    // list, has no mounts, and cannot run the command.
    let mut launcher = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "bubblewrap_runs_the_command_only_with_its_whole_argument_list",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, marker("killed"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(launcher.stdout.take().unwrap());
    let mut line = String::new();
    let pid: u32 = loop {
        line.clear();
        assert!(
            std::io::BufRead::read_line(&mut out, &mut line).unwrap() > 0,
            "no pid"
        );
        // libtest prints the test's name on the same line.
        if let Some(pid) = line.trim().split("bwrap-pid ").nth(1) {
            break pid.parse().unwrap();
        }
    };
    assert!(
        !gone(pid, Duration::from_millis(200)),
        "waiting for its arguments"
    );
    launcher.kill().unwrap();
    launcher.wait().unwrap();
    assert!(
        gone(pid, Duration::from_secs(5)),
        "bubblewrap {pid} still running"
    );
    assert!(
        !marker("killed").exists(),
        "the command ran without its sandbox"
    );
}
