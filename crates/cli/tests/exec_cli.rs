#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `airlock exec` as a user or script runs it (spec 10 §CLI): real processes under the real
//! sandbox, scripted reviewers (hook scripts, automatic-review commands), stdin not a
//! terminal. Checks exit statuses (the command's, or 125 with one line), each decision kind a
//! non-interactive reviewer can give, the retry path, hook precedence, granular categories,
//! bad input (each fails closed with a clear message), `--yolo` and the audit log.
//! The interactive prompt is tested in a real terminal in `exec_tmux.rs`.

mod exec_support;

use std::time::Duration;
use std::time::Instant;

use exec_support::Dirs;
use exec_support::exists;
use exec_support::stderr;
use exec_support::stdout;
use pretty_assertions::assert_eq;

const REFUSED: i32 = 125;

/// The last line of stderr (the one-line reason of a refusal).
fn last_line(output: &std::process::Output) -> String {
    stderr(output).lines().last().unwrap_or_default().to_owned()
}

#[test]
fn exit_status_and_output_are_the_commands() {
    let dirs = Dirs::new();
    let out = dirs.exec(&["--", "sh", "-c", "echo hello; echo oops >&2; exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "hello\n");
    assert!(stderr(&out).starts_with("oops\n"), "{}", stderr(&out));
    let audit = dirs.audit();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["outcome"]["exit_code"], 3);
}

#[test]
fn hook_approval_runs_the_command() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    let out = dirs.exec(&["-a", "untrusted", "--", "touch", "made.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(exists(dirs.ws.join("made.txt")));
    let hook = &dirs.requests("hook")[0];
    assert_eq!(hook["tool_name"], "Bash");
    assert_eq!(hook["tool_input"]["command"], "touch made.txt");
    let audit = &dirs.audit()[0];
    assert_eq!(audit["approvals"][0]["source"], "hook");
    assert_eq!(audit["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(audit["attempts"][0]["sandbox"], "linuxSeccomp");
}

#[test]
fn hook_denial_exits_125_with_its_message() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("deny"));
    let out = dirs.exec(&["-a", "untrusted", "--", "touch", "made.txt"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert_eq!(last_line(&out), "airlock: hook says no");
    assert!(!exists(dirs.ws.join("made.txt")));
    assert_eq!(dirs.audit()[0]["outcome"]["status"], "rejected");
}

#[test]
fn automatic_reviewer_allow_deny_and_timeout() {
    let dirs = Dirs::new();
    dirs.config(&dirs.auto_review("allow"));
    let args = [
        "--reviewer",
        "auto_review",
        "-a",
        "untrusted",
        "--",
        "touch",
        "a.txt",
    ];
    let out = dirs.exec(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let request = &dirs.requests("review")[0];
    assert_eq!(request["action"]["tool"], "shell");
    assert_eq!(request["action"]["command"][0], "touch");

    dirs.config(&dirs.auto_review("deny"));
    let out = dirs.exec(&[
        "--reviewer",
        "auto_review",
        "-a",
        "untrusted",
        "--",
        "touch",
        "b.txt",
    ]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(last_line(&out).contains("automatic approval review denied the action: scripted deny"));
    assert!(!exists(dirs.ws.join("b.txt")));

    dirs.config(&dirs.auto_review_with("sleep 10", 1));
    let started = Instant::now();
    let out = dirs.exec(&[
        "--reviewer",
        "auto_review",
        "-a",
        "untrusted",
        "--",
        "touch",
        "c.txt",
    ]);
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(last_line(&out).contains("timed out"), "{}", stderr(&out));
    assert!(!exists(dirs.ws.join("c.txt")));
    assert_eq!(dirs.audit()[2]["approvals"][0]["decision"], "timed_out");
}

#[test]
fn without_a_terminal_a_prompt_fails_closed() {
    let dirs = Dirs::new();
    let out = dirs.exec(&["-a", "untrusted", "--", "touch", "made.txt"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(
        stderr(&out)
            .lines()
            .any(|line| line == "airlock: approval required but no reviewer is available"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(dirs.ws.join("made.txt")));
    let approval = &dirs.audit()[0]["approvals"][0];
    assert_eq!(approval["source"], "config", "nobody was asked");
}

#[test]
fn forbidden_and_allowed_rules() {
    let dirs = Dirs::new();
    std::fs::write(dirs.ws.join("keep.txt"), "x").unwrap();
    let rules = dirs.rules(
        "demo.rules",
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no deleting\")\n\
         prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n",
    );
    let rules = rules.display().to_string();
    let out = dirs.exec(&["-r", &rules, "--", "rm", "keep.txt"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(last_line(&out).contains("no deleting"), "{}", stderr(&out));
    assert!(exists(dirs.ws.join("keep.txt")));
    // Allowed by rule on every segment: the first attempt bypasses the sandbox.
    let Some(target) = dirs.outside_file("allowed.txt") else {
        return;
    };
    let out = dirs.exec_leaving_sandbox(&["-r", &rules, "-v", "--", "touch", &target]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(exists(&target));
    assert!(stderr(&out).contains("first attempt: sandbox none (not requested)"));
}

/// Retry path through the CLI: under `untrusted` the write outside the workspace fails in
/// the sandbox and the retry runs without it (asked once); under `on-request` the denial is
/// returned with the command's status and not retried.
#[test]
fn sandbox_denial_retry_and_no_retry() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    let Some(target) = dirs.outside_file("retried.txt") else {
        return;
    };
    let out = dirs.exec_leaving_sandbox(&["-a", "untrusted", "--", "touch", &target]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(exists(&target));
    assert!(stderr(&out).contains("Read-only file system"));
    assert!(stderr(&out).contains("retried without the sandbox"));
    // The denial is known only from the command's output, so the unsandboxed retry is
    // asked for again (spec 07 step 6, Airlock addition; invariant 12).
    assert_eq!(dirs.requests("hook").len(), 2);
    let attempts = &dirs.audit()[0]["attempts"];
    assert_eq!(attempts[0]["sandbox"], "linuxSeccomp");
    assert_eq!(attempts[0]["sandbox_denied"], true);
    assert_eq!(attempts[1]["sandbox"], "none");

    let Some(target) = dirs.outside_file("not-retried.txt") else {
        return;
    };
    let out = dirs.exec(&["-a", "on-request", "--", "touch", &target]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!exists(&target));
    assert!(last_line(&out).contains("not retried"), "{}", stderr(&out));
}

/// Hooks first: a hook allow beats strict automatic review; with two hooks any deny wins.
#[test]
fn hook_precedence() {
    let dirs = Dirs::new();
    dirs.config(&format!(
        "{}{}",
        dirs.hook("allow"),
        dirs.auto_review("deny")
    ));
    let out = dirs.exec(&["--strict-auto-review", "--", "touch", "strict.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dirs.requests("review").is_empty());

    let deny = dirs.scripts.join("deny.sh");
    std::fs::write(
        &deny,
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"second hook says no"}}}'"#,
    )
    .unwrap();
    dirs.config(&format!(
        "{}[[hooks.permission_request]]\nmatcher = \"Bash\"\ncommand = \"sh '{}'\"\n",
        dirs.hook("allow"),
        deny.display()
    ));
    let out = dirs.exec(&["-a", "untrusted", "--", "touch", "two.txt"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert_eq!(last_line(&out), "airlock: second hook says no");
    assert!(!exists(dirs.ws.join("two.txt")));
}

/// Granular policies: a rule prompt is allowed when `rules = true`, a heuristic prompt is
/// forbidden when `sandbox_approval = false` (no hook runs), and `rules = false` forbids a
/// rule prompt.
#[test]
fn granular_categories() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    let rules = dirs.rules(
        "ask.rules",
        "prefix_rule(pattern=[\"touch\"], decision=\"prompt\")\n",
    );
    let rules = rules.display().to_string();
    let policy = |sandbox: bool, rules: bool| {
        format!(
            "approval_policy={{granular={{sandbox_approval={sandbox},rules={rules},mcp_elicitations=false}}}}"
        )
    };
    let out = dirs.exec(&[
        "-c",
        &policy(false, true),
        "-r",
        &rules,
        "--",
        "touch",
        "r.txt",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(dirs.requests("hook").len(), 1);

    let out = dirs.exec(&["-c", &policy(false, true), "--", "rm", "-rf", "gone"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(
        last_line(&out).contains("sandbox approval"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        dirs.requests("hook").len(),
        1,
        "no hook for a forbidden category"
    );

    let out = dirs.exec(&[
        "-c",
        &policy(true, false),
        "-r",
        &rules,
        "--",
        "touch",
        "s.txt",
    ]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(last_line(&out).contains("rules"), "{}", stderr(&out));
    assert!(!exists(dirs.ws.join("s.txt")));
}

#[test]
fn unparseable_hook_output_is_a_warning_and_fails_closed() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook_with("echo '{not json'", 10));
    let out = dirs.exec(&["-a", "untrusted", "--", "touch", "made.txt"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    let err = stderr(&out);
    assert!(
        err.contains("airlock: warning: PermissionRequest hook"),
        "{err}"
    );
    assert!(err.contains("no decision"), "{err}");
    assert!(
        stderr(&out)
            .lines()
            .any(|line| line == "airlock: approval required but no reviewer is available"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(dirs.ws.join("made.txt")));
}

#[test]
fn hanging_hook_times_out_and_fails_closed() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook_with("sleep 30", 1));
    let started = Instant::now();
    let out = dirs.exec(&["-a", "untrusted", "--", "touch", "made.txt"]);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(
        stderr(&out).contains("timed out after 1 s"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(dirs.ws.join("made.txt")));
}

#[test]
fn garbage_from_the_reviewer_is_a_denial() {
    let dirs = Dirs::new();
    dirs.config(&dirs.auto_review_with("echo 'sure, go ahead!'", 10));
    let out = dirs.exec(&[
        "--reviewer",
        "auto_review",
        "-a",
        "untrusted",
        "--",
        "touch",
        "g.txt",
    ]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(
        last_line(&out).contains("the automatic approval reviewer gave an unusable answer, so the action was not reviewed and is denied"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(dirs.ws.join("g.txt")));
}

/// A rules file that fails to load: a warning, and every command needs approval — even a
/// known-safe `ls` (non-interactive: refused; with an approving hook: it runs).
#[test]
fn broken_rules_file_makes_every_command_need_approval() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.home.join("rules")).unwrap();
    std::fs::write(
        dirs.home.join("rules/broken.rules"),
        "prefix_rule(pattern=[\n",
    )
    .unwrap();
    let out = dirs.exec(&["--", "ls"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    let err = stderr(&out);
    assert!(
        err.contains("airlock: warning: exec policy unavailable"),
        "{err}"
    );
    assert!(err.contains("broken.rules"), "{err}");
    assert!(
        stderr(&out)
            .lines()
            .any(|line| line == "airlock: approval required but no reviewer is available"),
        "{}",
        stderr(&out)
    );
    let explicit = dirs.rules("bad.rules", "this is not starlark(");
    dirs.config(&dirs.hook("allow"));
    let out = dirs.exec(&["-r", &explicit.display().to_string(), "--", "ls"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("exec policy unavailable"));
    assert_eq!(dirs.requests("hook").len(), 1, "approval was needed");
}

#[test]
fn unknown_profile_and_bad_input_are_refused_before_anything_runs() {
    let dirs = Dirs::new();
    let out = dirs.exec(&["-P", "no-such-profile", "--", "touch", "made.txt"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(
        last_line(&out).contains("no-such-profile"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1);
    let out = dirs.exec(&["--", "", "x"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(last_line(&out).starts_with("airlock: invalid command"));
    let out = dirs.exec(&["-C", "does/not/exist", "--", "true"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(last_line(&out).contains("does/not/exist"));
    dirs.config("approval_policy = \"sometimes\"\n");
    let out = dirs.exec(&["--", "true"]);
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(
        last_line(&out).contains("approval_policy"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(dirs.ws.join("made.txt")));
    assert!(dirs.audit().is_empty(), "nothing was evaluated");
}

#[test]
fn yolo_warns_and_runs_unconfined() {
    let dirs = Dirs::new();
    let Some(target) = dirs.outside_file("yolo.txt") else {
        return;
    };
    let out = dirs.exec(&["--yolo", "--", "touch", &target]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("WARNING: --dangerously-bypass-approvals-and-sandbox"));
    assert!(exists(&target));
    assert_eq!(dirs.audit()[0]["attempts"][0]["sandbox"], "none");
    let out = dirs.exec(&["--yolo", "-a", "untrusted", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "clap refuses the combination");
}

#[test]
fn audit_can_be_disabled_and_never_holds_environment_values() {
    let dirs = Dirs::new();
    let out = std::process::Command::new(exec_support::airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["exec", "--", "printenv", "AIRLOCK_TEST_VALUE"])
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .env("AIRLOCK_TEST_VALUE", "v4lue-never-logged")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "v4lue-never-logged\n");
    let text = std::fs::read_to_string(dirs.home.join("log/audit.jsonl")).unwrap();
    assert!(!text.contains("v4lue-never-logged"));
    assert_eq!(text.lines().count(), 1);
    dirs.config("[audit]\nenabled = false\n");
    let out = dirs.exec(&["--", "true"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(dirs.audit().len(), 1, "no line added");
}

/// A launch that cannot be confined (the configured bubblewrap does not exist) is refused
/// before spawn and never falls back to running unconfined (spec 07 §Errors).
#[test]
fn cannot_confine_is_refused_and_never_run_unconfined() {
    let dirs = Dirs::new();
    let out = std::process::Command::new(exec_support::airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "exec",
            "-c",
            "sandbox.bwrap_path=\"/nonexistent/bwrap\"",
            "--",
            "/usr/bin/touch",
            "made.txt",
        ])
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED));
    assert!(
        last_line(&out).starts_with("airlock: cannot confine the command:"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(dirs.ws.join("made.txt")));
    assert_eq!(dirs.audit()[0]["outcome"]["status"], "error");
}
