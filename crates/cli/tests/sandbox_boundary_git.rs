#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Issue 11 item 4 (see also `sandbox_boundary.rs`): an allow rule, an approved escalation
//! or a retry must never take git out of the sandbox into a repository the sandbox wrote,
//! nor past a global git configuration it can write. Each test plants from inside the real
//! sandbox and checks on the host that the planted program never ran.

mod exec_support;

use std::process::Command;

use exec_support::{Dirs, exists, stderr};

/// Item 4. Step 1: a sandboxed run creates `sub/.git` whose `core.fsmonitor` writes a
/// marker on the host. Step 2: `git status` in `sub` allowed by a rule (which would bypass
/// the sandbox) must not run it unconfined: the git runs sandboxed, where the marker path
/// is not writable, and `explain`, `-v` and the audit record say why.
#[test]
fn an_allow_rule_never_takes_git_out_of_the_sandbox_into_a_planted_repository() {
    let dirs = Dirs::new();
    dirs.config("");
    let rules = dirs.rules(
        "git.rules",
        "prefix_rule(pattern=[\"git\", \"status\"], decision=\"allow\")\nprefix_rule(pattern=[\"git\", \"-C\", \"sub\", \"status\"], decision=\"allow\")\nprefix_rule(pattern=[\"cd\"], decision=\"allow\")\n",
    );
    let Some(marker) = dirs.outside_file("fsmonitor-ran") else {
        return;
    };
    let plant = format!("git init -q sub && git -C sub config core.fsmonitor 'touch {marker}'");
    let planted = dirs.exec(&["-a", "never", "--", "sh", "-c", &plant]);
    assert_eq!(planted.status.code(), Some(0), "{}", stderr(&planted));
    assert!(exists(dirs.ws.join("sub/.git/config")), "the plant worked");
    let rules = rules.to_str().unwrap();
    for command in [
        vec!["git", "-C", "sub", "status"],
        vec!["bash", "-lc", "cd sub && git status"],
    ] {
        let mut args = vec!["-v", "-r", rules, "-a", "never", "--"];
        args.extend(&command);
        let out = dirs.exec(&args);
        assert!(
            !exists(&marker),
            "{command:?}: the planted fsmonitor ran on the host"
        );
        assert!(
            stderr(&out).contains("kept in the sandbox: ") && stderr(&out).contains("sub/.git"),
            "{command:?}: -v says why: {}",
            stderr(&out)
        );
        let mut explain = vec!["explain", "-r", rules, "-a", "never", "--"];
        explain.extend(&command);
        let explained = dirs.airlock_with_env(&explain, &[]);
        let text = String::from_utf8_lossy(&explained.stdout);
        assert!(
            text.contains("never runs outside the sandbox: ")
                && text.contains("is writable inside the sandbox"),
            "{command:?}: {text}"
        );
        assert!(text.contains("first attempt: sandboxed"), "{text}");
    }
    let audit = dirs.audit();
    let last = audit.last().unwrap();
    assert_eq!(last["attempts"][0]["sandbox"], "linuxSeccomp", "{last}");
    assert!(
        last["policy"]["unsandboxed"]["refused"]
            .as_str()
            .unwrap()
            .contains("sub/.git"),
        "{last}"
    );
    assert_eq!(last["policy"]["unsandboxed"]["bypass_refused"], true);
}

