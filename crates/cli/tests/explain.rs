//! `airlock explain` as a process (spec 10 §CLI, issue 5 item 4): the JSON object, the
//! human report, exit codes and bad input (spec 03 edge case 16).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

struct Env {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Env {
    fn new(rules: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("rules")).unwrap();
        std::fs::write(home.path().join("rules/default.rules"), rules).unwrap();
        Self {
            home,
            ws: tempfile::tempdir().unwrap(),
        }
    }

    fn run<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .arg("explain")
            .arg("-C")
            .arg(self.ws.path())
            .args(args)
            .env("AIRLOCK_HOME", self.home.path())
            .env_remove("RUST_BACKTRACE")
            // The host's own git configuration (a CI's credential helper in /tmp) would
            // rightly keep allow-listed git in the sandbox; these tests judge the rules.
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_SYSTEM", "/dev/null")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap()
    }

    fn json<I, S>(&self, args: I) -> Value
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut all: Vec<OsString> = vec!["--json".into()];
        all.extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        let output = self.run(all);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const RULES: &str = "prefix_rule(pattern=[\"git\", \"pull\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\", justification=\"pushes are reviewed\")\n";

#[test]
fn json_has_the_fields_of_spec_10() {
    let env = Env::new(RULES);
    let out = env.json(["--", "bash", "-lc", "git pull && git status"]);
    assert_eq!(out["segments"], json!([["git", "pull"], ["git", "status"]]));
    assert_eq!(out["plain"], json!(true));
    assert_eq!(
        out["inner"][0],
        json!(["bash", "-lc", "git pull && git status"])
    );
    assert_eq!(
        out["requirement"],
        json!({"type": "skip", "bypass_sandbox": false, "reason": null,
               "proposed_execpolicy_amendment": null})
    );
    assert_eq!(out["reviewer"], json!("none"));
    assert_eq!(out["first_attempt_sandboxed"], json!(true));
    assert_eq!(
        out["matched_rules"][0]["matches"],
        json!([{"prefixRuleMatch": {"matchedPrefix": ["git", "pull"], "decision": "allow"}}])
    );
    assert_eq!(
        out["matched_rules"][1]["matches"],
        json!([{"heuristicsRuleMatch": {"command": ["git", "status"], "decision": "allow"}}])
    );
}

#[test]
fn needs_approval_names_the_reason_and_the_reviewer() {
    let env = Env::new(RULES);
    let out = env.json(["--", "timeout", "5", "git", "push"]);
    assert_eq!(out["requirement"]["type"], json!("needs_approval"));
    assert_eq!(
        out["requirement"]["reason"],
        json!("`timeout 5 git push` requires approval: pushes are reviewed")
    );
    assert_eq!(out["reviewer"], json!("user"));
    assert_eq!(
        out["deny_view_matches"][0]["command"],
        json!(["git", "push"])
    );
    let auto = env.json(["--reviewer", "auto_review", "--", "git", "push"]);
    assert_eq!(auto["reviewer"], json!("auto_review"));
}

#[test]
fn forbidden_prints_null_first_attempt() {
    let env = Env::new(RULES);
    let out = env.json(["-a", "never", "--", "git", "push"]);
    assert_eq!(out["requirement"]["type"], json!("forbidden"));
    assert_eq!(out["first_attempt_sandboxed"], Value::Null);
    assert_eq!(out["reviewer"], json!("none"));
}

#[test]
fn escalation_and_profiles_decide_the_first_attempt() {
    let env = Env::new(RULES);
    let escalated = env.json([
        "--sandbox-permissions",
        "require_escalated",
        "--",
        "git",
        "pull",
    ]);
    assert_eq!(escalated["requirement"]["bypass_sandbox"], json!(true));
    assert_eq!(escalated["first_attempt_sandboxed"], json!(false));
    let external = env.json(["-P", ":external-sandbox", "--", "cargo", "build"]);
    assert_eq!(external["requirement"]["type"], json!("skip"));
    assert_eq!(external["first_attempt_sandboxed"], json!(false));
}

#[test]
fn explicit_rules_replace_the_configured_ones() {
    let env = Env::new(RULES);
    let rules = env.ws.path().join("only.rules");
    std::fs::write(
        &rules,
        "prefix_rule(pattern=[\"cargo\"], decision=\"forbidden\")\n",
    )
    .unwrap();
    let out = env.json([
        OsStr::new("-r"),
        rules.as_os_str(),
        OsStr::new("--"),
        OsStr::new("git"),
        OsStr::new("push"),
    ]);
    assert_eq!(out["requirement"]["type"], json!("skip"));
    let cargo = env.json([
        OsStr::new("-r"),
        rules.as_os_str(),
        OsStr::new("--"),
        OsStr::new("cargo"),
    ]);
    assert_eq!(cargo["requirement"]["type"], json!("forbidden"));
}

