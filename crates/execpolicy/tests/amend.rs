//! Amendments: line format, idempotency, newline handling, concurrency across
//! processes and crash safety (spec 02 §Amendments, reference §7).
//!
//! The multi-process tests re-run this test binary with `--ignored --exact
//! append_child` and an environment variable that tells the child what to append.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use airlock_execpolicy::{
    AmendError, Decision, NetworkRuleProtocol, PolicyParser, blocking_append_allow_prefix_rule,
    blocking_append_network_rule,
};
use pretty_assertions::assert_eq;
use support::*;

const CHILD_ENV: &str = "AIRLOCK_TEST_APPEND";

fn load_file(path: &Path) -> airlock_execpolicy::Policy {
    let mut parser = PolicyParser::new();
    parser.load_file(path).unwrap_or_else(|e| panic!("{e:?}"));
    parser.build()
}

#[test]
fn appends_the_codex_line_format_creating_folders() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules/nested/default.rules");
    let tokens = argv(&[
        "git",
        "say \"hi\"\\",
        "tab\tnl\n",
        "\u{1}\u{7f}",
        "\u{1F680}\u{2028}",
    ]);
    blocking_append_allow_prefix_rule(&path, &tokens).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "prefix_rule(pattern=[\"git\", \"say \\\"hi\\\"\\\\\", \"tab\\tnl\\n\", \"\\u0001\u{7f}\", \"\u{1F680}\u{2028}\"], decision=\"allow\")\n"
    );
    // The line loads back as exactly those tokens.
    let p = load_file(&path);
    assert_eq!(
        check(&p, &tokens.iter().map(String::as_str).collect::<Vec<_>>()).decision,
        Some(Decision::Allow)
    );
}

#[test]
fn is_idempotent_and_adds_a_missing_final_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("default.rules");
    std::fs::write(&path, "prefix_rule(pattern=[\"ls\"])").unwrap();
    blocking_append_allow_prefix_rule(&path, &argv(&["cargo", "test"])).unwrap();
    blocking_append_allow_prefix_rule(&path, &argv(&["cargo", "test"])).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "prefix_rule(pattern=[\"ls\"])\nprefix_rule(pattern=[\"cargo\", \"test\"], decision=\"allow\")\n"
    );
}

#[test]
fn rejects_empty_prefix_and_unwritable_locations() {
    let dir = tempfile::tempdir().unwrap();
    let err = blocking_append_allow_prefix_rule(&dir.path().join("d.rules"), &[]).unwrap_err();
    assert_eq!(err.to_string(), "prefix rule requires at least one token");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let err =
        blocking_append_allow_prefix_rule(&blocker.join("d.rules"), &argv(&["ls"])).unwrap_err();
    assert!(matches!(err, AmendError::CreateDir { .. }), "{err}");
    let err = blocking_append_allow_prefix_rule(dir.path(), &argv(&["ls"])).unwrap_err();
    assert!(
        err.to_string().starts_with("failed to open policy file"),
        "{err}"
    );
}

#[test]
fn network_amendments_normalise_and_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("default.rules");
    blocking_append_network_rule(
        &path,
        "API.Example.com:443",
        NetworkRuleProtocol::Https,
        Decision::Allow,
        None,
    )
    .unwrap();
    blocking_append_network_rule(
        &path,
        "evil.com.",
        NetworkRuleProtocol::Http,
        Decision::Forbidden,
        Some("exfil \"x\""),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "network_rule(host=\"api.example.com\", protocol=\"https\", decision=\"allow\")\n\
         network_rule(host=\"evil.com\", protocol=\"http\", decision=\"deny\", justification=\"exfil \\\"x\\\"\")\n"
    );
    let p = load_file(&path);
    assert_eq!(p.network_rules().len(), 2);
    assert_eq!(p.network_rules()[1].decision, Decision::Forbidden);
    let err = blocking_append_network_rule(
        &path,
        "x.com",
        NetworkRuleProtocol::Http,
        Decision::Allow,
        Some(" "),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid rule: justification cannot be empty"
    );
    let err = blocking_append_network_rule(
        &path,
        "*.x.com",
        NetworkRuleProtocol::Http,
        Decision::Allow,
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("wildcards are not allowed"));
}

/// Child process body: appends `count` distinct rules tagged `writer` to `path`.
#[test]
#[ignore = "helper process for the multi-process tests below"]
fn append_child() {
    let spec = std::env::var(CHILD_ENV).expect("run by the parent test only");
    let mut parts = spec.splitn(3, '|');
    let (writer, count, path) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let count: usize = count.parse().unwrap();
    for i in 0..count {
        let prefix = argv(&[
            &format!("tool-{writer}"),
            &format!("arg-{i}"),
            "some padding to make the line longer",
        ]);
        blocking_append_allow_prefix_rule(Path::new(path), &prefix).unwrap();
    }
}

fn spawn_appender(writer: usize, count: usize, path: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "append_child",
            "--test-threads=1",
            "--quiet",
        ])
        .env(CHILD_ENV, format!("{writer}|{count}|{}", path.display()))
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn concurrent_processes_never_lose_or_interleave_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("rules/default.rules");
    let children: Vec<Child> = (0..16).map(|w| spawn_appender(w, 200, &path)).collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3200);
    let p = load_file(&path);
    assert_eq!(p.rules().len(), 3200);
    for w in 0..16 {
        for i in [0, 99, 199] {
            let program = format!("tool-{w}");
            let arg = format!("arg-{i}");
            let e = check(
                &p,
                &[&program, &arg, "some padding to make the line longer"],
            );
            assert_eq!(e.decision, Some(Decision::Allow), "{program} {arg}");
        }
    }
}

#[test]
fn killing_an_appender_mid_write_leaves_a_loadable_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("default.rules");
    let (mut lines_before, mut rounds_that_wrote) = (0, 0);
    for round in 0..12u64 {
        let mut child = spawn_appender(round as usize, 100_000, &path);
        // Let the child get going (process start-up dominates the first few ms).
        std::thread::sleep(Duration::from_millis(40 + 7 * round));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let p = load_file(&path);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "round {round}: torn last line"
        );
        assert_eq!(p.rules().len(), text.lines().count(), "round {round}");
        rounds_that_wrote += usize::from(text.lines().count() > lines_before);
        lines_before = text.lines().count();
    }
    // Guard against a vacuous pass: the children must really have been appending when killed.
    assert!(
        rounds_that_wrote >= 6,
        "only {rounds_that_wrote} of 12 children wrote anything"
    );
}
