//! Shared helpers of the red-team tests of issue 11 item 4 (`attack_redteam*.rs`): a
//! workspace repository with rules allowing git, host git without the user's config,
//! planting from inside the sandbox, and the check that an allow-listed command stayed in
//! the sandbox.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use crate::exec_support::{Dirs, airlock_bin, exists, stderr};

/// Rules allowing the git commands the attacks use, plus `cd`.
pub const RULES: &str = "prefix_rule(pattern=[\"git\", \"status\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"-C\", \"sub\", \"status\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"fetch\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"clone\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"log\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"push\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"commit\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"cd\"], decision=\"allow\")\n";

/// Host git in `dir` with no global or system config.
pub fn host_git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

pub fn host_git_ok(dir: &Path, args: &[&str]) {
    let out = host_git(dir, args);
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

/// A workspace that is a git repository with one commit, and the rules file.
pub fn workspace() -> (Dirs, String) {
    let dirs = Dirs::new();
    dirs.config("");
    host_git_ok(&dirs.ws, &["init", "-q"]);
    host_git_ok(&dirs.ws, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let rules = dirs.rules("git.rules", RULES).display().to_string();
    (dirs, rules)
}

/// Runs `script` inside the sandbox (it must succeed).
pub fn plant(dirs: &Dirs, script: &str) {
    let out = dirs.exec(&["-a", "never", "--", "sh", "-c", script]);
    assert_eq!(out.status.code(), Some(0), "plant: {}", stderr(&out));
}

/// The allow-listed `command` through `airlock exec -v -r RULES` with `env` added; asserts
/// it stayed in the sandbox, that `-v` says why (`why` in the reason) and that `marker`
/// does not exist.
pub fn assert_kept_in_sandbox(
    dirs: &Dirs,
    rules: &str,
    command: &[&str],
    env: &[(&str, &str)],
    marker: &str,
    why: &str,
) {
    let mut run = Command::new(airlock_bin());
    run.args(["exec", "-v", "-r", rules, "-a", "never", "--"])
        .args(command)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        // cargo's own search path for the test (the target directory, writable when the
        // checkout is under /tmp) would be a reason of its own to stay in the sandbox.
        .env_remove("LD_LIBRARY_PATH")
        .stdin(std::process::Stdio::null());
    for (key, value) in env {
        run.env(key, value);
    }
    let out = run.output().unwrap();
    assert!(
        !exists(marker),
        "{command:?}: the planted command ran on the host"
    );
    let text = stderr(&out);
    assert!(
        text.contains("kept in the sandbox: ") && text.contains(why),
        "{command:?}: -v says why ({why}): {text}"
    );
    let last = dirs.audit().last().unwrap().clone();
    assert_eq!(last["attempts"][0]["sandbox"], "linuxSeccomp", "{last}");
}