/// Item 4, config variant: a repository whose git directory the sandbox cannot write
/// (the workspace's own `.git`, protected read-only) but whose config names a program is
/// kept in the sandbox too; a clean one still lets the allow rule bypass it.
#[test]
fn allow_rule_bypass_depends_on_the_repository_config() {
    let dirs = Dirs::new();
    dirs.config("");
    let rules = dirs.rules(
        "git.rules",
        "prefix_rule(pattern=[\"git\", \"status\"], decision=\"allow\")\n",
    );
    let rules = rules.to_str().unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(&dirs.ws)
            .status()
            .unwrap();
        assert!(ok.success());
    };
    git(&["init", "-q"]);
    let out = dirs.exec(&["-r", rules, "-a", "never", "--", "git", "status"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        dirs.audit().last().unwrap()["attempts"][0]["sandbox"],
        "none"
    );
    let Some(marker) = dirs.outside_file("pager-ran") else {
        return;
    };
    git(&["config", "core.pager", &format!("touch {marker}; cat")]);
    let out = dirs.exec(&["-r", rules, "-a", "never", "--", "git", "status"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last = dirs.audit().last().unwrap().clone();
    assert_eq!(last["attempts"][0]["sandbox"], "linuxSeccomp", "{last}");
    assert!(
        last["policy"]["unsandboxed"]["refused"]
            .as_str()
            .unwrap()
            .contains("core.pager"),
        "{last}"
    );
}

/// Item 4, `[exec_policy] allow_rules_bypass_sandbox = false`: an allow rule skips the
/// prompt but not the sandbox; build tools sent outside by a rule are called out.
#[test]
fn allow_rules_can_be_kept_from_bypassing_the_sandbox() {
    let dirs = Dirs::new();
    let rules = dirs.rules(
        "touch.rules",
        "prefix_rule(pattern=[\"touch\"], decision=\"allow\")\nprefix_rule(pattern=[\"make\"], decision=\"allow\")\n",
    );
    let rules = rules.to_str().unwrap();
    let Some(target) = dirs.outside_file("touched") else {
        return;
    };
    dirs.config("");
    let out = dirs.exec(&["-r", rules, "-a", "never", "--", "touch", &target]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        exists(&target),
        "by default an allow rule bypasses the sandbox"
    );
    std::fs::remove_file(&target).unwrap();
    dirs.config("[exec_policy]\nallow_rules_bypass_sandbox = false\n");
    let out = dirs.exec(&["-v", "-r", rules, "-a", "never", "--", "touch", &target]);
    assert!(!exists(&target), "the rule skipped only the prompt");
    assert!(
        stderr(&out).contains("allow_rules_bypass_sandbox = false"),
        "{}",
        stderr(&out)
    );
    dirs.config("");
    let explained = dirs.airlock_with_env(
        &["explain", "-r", rules, "-a", "never", "--", "make", "all"],
        &[],
    );
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(
        text.contains("runs workspace code unconfined: `make all`"),
        "{text}"
    );
}

/// Plants `sub/.git` with a `core.fsmonitor` that writes `marker`, from inside the sandbox.
fn plant_fsmonitor_repository(dirs: &Dirs, marker: &str) {
    let plant = format!("git init -q sub && git -C sub config core.fsmonitor 'touch {marker}'");
    let planted = dirs.exec(&["-a", "never", "--", "sh", "-c", &plant]);
    assert_eq!(planted.status.code(), Some(0), "{}", stderr(&planted));
    assert!(exists(dirs.ws.join("sub/.git/config")), "the plant worked");
}

/// Item 4, the other ways out of the sandbox: an approved escalation request
/// (`require_escalated`) and the unsandboxed retry after a denial. Neither may run git in
/// the planted repository unconfined, even with a reviewer that approves everything.
#[test]
fn escalations_and_retries_never_run_git_in_a_planted_repository_unconfined() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    let Some(marker) = dirs.outside_file("fsmonitor-ran") else {
        return;
    };
    plant_fsmonitor_repository(&dirs, &marker);
    let escalated = dirs.exec(&[
        "-v",
        "-a",
        "untrusted",
        "--sandbox-permissions",
        "require_escalated",
        "--",
        "git",
        "-C",
        "sub",
        "status",
    ]);
    assert!(!exists(&marker), "the escalation ran the planted fsmonitor");
    assert!(
        stderr(&escalated)
            .contains("kept in the sandbox: `git -C sub status` would read configuration"),
        "{}",
        stderr(&escalated)
    );
    assert_eq!(
        dirs.audit().last().unwrap()["attempts"][0]["sandbox"],
        "linuxSeccomp"
    );
    // A denial (here only printed) would normally lead to an unsandboxed retry.
    let denied = dirs.exec(&[
        "-v",
        "-a",
        "untrusted",
        "--",
        "sh",
        "-c",
        "git -C sub status; echo 'Operation not permitted' >&2; exit 1",
    ]);
    assert!(!exists(&marker), "the retry ran the planted fsmonitor");
    assert!(
        stderr(&denied).contains("not retried: outside the sandbox it would run code"),
        "{}",
        stderr(&denied)
    );
    let last = dirs.audit().last().unwrap().clone();
    assert_eq!(last["attempts"].as_array().unwrap().len(), 1, "{last}");
    assert_eq!(last["no_retry"], "planted_code", "{last}");
}

/// Item 4, the user's own configuration: with a profile that writes `$HOME` and names
/// `~/.gitconfig` itself (an explicit entry lifts the protection of a home's startup files),
/// a confined run can plant `core.fsmonitor` in `~/.gitconfig`, which every git reads. An
/// allow-listed `git status` in a clean repository must then stay in the sandbox.
#[test]
fn a_global_git_config_the_sandbox_can_write_keeps_git_confined() {
    let dirs = Dirs::new();
    let Some(outside) = dirs.outside() else {
        return;
    };
    let home = outside.join("home");
    std::fs::create_dir_all(&home).unwrap();
    dirs.config(&format!(
        "default_permissions = \"homey\"\n[permissions.homey]\nextends = \":workspace\"\n[permissions.homey.filesystem]\n{:?} = \"write\"\n{:?} = \"write\"\n",
        home.display().to_string(),
        home.join(".gitconfig").display().to_string()
    ));
    let ok = Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["init", "-q"])
        .current_dir(&dirs.ws)
        .status()
        .unwrap();
    assert!(ok.success());
    let rules = dirs.rules(
        "git.rules",
        "prefix_rule(pattern=[\"git\", \"status\"], decision=\"allow\")\n",
    );
    let Some(marker) = dirs.outside_file("global-fsmonitor-ran") else {
        return;
    };
    let home_env = home.to_str().unwrap();
    let plant =
        format!("printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > \"$HOME/.gitconfig\"");
    let planted = dirs.airlock_with_env(
        &["exec", "-a", "never", "--", "sh", "-c", &plant],
        &[("HOME", home_env)],
    );
    assert_eq!(planted.status.code(), Some(0), "{}", stderr(&planted));
    assert!(home.join(".gitconfig").exists(), "the plant worked");
    let out = dirs.airlock_with_env(
        &[
            "exec",
            "-v",
            "-r",
            rules.to_str().unwrap(),
            "-a",
            "never",
            "--",
            "git",
            "status",
        ],
        &[("HOME", home_env)],
    );
    assert!(
        !exists(&marker),
        "the planted global fsmonitor ran on the host"
    );
    assert!(
        stderr(&out).contains(".gitconfig is writable inside the sandbox"),
        "{}",
        stderr(&out)
    );
}
