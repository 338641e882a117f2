//! Issue 17 item 8, "errors that name the file, line, field and the fix": unknown profiles,
//! config and rules-file errors, and the hints for a network failure, a `git commit` on a
//! read-only `.git` and `on-failure`; each runs the real `airlock` binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use std::process::Command;
use std::process::Output;

use exec_support::Dirs;
use exec_support::exists;
use exec_support::stderr;
use exec_support::stdout;
use pretty_assertions::assert_eq;

/// Runs `airlock ARGS` in the workspace with this `$AIRLOCK_HOME`, stdin closed.
fn airlock(dirs: &Dirs, args: &[&str]) -> Output {
    dirs.airlock(args)
}

/// Item 8: `-P nosuch` names the profile and lists the known ones.
#[test]
fn item8_unknown_profile_lists_the_known_ones() {
    let dirs = Dirs::new();
    std::fs::write(
        dirs.home.join("config.toml"),
        "default_permissions = \":workspace\"\n[permissions.mine]\nextends = \":read-only\"\n",
    )
    .unwrap();
    let out = airlock(&dirs, &["exec", "-P", "nosuch", "--", "true"]);
    assert_eq!(out.status.code(), Some(125));
    let text = stderr(&out);
    assert!(
        text.contains("unknown permission profile `nosuch` (-P); known profiles: :read-only, :workspace, :danger-full-access, :external-sandbox, mine"),
        "{text}"
    );
    let out = airlock(&dirs, &["permissions", "show", "-P", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unknown permission profile `nosuch`"));
}

/// Item 8: config errors — a TOML error keeps its snippet, a wrong type says "give a
/// boolean" (once), a granular policy names its missing fields.
#[test]
fn item8_config_error_messages() {
    let dirs = Dirs::new();
    let config = |text: &str| std::fs::write(dirs.home.join("config.toml"), text).unwrap();
    config("approval_policy = \n");
    let out = airlock(&dirs, &["exec", "--", "true"]);
    assert_eq!(out.status.code(), Some(125));
    let text = stderr(&out);
    assert!(
        text.contains("TOML parse error at line 1, column 19\n"),
        "{text}"
    );
    assert!(text.contains("\n1 | approval_policy = \n"), "{text}");
    assert!(text.contains("\n  |                   ^\n"), "{text}");

    config(
        "default_permissions = \"p\"\n[permissions.p]\nextends = \":workspace\"\n[permissions.p.network]\nenabled = \"yes\"\n",
    );
    let out = airlock(&dirs, &["exec", "--", "true"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).contains("fix: give a boolean"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("a a "));

    config("approval_policy = { granular = { sandbox_approval = true, rules = 1 } }\n");
    let out = airlock(&dirs, &["exec", "--", "true"]);
    assert_eq!(out.status.code(), Some(125));
    let text = stderr(&out);
    assert!(text.contains("missing `mcp_elicitations`"), "{text}");
    assert!(
        text.contains("`rules` must be true or false, not integer"),
        "{text}"
    );
}

/// Item 8: rules-file errors for people — a failing `match=` example prints the rule as a
/// rules file spells it; an unclosed call points at the line where it was opened.
/// `execpolicy check` keeps Codex's own text.
#[test]
fn item8_rules_file_error_messages() {
    let dirs = Dirs::new();
    let example = dirs.rules(
        "example.rules",
        "prefix_rule(\n    pattern = [\"git\", \"push\"],\n    decision = \"prompt\",\n    match = [[\"git\", \"status\"]],\n)\n",
    );
    let out = airlock(
        &dirs,
        &["exec", "-r", example.to_str().unwrap(), "--", "true"],
    );
    let text = stderr(&out);
    assert!(
        text.contains("a `match` example matches none of the rules of its call: `git status`; the rule is: prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")"),
        "{text}"
    );
    assert!(!text.contains("PrefixRule {"), "{text}");
    let check = airlock(
        &dirs,
        &[
            "execpolicy",
            "check",
            "-r",
            example.to_str().unwrap(),
            "--",
            "ls",
        ],
    );
    assert_eq!(check.status.code(), Some(1));
    assert!(
        stderr(&check).contains("PrefixRule { pattern"),
        "Codex's text stays"
    );

    let unclosed = dirs.rules(
        "unclosed.rules",
        "# rules\n\nprefix_rule(pattern = [\"a\"])\n\nprefix_rule(\n    pattern = [\"git\", \"push\"],\n    decision = \"allow\",\n\n",
    );
    let out = airlock(
        &dirs,
        &["explain", "-r", unclosed.to_str().unwrap(), "--", "ls"],
    );
    let text = stderr(&out);
    assert!(
        text.contains(&format!(
            "{}:5: this `(` is never closed (the file ends first)",
            unclosed.display()
        )),
        "{text}"
    );
}

/// Item 8: a command that fails on DNS or connect while the profile has no network gets a
/// hint naming the fix; the hinted profile really enables the network.
#[test]
fn item8_network_failure_hint() {
    let dirs = Dirs::new();
    let out = airlock(
        &dirs,
        &[
            "exec",
            "--",
            "python3",
            "-c",
            "import socket; socket.gethostbyname('airlock-17.invalid')",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("airlock: hint: the command seems to have failed reaching the network, and the sandbox has no network under this profile"),
        "{text}"
    );
    assert!(text.contains("[permissions.<id>.network] enabled = true"));
    assert!(text.contains("--sandbox-permissions require_escalated"));
    // Following the hint gives a profile with the network on.
    std::fs::write(
        dirs.home.join("config.toml"),
        "default_permissions = \":workspace\"\n[permissions.net]\nextends = \":workspace\"\n[permissions.net.network]\nenabled = true\n",
    )
    .unwrap();
    let show = airlock(&dirs, &["permissions", "show", "-P", "net"]);
    assert!(
        stdout(&show).contains("network: enabled"),
        "{}",
        stdout(&show)
    );
    // A plain failure gets no hint.
    let out = airlock(&dirs, &["exec", "--", "sh", "-c", "exit 1"]);
    assert!(!stderr(&out).contains("hint"), "{}", stderr(&out));
}

/// Item 8: `git commit` under `on-request` fails on the read-only `.git`; the hint gives the
/// ways forward and `.git` is untouched.
#[test]
fn item8_git_commit_on_read_only_git_hint() {
    let dirs = Dirs::new();
    let init = Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["init", "-q"])
        .current_dir(&dirs.ws)
        .status()
        .unwrap();
    assert!(init.success());
    let out = airlock(
        &dirs,
        &[
            "exec",
            "-a",
            "on-request",
            "--",
            "git",
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@example.invalid",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    );
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("airlock: hint: `.git` is read-only inside the sandbox (protected metadata), and on-request does not retry a sandbox denial. Ways forward: rerun with --sandbox-permissions require_escalated"), "{text}");
    assert!(text.contains(r#"prefix_rule(pattern=["git", "commit"], decision="allow")"#));
    assert!(!exists(dirs.ws.join(".git/index.lock")));
    let head = Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .current_dir(&dirs.ws)
        .output()
        .unwrap();
    assert!(!head.status.success(), "no commit was made");
}

/// Item 8: `on-failure` is documented as an alias and behaves like `on-request`; `-v`
/// never claims a sandbox for an unsandboxed run.
#[test]
fn item8_on_failure_alias_and_honest_verbose() {
    let dirs = Dirs::new();
    let help = airlock(&dirs, &["exec", "--help"]);
    assert!(
        stdout(&help).contains("on-failure: Legacy alias of `on-request` (same behaviour)"),
        "{}",
        stdout(&help)
    );
    let out = airlock(
        &dirs,
        &[
            "exec",
            "-a",
            "on-failure",
            "--",
            "touch",
            "/etc/airlock-17b",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not retried"), "{}", stderr(&out));
    assert!(!exists("/etc/airlock-17b"));

    let out = airlock(
        &dirs,
        &["exec", "-v", "-P", ":danger-full-access", "--", "true"],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = stderr(&out);
    assert!(
        text.contains("requirement: skip approval; no sandbox (the permission profile does not confine commands)"),
        "{text}"
    );
    assert!(!text.contains("run in the sandbox"), "{text}");
    let out = airlock(&dirs, &["exec", "-v", "--", "true"]);
    assert!(stderr(&out).contains("skip approval, run in the sandbox"));
}
