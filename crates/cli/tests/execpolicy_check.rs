//! `airlock execpolicy check` as a process: output, exit codes and bad input
//! (spec 02 §`airlock execpolicy check`, reference `execpolicy.md` §1, §6).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output};

use pretty_assertions::assert_eq;

fn airlock<I, S>(args: I, cwd: &Path) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ok.rules"),
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\", justification=\"review\")\n",
    )
    .unwrap();
    dir
}

#[test]
fn prints_compact_json_and_exits_zero() {
    let dir = setup();
    let out = airlock(
        [
            "execpolicy",
            "check",
            "-r",
            "ok.rules",
            "--",
            "git",
            "push",
            "origin",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"git\",\"push\"],\"decision\":\"prompt\",\"justification\":\"review\"}}],\"decision\":\"prompt\"}\n"
    );
    let out = airlock(
        [
            "execpolicy",
            "check",
            "--pretty",
            "--rules",
            "ok.rules",
            "ls",
        ],
        dir.path(),
    );
    assert_eq!(text(&out.stdout), "{\n  \"matchedRules\": []\n}\n");
}

#[test]
fn first_command_token_ends_option_parsing() {
    let dir = setup();
    let out = airlock(
        [
            "execpolicy",
            "check",
            "-r",
            "ok.rules",
            "git",
            "push",
            "--pretty",
            "--",
            "-r",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).starts_with("{\"matchedRules\":[{"),
        "{}",
        text(&out.stdout)
    );
    // An unknown option before the command is a usage error naming it (issue 17; Codex
    // makes it the first command token, conformance case cli-11: a deliberate deviation).
    let out = airlock(
        [
            "execpolicy",
            "check",
            "-r",
            "ok.rules",
            "--bogus-flag",
            "git",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).is_empty());
    assert!(text(&out.stderr).contains("unexpected argument '--bogus-flag'"));
}

#[test]
fn usage_errors_exit_two() {
    let dir = setup();
    for args in [
        vec!["execpolicy", "check", "git", "push"],
        vec!["execpolicy", "check", "-r", "ok.rules"],
        vec!["execpolicy", "check", "--rules", "", "git"],
        vec![
            "execpolicy",
            "check",
            "--pretty",
            "--pretty",
            "-r",
            "ok.rules",
            "git",
        ],
    ] {
        let out = airlock(&args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(
            text(&out.stderr).starts_with("error: "),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn non_utf8_argv_is_a_usage_error() {
    let dir = setup();
    let bad = OsStr::from_bytes(b"git\xff");
    let out = airlock(
        [
            OsStr::new("execpolicy"),
            OsStr::new("check"),
            OsStr::new("-r"),
            OsStr::new("ok.rules"),
            bad,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).lines().next(),
        Some("error: invalid UTF-8 was detected in one or more arguments")
    );
}

#[test]
fn unreadable_rules_files_name_the_file_and_exit_one() {
    let dir = setup();
    std::fs::create_dir(dir.path().join("folder.rules")).unwrap();
    std::fs::write(dir.path().join("latin1.rules"), b"# caf\xe9\n").unwrap();
    for (file, cause) in [
        ("missing.rules", "No such file or directory (os error 2)"),
        ("folder.rules", "Is a directory (os error 21)"),
        ("latin1.rules", "stream did not contain valid UTF-8"),
    ] {
        let out = airlock(
            ["execpolicy", "check", "-r", "ok.rules", "-r", file, "git"],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(1), "{file}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            text(&out.stderr),
            format!("Error: failed to read policy at {file}\n\nCaused by:\n    {cause}\n"),
            "{file}"
        );
    }
}

#[test]
fn malformed_rules_name_file_and_line() {
    let dir = setup();
    std::fs::write(
        dir.path().join("bad.rules"),
        "# ok\nprefix_rule(pattern=[\"rm\"], decision=\"deny\")\n",
    )
    .unwrap();
    let out = airlock(["execpolicy", "check", "-r", "bad.rules", "rm"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("Error: failed to parse policy at bad.rules\n\nCaused by:\n    starlark error: Traceback"), "{stderr}");
    assert!(stderr.contains("* bad.rules:2, in <module>"), "{stderr}");
    assert!(stderr.contains("error: invalid decision: deny"), "{stderr}");
    assert!(stderr.contains("--> bad.rules:2:1"), "{stderr}");
}

#[test]
fn resolve_host_executables_reports_the_resolved_program() {
    let dir = setup();
    let out = airlock(
        [
            "execpolicy",
            "check",
            "-r",
            "ok.rules",
            "--resolve-host-executables",
            "--",
            "./tools/../git",
            "push",
        ],
        dir.path(),
    );
    let cwd = dir.path().canonicalize().unwrap();
    let expected = format!(
        "{{\"matchedRules\":[{{\"prefixRuleMatch\":{{\"matchedPrefix\":[\"git\",\"push\"],\"decision\":\"prompt\",\"resolvedProgram\":\"{}/git\",\"justification\":\"review\"}}}}],\"decision\":\"prompt\"}}\n",
        cwd.display()
    );
    assert_eq!(text(&out.stdout), expected);
}
