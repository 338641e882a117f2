//! `airlock sandbox` runs real commands under the real sandbox (issue 4). Each test
//! builds its own workspace in a temporary directory and checks both what the command
//! saw inside and what landed on the host. Repositories in the workspace and `--dry-run`
//! have their own files (`sandbox_repos.rs`, `sandbox_dry_run.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[path = "exec_support/outside.rs"]
mod outside;
mod sandbox_support;

use sandbox_support::{airlock, denied, git_workspace, is_root, sh, text};
use std::process::Command;

#[test]
fn workspace_profile_allows_the_workspace_and_nothing_else() {
    let ws = git_workspace();
    let out = sh(
        ":workspace",
        ws.path(),
        "echo new > created.txt && cat README",
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("created.txt")).unwrap(),
        "new\n"
    );

    let Some(outside) = outside::outside_dir(ws.path()) else {
        return;
    };
    let target = outside.path().join("escape.txt");
    let out = sh(
        ":workspace",
        ws.path(),
        &format!("echo x > {}", target.display()),
    );
    assert!(!out.status.success());
    assert!(
        !target.exists(),
        "write outside the workspace landed on the host"
    );
    assert!(denied(&out), "{}", text(&out));
}

#[test]
fn protected_metadata_stays_read_only_and_placeholders_are_removed() {
    let ws = git_workspace();
    for target in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".codex/x",
        ".agents/x",
    ] {
        let out = sh(
            ":workspace",
            ws.path(),
            &format!("mkdir -p $(dirname {target}) 2>/dev/null; echo evil > {target}"),
        );
        assert!(!out.status.success(), "{target}: {}", text(&out));
        assert!(denied(&out), "{target}: {}", text(&out));
    }
    assert!(!ws.path().join(".git/hooks/pre-commit").exists());
    assert!(
        !ws.path().join(".codex").exists(),
        "placeholder left behind"
    );
    assert!(
        !ws.path().join(".agents").exists(),
        "placeholder left behind"
    );
}

#[test]
fn read_only_profile_writes_nothing() {
    let ws = git_workspace();
    let out = sh(":read-only", ws.path(), "touch new.txt");
    assert!(!out.status.success());
    assert!(denied(&out), "{}", text(&out));
    assert!(!ws.path().join("new.txt").exists());
}

#[test]
fn exit_status_is_the_commands() {
    let ws = git_workspace();
    assert_eq!(sh(":workspace", ws.path(), "exit 7").status.code(), Some(7));
    assert_eq!(sh(":read-only", ws.path(), "exit 0").status.code(), Some(0));
}

#[test]
fn network_is_off_unless_enabled_and_socketpairs_still_work() {
    let ws = git_workspace();
    let connect = "exec 3<>/dev/tcp/127.0.0.1/9";
    let out = airlock(
        &[
            "sandbox",
            "-P",
            ":workspace",
            "-C",
            ws.path().to_str().unwrap(),
            "--",
            "bash",
            "-c",
            connect,
        ],
        ws.path(),
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("Operation not permitted"),
        "{}",
        text(&out)
    );
    let out = sh(
        ":workspace",
        ws.path(),
        "echo $AIRLOCK_SANDBOX $CODEX_SANDBOX_NETWORK_DISABLED",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "linux 1\n");
}

#[test]
fn kernel_knobs_are_read_only_even_for_root() {
    let ws = git_workspace();
    let out = sh(
        ":workspace",
        ws.path(),
        "printf '' >> /proc/sys/kernel/core_pattern",
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
}

#[test]
fn secrets_are_not_inherited() {
    let ws = git_workspace();
    let out = sh(
        ":workspace",
        ws.path(),
        "echo \"key=${OPENAI_API_KEY:-unset}\"",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "key=unset\n");
}

#[test]
fn deny_read_paths_and_globs_are_masked() {
    let ws = git_workspace();
    std::fs::create_dir_all(ws.path().join("a/b/c")).unwrap();
    std::fs::write(ws.path().join("a/b/c/deep.env"), "SECRET=1").unwrap();
    std::fs::write(ws.path().join("private.txt"), "secret").unwrap();
    let wsp = ws.path().to_str().unwrap();
    let private = format!(
        "permissions.deny.filesystem={{\"{wsp}/private.txt\"=\"deny\", \":workspace_roots\"={{\".\"=\"write\", \"**/*.env\"=\"deny\"}}}}"
    );
    let args = [
        "sandbox",
        "-c",
        "permissions.deny.extends=\":workspace\"",
        "-c",
        private.as_str(),
        "-P",
        "deny",
        "-C",
        wsp,
        "--",
        "sh",
        "-c",
        "cat private.txt; cat a/b/c/deep.env; cat README",
    ];
    let out = airlock(&args, ws.path());
    let all = text(&out);
    assert!(
        !all.contains("secret") && !all.contains("SECRET=1"),
        "{all}"
    );
    assert!(all.contains("Permission denied"), "{all}");
    assert!(all.contains("hello"), "{all}");
}

#[test]
fn missing_bubblewrap_fails_before_running_anything() {
    let ws = git_workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "sandbox",
            "-c",
            "sandbox.bwrap_path=\"/nonexistent/bwrap\"",
            "-P",
            ":workspace",
            "-C",
            ws.path().to_str().unwrap(),
            "--",
            "/bin/touch",
            "ran.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out).contains("apt-get install bubblewrap"),
        "{}",
        text(&out)
    );
    assert!(!ws.path().join("ran.txt").exists());
}

#[test]
fn legacy_landlock_refuses_what_it_cannot_express() {
    let ws = git_workspace();
    let wsp = ws.path().to_str().unwrap();
    let out = airlock(
        &[
            "sandbox",
            "--use-legacy-landlock",
            "-P",
            ":workspace",
            "-C",
            wsp,
            "--",
            "true",
        ],
        ws.path(),
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out).contains("legacy Landlock sandbox cannot enforce this profile"),
        "{}",
        text(&out)
    );
    let out = airlock(
        &[
            "sandbox",
            "--use-legacy-landlock",
            "-P",
            ":read-only",
            "-C",
            wsp,
            "--",
            "touch",
            "x",
        ],
        ws.path(),
    );
    assert!(!out.status.success());
    assert!(!ws.path().join("x").exists());
    if is_root() {
        // Landlock cannot take a root launcher's capabilities away: refused, nothing ran.
        assert_eq!(out.status.code(), Some(125));
        assert!(text(&out).contains("holds capabilities"), "{}", text(&out));
    }
}
