#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Issue 11, red-team finding F12: the launch race. Between Airlock computing a launch's
//! mount plan and bubblewrap performing it, a sandboxed command already running in the same
//! workspace tries to replace a directory on the way to a protected path (`.git`, a nested
//! repository's `.git`) with a symlink or a fresh directory, so that the new launch's
//! `--ro-bind` lands elsewhere and the real `.git` stays writable in it.
//!
//! Why it cannot work: inside the running sandbox every path it protects is a mount point and
//! every ancestor of one inside a writable root is pinned (bound onto itself), so renaming or
//! replacing any of them fails with `EBUSY`; anything a later launch protects that the
//! running one does not is already writable by the running one directly, so the race widens
//! nothing. This test runs the race for real: a swapper loops in one sandbox while other
//! sandboxes launch and try to plant a command in both git directories; the host's git never
//! runs it. The control plants the same way outside the sandbox, and host git does run it.

mod attack_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use attack_support::{
    Marker, assert_attack_works_unsandboxed, assert_host_git_is_clean, git_ok, plant_in_git_dir,
    sandboxed, serial, temp_in, text,
};

#[test]
fn a_concurrent_swapper_cannot_move_a_launch_s_read_only_binds() {
    let _serial = serial();
    let (_dir, base) = temp_in("/var/tmp", "airlock-race-");
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    git_ok(&ws, &["init", "-q"]);
    git_ok(&ws.join("sub"), &["init", "-q"]);
    git_ok(&ws, &["commit", "-q", "--allow-empty", "-m", "init"]);
    git_ok(
        &ws.join("sub"),
        &["commit", "-q", "--allow-empty", "-m", "init"],
    );
    let marker = Marker::new();
    // The swapper: for a few seconds, every way to move a protected path or its folder out
    // of the way and put a writable stand-in (a symlink to a decoy, a fresh directory) there.
    let swapper = "end=$(( $(date +%s) + 4 )); mkdir -p decoy/.git; \
         while [ \"$(date +%s)\" -lt \"$end\" ]; do \
           mv sub sub.away 2>/dev/null && ln -s decoy sub; \
           mv sub/.git sub/.git.away 2>/dev/null && ln -s ../decoy/.git sub/.git; \
           mv .git .git.away 2>/dev/null && ln -s decoy/.git .git; \
           rm -rf sub/.git 2>/dev/null; \
         done; true";
    let background = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["sandbox", "-P", ":workspace", "-C"])
        .arg(&ws)
        .args(["--", "sh", "-c", swapper])
        .current_dir(&ws)
        .env("AIRLOCK_HOME", "/nonexistent/airlock-home-unused")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let plant = format!(
        "{}; {}",
        plant_in_git_dir(&ws.join(".git"), &marker),
        plant_in_git_dir(&ws.join("sub/.git"), &marker)
    );
    let started = Instant::now();
    let mut launches = 0;
    while started.elapsed() < Duration::from_secs(3) {
        let out = sandboxed(&ws, &[], &plant);
        // A launch that sees a half-moved tree may refuse to start (exit 125): closed.
        assert!(matches!(out.status.code(), Some(0 | 125)), "{}", text(&out));
        launches += 1;
    }
    let swapped = background.wait_with_output().unwrap();
    assert!(swapped.status.success(), "{}", text(&swapped));
    assert!(launches > 0);
    for dir in ["sub.away", "sub/.git.away", ".git.away"] {
        assert!(
            std::fs::symlink_metadata(ws.join(dir)).is_err(),
            "the swapper moved {dir}"
        );
    }
    assert_host_git_is_clean(&ws, &marker);
    assert_host_git_is_clean(&ws.join("sub"), &marker);
    assert_attack_works_unsandboxed(&ws.join("sub"), &plant, &marker);
}