#[test]
fn a_broken_rules_file_warns_and_fails_closed() {
    let env = Env::new("prefix_rule(pattern=[\"ls\"], decision=\"sometimes\")\n");
    let output = env.run(["--json", "--", "ls"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("warning: exec policy unavailable"),
        "{stderr}"
    );
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out["requirement"]["type"], json!("needs_approval"));
    let never = env.json(["-a", "never", "--", "ls"]);
    assert_eq!(never["requirement"]["type"], json!("forbidden"));
}

#[test]
fn bad_input_exits_2_without_json() {
    let env = Env::new("");
    let cases: Vec<Vec<OsString>> = vec![
        vec![],
        vec!["".into()],
        vec!["".into(), "-lc".into(), "ls".into()],
        vec![OsString::from_vec(vec![0xff, b'l', b's'])],
        vec!["ls".into(), OsString::from_vec(vec![b'a', 0xfe])],
    ];
    for command in cases {
        let mut args: Vec<OsString> = vec!["--json".into(), "--".into()];
        args.extend(command.iter().cloned());
        let output = env.run(&args);
        assert_eq!(output.status.code(), Some(2), "{command:?}");
        assert!(output.stdout.is_empty(), "{command:?}");
        assert!(
            text(&output.stderr).contains("invalid command"),
            "{command:?}"
        );
    }
}

#[test]
fn empty_and_broken_scripts_are_conservative() {
    let env = Env::new("prefix_rule(pattern=[\"bash\", \"-lc\"], decision=\"allow\")\n");
    for script in ["", "   ", "ls &&", "'"] {
        let out = env.json(["-a", "untrusted", "--", "bash", "-lc", script]);
        assert_eq!(out["plain"], json!(false), "{script:?}");
        assert_eq!(
            out["requirement"]["bypass_sandbox"],
            json!(false),
            "{script:?}"
        );
        assert_eq!(
            out["requirement"]["proposed_execpolicy_amendment"],
            Value::Null
        );
    }
}

#[test]
fn the_report_is_layered_and_hides_nothing() {
    let env = Env::new(RULES);
    let output = env.run(["--", "bash", "-lc", "git pull && echo \u{202e}x"]);
    assert_eq!(output.status.code(), Some(0));
    let report = text(&output.stdout);
    for heading in [
        "policy layer",
        "approval layer",
        "enforcement layer",
        "first attempt: sandboxed",
    ] {
        assert!(report.contains(heading), "{report}");
    }
    assert!(report.contains("\\u{202e}"), "{report}");
    assert!(!report.contains('\u{202e}'), "{report}");
}

#[test]
fn working_directory_must_exist() {
    let env = Env::new("");
    let output = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["explain", "-C", "/nonexistent/dir", "--", "ls"])
        .env("AIRLOCK_HOME", env.home.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("working directory"));
}

/// Issue 18 item 6 (field log BL-15): bare network tools, interpreters and wrappers are
/// never offered as a prefix; an offered rule names the file it is saved to and its scope.
#[test]
fn proposals_refuse_bare_tools_and_show_where_the_rule_goes() {
    let env = Env::new("");
    for prefix in [
        "curl", "wget", "ssh", "nc", "python3", "node", "perl -e", "bash", "setsid",
    ] {
        let out = env.json([
            "-a",
            "untrusted",
            "--prefix-rule",
            prefix,
            "--",
            "bash",
            "-lc",
            &format!("{prefix} x"),
        ]);
        // The model's bare prefix is refused; at most the whole segment is offered.
        let words: Vec<&str> = prefix.split(' ').collect();
        assert_ne!(
            out["requirement"]["proposed_execpolicy_amendment"],
            json!(words),
            "{prefix}"
        );
    }
    let out = env.json(["-a", "untrusted", "--", "cargo", "build"]);
    assert_eq!(
        out["requirement"]["proposed_execpolicy_amendment"],
        json!(["cargo", "build"])
    );
    let saved = env.home.path().join("rules/default.rules");
    assert_eq!(out["amendment_file"], json!(saved));
    let report = text(&env.run(["-a", "untrusted", "--", "cargo", "build"]).stdout);
    assert!(
        report.contains(&format!(
            "saved to: {} (your user rules: applies in every project",
            saved.display()
        )),
        "{report}"
    );
}
