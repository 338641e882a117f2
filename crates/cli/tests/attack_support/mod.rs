//! Shared pieces of the attack tests (issue 11): run the real `airlock sandbox` (real
//! bubblewrap), run real `git` on the host afterwards, and tell whether a command planted
//! from inside the sandbox ran on the host.
//!
//! The planted command is `touch <marker>` set as `core.fsmonitor` (git runs it on every
//! `git status`) or as a `pre-commit` hook (git runs it on `git commit`). The marker lives in
//! a fresh directory under `/var/tmp`, which no profile used here makes writable, so only the
//! host can create it. Every test also runs its planting script *outside* the sandbox once,
//! to show that the same script does plant a command the host then runs — the attack is real
//! and the check can fail.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `airlock ARGS` from `cwd`, with an unused Airlock home.
pub fn airlock(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(cwd)
        .env("AIRLOCK_HOME", "/nonexistent/airlock-home-unused")
        .output()
        .unwrap()
}

/// `airlock sandbox -P :workspace -C WS -- sh -c SCRIPT` (plus `extra` arguments before `--`).
pub fn sandboxed(ws: &Path, extra: &[&str], script: &str) -> Output {
    let mut profile = vec!["-P", ":workspace"];
    profile.extend_from_slice(extra);
    sandboxed_with(ws, &profile, script)
}

/// `airlock sandbox PROFILE_ARGS -C WS -- sh -c SCRIPT`.
pub fn sandboxed_with(ws: &Path, profile_args: &[&str], script: &str) -> Output {
    let ws_text = ws.to_str().unwrap();
    let mut args = vec!["sandbox"];
    args.extend_from_slice(profile_args);
    args.extend_from_slice(&["-C", ws_text]);
    args.extend_from_slice(&["--", "sh", "-c", script]);
    airlock(&args, ws)
}

/// stdout and stderr of `out`.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Host `git` in `dir` with a fixed identity and no global or system config.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "protocol.file.allow=always",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap()
}

/// [`git`] that must succeed.
pub fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} in {dir:?}: {}",
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh temporary directory under `parent` (canonical path).
pub fn temp_in(parent: &str, prefix: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(parent)
        .unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// Where a planted command leaves its trace.
pub struct Marker {
    _dir: tempfile::TempDir,
    /// The file `touch` creates.
    pub path: PathBuf,
}

impl Marker {
    /// A marker in a fresh directory under `/var/tmp`.
    pub fn new() -> Self {
        let (dir, base) = temp_in("/var/tmp", "airlock-marker-");
        Self {
            _dir: dir,
            path: base.join("planted-command-ran"),
        }
    }

    /// The planted command.
    pub fn command(&self) -> String {
        format!("touch {}", self.path.display())
    }

    /// Whether the planted command ran.
    pub fn fired(&self) -> bool {
        self.path.exists()
    }
}

/// A shell script that tries every simple way to make git run `marker`'s command from the
/// git directory `git_dir` (`config` and `hooks/`): `git config`, appending, replacing the
/// file, replacing the hooks directory, replacing the whole directory. Each step may fail;
/// the script goes on and ends with status 0.
pub fn plant_in_git_dir(git_dir: &Path, marker: &Marker) -> String {
    let dir = git_dir.display();
    let cmd = marker.command();
    format!(
        "git config --file '{dir}/config' core.fsmonitor '{cmd}'; \
         printf '[core]\\n\\tfsmonitor = {cmd}\\n' >> '{dir}/config'; \
         cp '{dir}/config' /tmp/airlock-attack-config.$$ && \
           printf '[core]\\n\\tfsmonitor = {cmd}\\n' >> /tmp/airlock-attack-config.$$ && \
           mv /tmp/airlock-attack-config.$$ '{dir}/config'; \
         mkdir -p '{dir}/hooks'; printf '#!/bin/sh\\n{cmd}\\n' > '{dir}/hooks/pre-commit'; \
           chmod +x '{dir}/hooks/pre-commit'; \
         mv '{dir}/hooks' '{dir}/hooks.old' && mkdir '{dir}/hooks' && \
           printf '#!/bin/sh\\n{cmd}\\n' > '{dir}/hooks/pre-commit' && chmod +x '{dir}/hooks/pre-commit'; \
         mv '{dir}' '{dir}.old' && cp -a '{dir}.old' '{dir}' && \
           git config --file '{dir}/config' core.fsmonitor '{cmd}'; \
         true"
    )
}

/// Runs what the user does next on the host in `worktree` — `git status`, then a commit
/// (which runs `pre-commit`) — and asserts the planted command never ran.
pub fn assert_host_git_is_clean(worktree: &Path, marker: &Marker) {
    let status = git(worktree, &["status", "--short"]);
    assert!(
        !marker.fired(),
        "git status on the host ran the planted command: {}",
        text(&status)
    );
    let commit = git(
        worktree,
        &["commit", "--allow-empty", "-qm", "after the sandbox"],
    );
    assert!(
        !marker.fired(),
        "git commit on the host ran the planted command: {}",
        text(&commit)
    );
}

/// The control: the same planting script run *without* the sandbox makes the host's git
/// run the command, so a clean host above is the sandbox's doing.
pub fn assert_attack_works_unsandboxed(worktree: &Path, script: &str, marker: &Marker) {
    assert_attack_works_unsandboxed_at(worktree, worktree, script, marker);
}

/// [`assert_attack_works_unsandboxed`] with the script run in `script_dir` and git in
/// `worktree`.
pub fn assert_attack_works_unsandboxed_at(
    script_dir: &Path,
    worktree: &Path,
    script: &str,
    marker: &Marker,
) {
    assert!(!marker.fired());
    let ran = Command::new("sh")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-c", script])
        .current_dir(script_dir)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran));
    let _ = git(worktree, &["status", "--short"]);
    let _ = git(worktree, &["commit", "--allow-empty", "-qm", "control"]);
    assert!(
        marker.fired(),
        "control: the planting script did not make host git run the command"
    );
}

/// Runs the tests of one binary one at a time. Each builds repositories under `/tmp`, which
/// every `:workspace` launch scans; a repository another test removes while a launch starts
/// can fail that launch (closed, exit 125: a known race with any process that deletes
/// repositories under `/tmp`), which would make these tests depend on timing.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A snapshot of what git reads from `git_dir`, to compare after the sandboxed run.
pub fn snapshot(git_dir: &Path) -> (String, Vec<String>) {
    let config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    let mut hooks: Vec<String> = std::fs::read_dir(git_dir.join("hooks"))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    hooks.sort();
    (config, hooks)
}

/// Commits a README in `worktree`.
pub fn commit_readme(worktree: &Path) {
    std::fs::write(worktree.join("README"), "hello\n").unwrap();
    git_ok(worktree, &["add", "README"]);
    git_ok(worktree, &["commit", "-qm", "init"]);
}
