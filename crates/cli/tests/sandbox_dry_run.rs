//! `airlock sandbox --dry-run`: the bubblewrap argv it prints (missing commands, user
//! directories) and, with `--save-fds`, a command line that reproduces the real launch.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[path = "exec_support/outside.rs"]
mod outside;
mod sandbox_support;

use sandbox_support::{airlock, git_workspace, sh, text};
use std::process::Command;

/// New-user findings: a dry run never runs anything, a missing command is 127 (not a
/// confusing bwrap error), and the user's own empty protected directories survive.
#[test]
fn dry_run_missing_command_and_user_directories() {
    let ws = git_workspace();
    let wsp = ws.path().to_str().unwrap();
    let marker = ws.path().join("ran");
    let script = format!("touch {}", marker.display());
    for profile in [":danger-full-access", ":workspace"] {
        let out = airlock(
            &[
                "sandbox",
                "--dry-run",
                "-P",
                profile,
                "-C",
                wsp,
                "--",
                "sh",
                "-c",
                &script,
            ],
            ws.path(),
        );
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            !marker.exists(),
            "--dry-run ran the command under {profile}"
        );
    }
    let out = airlock(
        &["sandbox", "-C", wsp, "--", "no-such-command-xyz"],
        ws.path(),
    );
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out).contains("command not found: no-such-command-xyz"));
    std::fs::create_dir(ws.path().join(".codex")).unwrap();
    for _ in 0..2 {
        assert!(sh(":workspace", ws.path(), "true").status.success());
    }
    assert!(
        ws.path().join(".codex").is_dir(),
        "the user's empty .codex was removed"
    );
    assert!(!ws.path().join(".aws").exists(), "placeholder left behind");
}

/// `--dry-run --save-fds DIR` prints a line that runs exactly what Airlock would:
/// run by a shell, it confines the command the same way (seccomp included).
/// `:read-only` has no writable roots, so the by-hand run leaves no placeholder
/// directories behind (nothing would remove them).
#[test]
fn dry_run_with_saved_descriptors_reproduces_the_launch() {
    let ws = git_workspace();
    let wsp = ws.path().to_str().unwrap();
    let fds = tempfile::tempdir().unwrap();
    let outside = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
    // Writes fail (mounts); a TCP socket fails (seccomp, network off).
    let script = format!(
        "echo x > {} 2>/dev/null && echo WROTE; python3 -c 'import socket; socket.socket()' 2>/dev/null && echo SOCKET; echo inside > in.txt 2>/dev/null || echo RAN",
        outside.path().display()
    );
    let out = airlock(
        &[
            "sandbox",
            "--dry-run",
            "--save-fds",
            fds.path().to_str().unwrap(),
            "-P",
            ":read-only",
            "-C",
            wsp,
            "--",
            "sh",
            "-c",
            &script,
        ],
        ws.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let line = String::from_utf8(out.stdout).unwrap();
    let programs: Vec<_> = std::fs::read_dir(fds.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(programs.len(), 3, "{line}");
    for program in &programs {
        let name = program.file_name().unwrap().to_str().unwrap().to_owned();
        let size = std::fs::metadata(program).unwrap().len();
        assert!(size > 0 && size % 8 == 0, "{name}: {size} bytes");
        assert!(line.contains(&format!("<{}", program.display())), "{line}");
    }
    assert!(
        !ws.path().join("in.txt").exists(),
        "--dry-run ran the command"
    );
    let run = Command::new("bash")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("-c")
        .arg(line.trim())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(!stdout.contains("WROTE"), "{stdout}");
    assert!(!stdout.contains("SOCKET"), "{stdout}");
    assert!(stdout.contains("RAN"), "{stdout}");
    assert!(!ws.path().join("in.txt").exists());
    assert_eq!(std::fs::read_to_string(outside.path()).unwrap(), "");
}
