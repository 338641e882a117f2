//! Red-team findings F2–F4 through `airlock explain --json`: scripts whose words bash
//! expands (F2), whose heredocs bash ends elsewhere than the parser (F3), or that the
//! parser only reads by error recovery (F4) are not plain, so an allow rule no longer lets
//! them bypass the sandbox, the known-safe list no longer runs them without asking, and a
//! forbidden rule hidden behind them holds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::process::Command;

use serde_json::Value;

/// Allow rules whose matches would bypass the sandbox, and two forbidden commands.
const RULES: &str = "prefix_rule(pattern=[\"find\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"timeout\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"cat\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"status\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"touch\"], decision=\"forbidden\")\n\
prefix_rule(pattern=[\"git\", \"push\"], decision=\"forbidden\")\n";

struct Env {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    rules: std::path::PathBuf,
}

impl Env {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        let rules = home.path().join("words.rules");
        std::fs::write(&rules, RULES).unwrap();
        Self {
            home,
            ws: tempfile::tempdir().unwrap(),
            rules,
        }
    }

    /// `airlock explain --json -a APPROVAL -P :workspace -r RULES -C WS -- bash -lc SCRIPT`
    fn explain(&self, approval: &str, script: &str) -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args([
                "explain",
                "--json",
                "-a",
                approval,
                "-P",
                ":workspace",
                "-r",
            ])
            .arg(&self.rules)
            .arg("-C")
            .arg(self.ws.path())
            .args(["--", "bash", "-lc", script])
            .env("AIRLOCK_HOME", self.home.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn requirement(out: &Value) -> (&str, bool) {
    let requirement = &out["requirement"];
    (
        requirement["type"].as_str().unwrap(),
        requirement["bypass_sandbox"].as_bool().unwrap_or(false),
    )
}

/// Each script is not plain and does not bypass the sandbox (an allow rule matches its
/// words as written).
fn assert_no_bypass(env: &Env, scripts: &[&str]) {
    for script in scripts {
        let out = env.explain("on-request", script);
        assert_eq!(out["plain"], false, "{script:?}: {out}");
        let (kind, bypass) = requirement(&out);
        assert!(!bypass, "{script:?} bypasses the sandbox ({kind}): {out}");
    }
}

/// Each script needs approval under `untrusted`: it is not known-safe any more.
fn assert_not_known_safe(env: &Env, scripts: &[&str]) {
    for script in scripts {
        let out = env.explain("untrusted", script);
        assert_eq!(out["plain"], false, "{script:?}: {out}");
        let (kind, _) = requirement(&out);
        assert_ne!(kind, "skip", "{script:?} runs without asking: {out}");
    }
}

#[test]
fn globs_and_planted_file_names_do_not_bypass() {
    let env = Env::new();
    std::fs::write(env.ws.path().join("-exec"), "").unwrap();
    assert_no_bypass(
        &env,
        &[
            "find . -maxdepth 0 -exe? touch x \\;",
            "find . -maxdepth 0 -exe[c] touch x \\;",
            "find * -quit",
            "timeout 5 truncate -? 0 x",
            "timeout 5 rm -r? x",
            "ls *",
        ],
    );
    assert_not_known_safe(&env, &["ls *", "find *", "cat ?", "find . -exe? rm {} \\;"]);
}

#[test]
fn brace_expansion_does_not_bypass() {
    let env = Env::new();
    assert_no_bypass(
        &env,
        &[
            "find . -maxdepth 0 -{e..e}xec touch x \\;",
            "timeout 5 t{o..o}uch x",
            "find . -{exec,} sh -c 'touch x' \\;",
            "ls {a,b}",
        ],
    );
    assert_not_known_safe(&env, &["find . -{exec,delete}", "ls {a..c}"]);
    // The deny view expands sequences too, so the forbidden command is found.
    for script in [
        "timeout 5 t{o..o}uch x",
        "find . -{e..e}xec touch x \\;",
        "git pu{s..s}h",
    ] {
        let out = env.explain("on-request", script);
        assert_eq!(requirement(&out).0, "forbidden", "{script:?}: {out}");
    }
}

#[test]
fn tilde_forms_parameters_and_backslashes_do_not_bypass() {
    let env = Env::new();
    assert_no_bypass(
        &env,
        &[
            "ls ~+",
            "ls x=~",
            "find . -maxdepth 0 -exe\\c touch x \\;",
            "ls a$",
            "git pu\\\nsh",
            "git status\n\\\ngit push",
            "ls\n\\git push",
        ],
    );
    assert_not_known_safe(&env, &["find . -exe\\c rm {} \\;", "ls ~-"]);
    // A forbidden command that bash runs after such a line is found.
    for script in ["git pu\\\nsh", "git status\n\\\ngit push", "ls\n\\git push"] {
        let out = env.explain("on-request", script);
        assert_eq!(requirement(&out).0, "forbidden", "{script:?}: {out}");
    }
    // The two spellings spec 03 reads as written stay plain.
    let out = env.explain("on-request", "ls ~/src a\\ b");
    assert_eq!(out["plain"], true, "{out}");
    assert_eq!(requirement(&out), ("skip", true), "{out}");
}

#[test]
fn heredocs_bash_ends_elsewhere_need_approval() {
    let env = Env::new();
    for script in [
        "cat <<E\"O\"F\nhi\nEOF\ntouch x\nE\"O\"F",
        "cat <<EOF\nEO\\\nF\ntouch x\nEOF",
        "cat <<A; cat <<B\na\nA\ntouch x\nB",
    ] {
        let out = env.explain("on-request", script);
        assert_eq!(out["plain"], false, "{script:?}: {out}");
        assert_eq!(out["segment_source"], "whole_argv", "{script:?}: {out}");
        let (kind, bypass) = requirement(&out);
        assert!(!bypass && kind != "skip", "{script:?}: {out}");
    }
    // A well-formed heredoc keeps Codex's single-command form.
    let out = env.explain("on-request", "cat <<'EOF'\nhi\nEOF");
    assert_eq!(out["segment_source"], "heredoc", "{out}");
    assert_eq!(requirement(&out), ("skip", false), "{out}");
}

#[test]
fn scripts_bash_refuses_are_one_non_plain_command() {
    let env = Env::new();
    for script in ["ls; }", "then ls", "ls && fi", "ls &&", "git status ))"] {
        let out = env.explain("on-request", script);
        assert_eq!(out["plain"], false, "{script:?}: {out}");
        assert_eq!(out["segments"][0][0], "bash", "{script:?}: {out}");
        assert!(!requirement(&out).1, "{script:?}: {out}");
    }
}
