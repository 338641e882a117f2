//! Issue 17, the new-user trial (config, CLI strictness, messages): one test per finding,
//! each running the real `airlock` binary and checking the exact exit code and the key
//! words of each message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use std::process::Command;
use std::process::Output;

use exec_support::Dirs;
use exec_support::airlock_bin;
use exec_support::stderr;
use exec_support::stdout;

/// Runs `airlock ARGS` in the workspace with this `$AIRLOCK_HOME`, stdin closed.
fn airlock(dirs: &Dirs, args: &[&str]) -> Output {
    dirs.airlock(args)
}

/// Finding 1: unknown keys in `[exec_policy]`, `[sandbox]` and `[shell_environment_policy]`
/// warn, naming file, table and key and the closest known key; Codex's accepted-but-unused
/// `experimental_use_profile` and the known keys stay quiet.
#[test]
fn unknown_keys_in_read_tables_warn_with_a_suggestion() {
    let dirs = Dirs::new();
    dirs.config(
        "[exec_policy]\nallow_rules_bypass_sandox = false\n\
         [sandbox]\nbwrapp_path = \"/usr/bin/bwrap\"\n\
         [shell_environment_policy]\nignore_default_exclude = true\nfoo = 1\n\
         experimental_use_profile = true\ninherit = \"core\"\n",
    );
    let output = dirs.exec(&["--", "true"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    let config = dirs.home.join("config.toml").display().to_string();
    for expected in [
        "ignoring key `allow_rules_bypass_sandox` in [exec_policy]",
        "did you mean allow_rules_bypass_sandbox?",
        "ignoring key `bwrapp_path` in [sandbox]",
        "did you mean bwrap_path?",
        "ignoring key `ignore_default_exclude` in [shell_environment_policy]",
        "did you mean ignore_default_excludes?",
        "ignoring key `foo` in [shell_environment_policy]",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in {err}");
    }
    assert!(err.contains(&config), "{err}");
    assert!(!err.contains("experimental_use_profile"), "{err}");
    assert!(!err.contains("`inherit`"), "{err}");
    assert!(
        !err.contains("does not use: shell_environment_policy"),
        "{err}"
    );
}

/// Finding 2: `execpolicy check` keeps Codex's reading (an unknown option starts the
/// command, conformance case cli-11; it only evaluates), a missing `-r` is a usage error,
/// and `-r R git status` without `--` works.
#[test]
fn execpolicy_check_reads_unknown_options_as_codex_does() {
    let dirs = Dirs::new();
    let rules = dirs.rules(
        "d.rules",
        "prefix_rule(pattern=[\"git\", \"status\"], decision=\"allow\")\n",
    );
    let rules = rules.to_str().unwrap();
    // Codex compatibility (conformance case cli-11): the unknown option starts the command,
    // which matches no rule; nothing runs either way.
    let output = airlock(
        &dirs,
        &["execpolicy", "check", "-r", rules, "--prety", "--", "ls"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "{\"matchedRules\":[]}\n");
    // Before `-r`, the rules option is then missing: a usage error naming it.
    let output = airlock(
        &dirs,
        &["execpolicy", "check", "--prety", "-r", rules, "--", "ls"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--rules"), "{}", stderr(&output));
    let output = airlock(
        &dirs,
        &[
            "execpolicy",
            "check",
            "-r",
            rules,
            "git",
            "status",
            "--short",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("\"decision\":\"allow\""),
        "{}",
        stdout(&output)
    );
}

/// Finding 3: a malformed `-c` is a usage error (exit 2) naming the expected form.
#[test]
fn malformed_config_override_is_a_usage_error() {
    let dirs = Dirs::new();
    for sub in [vec!["exec"], vec!["explain"], vec!["sandbox"]] {
        let mut args = sub.clone();
        args.extend(["-c", "foo", "--", "true"]);
        let output = airlock(&dirs, &args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("missing `=`") && err.contains("-c key=value"),
            "{err}"
        );
    }
}

/// Finding 4: without a terminal, the refusal names the cause and the ways forward, and
/// `explain --from-log` says "no reviewer available", not "denied by config".
#[test]
fn no_reviewer_names_the_missing_terminal() {
    let dirs = Dirs::new();
    dirs.config("");
    let output = dirs.exec(&["-a", "untrusted", "--", "touch", "x"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{err}");
    for expected in [
        "approval required but no reviewer is available",
        "no terminal to ask on: stdin is not a terminal",
        "run it in a terminal",
        "[hooks]",
        "[auto_review]",
        "allow rule",
        "-a never",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in {err}");
    }
    assert!(!dirs.ws.join("x").exists());
    let audit = dirs.audit();
    let record = audit.last().unwrap();
    assert_eq!(record["approvals"][0]["source"], "config");
    let id = record["call_id"].as_str().unwrap();
    let explained = airlock(&dirs, &["explain", "--from-log", id]);
    let text = stdout(&explained);
    assert_eq!(explained.status.code(), Some(0), "{}", stderr(&explained));
    assert!(
        text.contains("first: denied — no reviewer available"),
        "{text}"
    );
    assert!(!text.contains("denied by config"), "{text}");
    // The same for a patch that needs approval (no allow-rule advice: it would not apply).
    let patch = dirs.scripts.join("p.patch");
    std::fs::write(
        &patch,
        "*** Begin Patch\n*** Add File: made.txt\n+x\n*** End Patch\n",
    )
    .unwrap();
    let output = airlock(
        &dirs,
        &["apply-patch", "-P", ":read-only", patch.to_str().unwrap()],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{err}");
    assert!(
        err.contains("no terminal to ask on: stdin is not a terminal"),
        "{err}"
    );
    assert!(
        err.contains("[auto_review]") && !err.contains("allow rule"),
        "{err}"
    );
    assert!(!dirs.ws.join("made.txt").exists());
}

/// Finding 5: one broken rules file keeps the policy unavailable (the allow rule of the
/// good file does not apply: approval needed), but a `forbidden` rule of the file that
/// loaded still refuses its command, naming the rule and the failed file.
#[test]
fn broken_rules_file_keeps_forbidden_rules_of_the_others() {
    let dirs = Dirs::new();
    dirs.config("");
    let good = dirs.rules(
        "good.rules",
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no deleting\")\n\
         prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n",
    );
    let broken = dirs.rules(
        "broken.rules",
        "prefix_rule(pattern=[\"x\"], decision=\"allo\")\n",
    );
    let (good, broken) = (good.to_str().unwrap(), broken.to_str().unwrap());
    std::fs::write(dirs.ws.join("keep"), "").unwrap();
    let output = dirs.exec(&["-r", good, "-r", broken, "--", "rm", "-f", "keep"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{err}");
    assert!(err.contains("exec policy unavailable"), "{err}");
    assert!(err.contains("broken.rules"), "{err}");
    assert!(err.contains("rejected: no deleting"), "{err}");
    assert!(err.contains("forbidden by rule [\"rm\"]"), "{err}");
    assert!(err.contains("another rules file failed to load"), "{err}");
    assert!(!err.contains("no reviewer is available"), "{err}");
    assert!(dirs.ws.join("keep").exists());
    // The allow rule of the good file does not apply: the command needs approval.
    let output = dirs.exec(&["-r", good, "-r", broken, "--", "ls"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{err}");
    assert!(
        err.contains("approval required but no reviewer is available"),
        "{err}"
    );
    // explain agrees.
    let explained = airlock(
        &dirs,
        &["explain", "-r", good, "-r", broken, "--", "rm", "x"],
    );
    let text = stdout(&explained);
    assert!(
        text.contains("UNAVAILABLE") && text.contains("requirement: forbidden"),
        "{text}"
    );
}

/// Finding 6: a failing `match=` / `not_match=` example names the rule as written and the
/// `file:line` of its `prefix_rule` call, in `execpolicy check` (after Codex's own text)
/// and in the warning of `exec`.
#[test]
fn failing_examples_show_the_rule_as_written_with_its_line() {
    let dirs = Dirs::new();
    dirs.config("");
    let matching = dirs.rules(
        "m.rules",
        "# comment\n\nprefix_rule(\n    pattern=[\"git\", \"push\"],\n    decision=\"prompt\",\n    match=[[\"git\", \"pull\"]],\n)\n",
    );
    // A variable makes the file go through Starlark instead of the literal fast path.
    let not_matching = dirs.rules(
        "n.rules",
        "x = [\"git\"]\nprefix_rule(pattern=x, decision=\"prompt\",\n  not_match=[\"git status\"])\n",
    );
    let (m, n) = (matching.to_str().unwrap(), not_matching.to_str().unwrap());
    let output = airlock(&dirs, &["execpolicy", "check", "-r", m, "--", "ls"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("note: {m}:3: a `match` example matches none")),
        "{err}"
    );
    assert!(err.contains("`git pull`"), "{err}");
    assert!(
        err.contains("prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")"),
        "{err}"
    );
    let output = airlock(&dirs, &["execpolicy", "check", "-r", n, "--", "ls"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "note: {n}:2: a `not_match` example matches its rule: `git status`"
        )),
        "{err}"
    );
    assert!(
        err.contains("prefix_rule(pattern=[\"git\"], decision=\"prompt\")"),
        "{err}"
    );
    let output = dirs.exec(&["-r", n, "--", "true"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{err}");
    assert!(
        err.contains(&format!("{n}:2: a `not_match` example")),
        "{err}"
    );
    let warning = err
        .lines()
        .find(|line| line.contains("exec policy unavailable"))
        .unwrap();
    assert!(!warning.contains("PrefixRuleMatch {"), "{warning}");
}

/// Finding 7: an `airlock` executable inside a writable root of the profile in use gets one
/// warning line from `exec` and `sandbox` (naming the path and the fix; the command still
/// runs), and `doctor` exits 1 because that check FAILs.
#[test]
fn executable_inside_a_writable_root_is_warned_about() {
    let dirs = Dirs::new();
    dirs.config("");
    let copy = dirs.ws.join("airlock");
    if std::fs::hard_link(airlock_bin(), &copy).is_err() {
        std::fs::copy(airlock_bin(), &copy).unwrap();
    }
    let run = |args: &[&str]| {
        Command::new(&copy)
            .env_remove("LD_LIBRARY_PATH")
            .args(args)
            .current_dir(&dirs.ws)
            .env("AIRLOCK_HOME", &dirs.home)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    for args in [vec!["exec", "--", "true"], vec!["sandbox", "--", "true"]] {
        let output = run(&args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {err}");
        let warnings: Vec<&str> = err
            .lines()
            .filter(|line| line.contains("lies inside the writable root"))
            .collect();
        assert_eq!(warnings.len(), 1, "{args:?}: {err}");
        assert!(
            warnings[0].contains(&format!(
                "airlock executable {}",
                copy.canonicalize().unwrap().display()
            )),
            "{err}"
        );
        assert!(
            warnings[0].contains("cargo install --path crates/cli --root /usr/local"),
            "{err}"
        );
        assert!(warnings[0].contains("/usr/local/bin"), "{err}");
    }
    let doctor = run(&["doctor"]);
    let out = stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{out}");
    assert!(
        out.contains("FAIL airlock executable outside the writable roots"),
        "{out}"
    );
    // The real binary, outside every writable root of this workspace: no warning.
    let output = dirs.exec(&["--", "true"]);
    assert_eq!(output.status.code(), Some(0));
    if exec_support::outside::writable_under_workspace(&dirs.ws, &airlock_bin()) {
        return; // a checkout under /tmp: the test binary itself is inside a writable root
    }
    assert!(
        !stderr(&output).contains("lies inside the writable root"),
        "{}",
        stderr(&output)
    );
}

/// Runs `airlock ARGS` in `cwd` with this `$AIRLOCK_HOME`, stdin closed.
fn airlock_in(dirs: &Dirs, cwd: &std::path::Path, args: &[&str]) -> Output {
    Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH")
        .args(args)
        .current_dir(cwd)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Finding 8a: `explain` takes `exec`'s options (strict review and `--yolo` change the
/// report; `--justification` and `-v` change nothing) and refuses what `exec` refuses
/// (`with_additional_permissions`).
#[test]
fn explain_takes_the_options_of_exec() {
    let dirs = Dirs::new();
    dirs.config("");
    let output = airlock(
        &dirs,
        &[
            "explain",
            "--strict-auto-review",
            "--justification",
            "why",
            "-v",
            "--reviewer",
            "auto_review",
            "--",
            "ls",
        ],
    );
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(text.contains("reviewer: auto_review"), "{text}");
    let plain = stdout(&airlock(
        &dirs,
        &["explain", "--reviewer", "auto_review", "--", "ls"],
    ));
    assert!(plain.contains("reviewer: none"), "{plain}");
    let output = airlock(&dirs, &["explain", "--yolo", "--", "touch", "x"]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        text.contains("approval never") && text.contains(":danger-full-access"),
        "{text}"
    );
    for sub in ["exec", "explain"] {
        let output = airlock(
            &dirs,
            &[
                sub,
                "--sandbox-permissions",
                "with_additional_permissions",
                "--",
                "ls",
            ],
        );
        assert_eq!(output.status.code(), Some(2), "{sub}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("with_additional_permissions"),
            "{}",
            stderr(&output)
        );
    }
}

/// Finding 8b: the README's `config.toml` example loads with the real loaders: no warning,
/// its profile selected, its hook routed to.
#[test]
fn readme_config_example_loads() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let block = readme
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README has a ```toml block");
    assert!(
        block.contains("[permissions.dev]") && block.contains("[exec_policy]"),
        "{block}"
    );
    let dirs = Dirs::new();
    std::fs::write(dirs.home.join("config.toml"), block).unwrap();
    let show = airlock(&dirs, &["permissions", "show"]);
    let (out, err) = (stdout(&show), stderr(&show));
    assert_eq!(show.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(out.contains("profile: dev (extends :workspace)"), "{out}");
    assert!(out.contains("deny ") && out.contains(".ssh"), "{out}");
    let explained = airlock(&dirs, &["explain", "-a", "untrusted", "--", "touch", "x"]);
    let (out, err) = (stdout(&explained), stderr(&explained));
    assert_eq!(explained.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(out.contains("reviewer: hook"), "{out}");
}

/// Finding 8c: the audit log and its folder are private to the user.
#[test]
fn audit_log_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dirs = Dirs::new();
    dirs.config("");
    let output = dirs.exec(&["--", "true"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mode =
        |path: std::path::PathBuf| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(dirs.home.join("log")), 0o700);
    assert_eq!(mode(dirs.home.join("log/audit.jsonl")), 0o600);
    // A log left readable by an older version is tightened on the next call.
    std::fs::set_permissions(
        dirs.home.join("log/audit.jsonl"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(
        dirs.home.join("log"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    assert_eq!(dirs.exec(&["--", "true"]).status.code(), Some(0));
    assert_eq!(mode(dirs.home.join("log")), 0o700);
    assert_eq!(mode(dirs.home.join("log/audit.jsonl")), 0o600);
    assert_eq!(dirs.audit().len(), 2);
}

/// Finding 8d: the `.git` hint names the git command that failed, not `git commit`.
#[test]
fn git_hint_names_the_failed_command() {
    let dirs = Dirs::new();
    dirs.config("");
    std::fs::create_dir_all(dirs.ws.join(".git")).unwrap();
    let output = dirs.exec(&["--", "git", "init"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(128), "{err}");
    assert!(
        err.contains("hint: `.git` is read-only inside the sandbox"),
        "{err}"
    );
    assert!(
        err.contains("prefix_rule(pattern=[\"git\", \"init\"], decision=\"allow\")"),
        "{err}"
    );
    assert!(!err.contains("\"commit\""), "{err}");
}

/// Finding 8e: at `/`, `explain` reports the refusal `exec` makes (same reason),
/// `permissions show` and `instructions` warn on stderr.
#[test]
fn filesystem_root_is_reported_everywhere() {
    let dirs = Dirs::new();
    dirs.config("");
    let root = std::path::Path::new("/");
    let exec = airlock_in(&dirs, root, &["exec", "--", "ls"]);
    assert_eq!(exec.status.code(), Some(125));
    let reason = "the working directory is /, the filesystem root";
    assert!(stderr(&exec).contains(reason), "{}", stderr(&exec));
    let explained = airlock_in(&dirs, root, &["explain", "--", "ls"]);
    let text = stdout(&explained);
    assert_eq!(explained.status.code(), Some(0), "{}", stderr(&explained));
    assert!(text.contains("requirement: forbidden"), "{text}");
    assert!(text.contains(reason), "{text}");
    assert!(text.contains("first attempt: nothing runs"), "{text}");
    for args in [vec!["permissions", "show"], vec!["instructions"]] {
        let output = airlock_in(&dirs, root, &args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!stdout(&output).is_empty());
        let err = stderr(&output);
        assert!(
            err.contains("warning: `airlock exec` and `airlock sandbox` refuse to run here"),
            "{err}"
        );
        assert!(err.contains(reason), "{err}");
    }
}
