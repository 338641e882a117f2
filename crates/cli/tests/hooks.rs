//! `airlock hook claude-code|gemini` as a process (spec 13): recorded-shape hook payloads
//! (`hook_payloads/`, one per harness and decision kind) with their exact stdout and exit
//! code; malformed payloads and unusable configuration never block and never allow (exit 0,
//! empty stdout, one stderr line); `--print-config`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;

const RULES: &str = r#"prefix_rule(pattern=["rm", "-rf"], decision="forbidden", justification="recursive deletes are not allowed")
prefix_rule(pattern=["git", "push"], decision="prompt", justification="pushes are reviewed")
prefix_rule(pattern=["cargo", "test"], decision="allow")
"#;

struct Env {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Env {
    fn new(rules: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("rules")).unwrap();
        std::fs::write(home.path().join("rules/default.rules"), rules).unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("sub")).unwrap();
        Self { home, ws }
    }

    /// Runs `airlock hook ARGS` with `input` on stdin.
    fn hook(&self, args: &[&str], input: &[u8]) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .arg("hook")
            .args(args)
            .current_dir(self.ws.path())
            .env("AIRLOCK_HOME", self.home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    }

    /// A payload from `hook_payloads/` with its `__CWD__` set to the workspace.
    fn payload(&self, name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/hook_payloads")
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(path).unwrap();
        let cwd = self.ws.path().to_str().unwrap();
        text.replace("__CWD__", cwd).into_bytes()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts exit 0 and the exact stdout.
fn expect(output: &Output, stdout: &str, case: &str) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{case}: {}",
        text(&output.stderr)
    );
    assert_eq!(
        text(&output.stdout),
        stdout,
        "{case}: {}",
        text(&output.stderr)
    );
}

const FORBIDDEN_RM: &str = "airlock: `rm -rf build` rejected: recursive deletes are not allowed";

#[test]
fn claude_code_pre_tool_use_per_decision_kind() {
    let env = Env::new(RULES);
    let cases: [(&str, &[&str], String); 7] = [
        (
            "claude_pre_forbidden",
            &[],
            format!(
                "{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{FORBIDDEN_RM}\"}}}}\n"
            ),
        ),
        (
            "claude_pre_needs_approval",
            &[],
            "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"airlock: `git push origin main` requires approval: pushes are reviewed\"}}\n".to_owned(),
        ),
        // Skip without --allow-skip: no decision, Claude Code's own rules apply.
        ("claude_pre_skip_rule", &[], String::new()),
        ("claude_pre_skip_known_safe", &[], String::new()),
        (
            "claude_pre_skip_rule",
            &["--allow-skip"],
            "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"airlock: no approval needed (known safe or allowed by a rule)\"}}\n".to_owned(),
        ),
        // Another tool: never a decision, even with a command-like input.
        ("claude_pre_other_tool", &[], String::new()),
        ("claude_pre_other_tool", &["--allow-skip"], String::new()),
    ];
    for (name, extra, stdout) in cases {
        let mut args = vec!["claude-code"];
        args.extend_from_slice(extra);
        let output = env.hook(&args, &env.payload(name));
        expect(&output, &stdout, name);
    }
}

#[test]
fn claude_code_permission_request_answers_only_explicit_rules() {
    let env = Env::new(RULES);
    let cases = [
        (
            "claude_permission_forbidden",
            "{\"hookSpecificOutput\":{\"decision\":{\"behavior\":\"deny\",\"message\":\"airlock: `cargo test && rm -rf /` rejected: recursive deletes are not allowed\"},\"hookEventName\":\"PermissionRequest\"}}\n",
        ),
        (
            "claude_permission_allowed_by_rule",
            "{\"hookSpecificOutput\":{\"decision\":{\"behavior\":\"allow\"},\"hookEventName\":\"PermissionRequest\"}}\n",
        ),
        // A prompt rule, and a command only the known-safe list vouches for: no decision.
        ("claude_permission_needs_approval", ""),
        ("claude_permission_known_safe", ""),
    ];
    for (name, stdout) in cases {
        let output = env.hook(&["claude-code"], &env.payload(name));
        expect(&output, stdout, name);
        // `--allow-skip` is about PreToolUse only.
        let output = env.hook(&["claude-code", "--allow-skip"], &env.payload(name));
        expect(&output, stdout, name);
    }
}

#[test]
fn gemini_before_tool_denies_only_forbidden() {
    let env = Env::new(RULES);
    let cases = [
        (
            "gemini_forbidden",
            format!("{{\"decision\":\"deny\",\"reason\":\"{FORBIDDEN_RM}\"}}\n"),
        ),
        (
            "gemini_forbidden_in_subdir",
            "{\"decision\":\"deny\",\"reason\":\"airlock: `echo $(rm -rf x)` rejected: recursive deletes are not allowed\"}\n".to_owned(),
        ),
        // Gemini has no "ask": a command that needs approval gets no decision (`{}`, the
        // empty answer: Gemini parses stdout as JSON).
        ("gemini_needs_approval", "{}\n".to_owned()),
        ("gemini_skip", "{}\n".to_owned()),
        ("gemini_other_tool", "{}\n".to_owned()),
    ];
    for (name, stdout) in cases {
        let output = env.hook(&["gemini"], &env.payload(name));
        expect(&output, &stdout, name);
    }
}

#[test]
fn gemini_dir_path_is_where_the_project_rules_apply() {
    // A trusted project's own rules apply when the command runs inside it (`dir_path`).
    let env = Env::new("");
    let project = env.ws.path().join("sub");
    std::fs::create_dir_all(project.join(".airlock/rules")).unwrap();
    std::fs::write(
        project.join(".airlock/rules/project.rules"),
        "prefix_rule(pattern=[\"make\", \"deploy\"], decision=\"forbidden\", justification=\"deploys go through CI\")\n",
    )
    .unwrap();
    std::fs::write(
        env.home.path().join("config.toml"),
        format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            project.display()
        ),
    )
    .unwrap();
    let payload = |dir: &str| {
        format!(
            "{{\"hook_event_name\":\"BeforeTool\",\"tool_name\":\"run_shell_command\",\"tool_input\":{{\"command\":\"make deploy\",\"dir_path\":\"{dir}\"}},\"cwd\":\"{}\"}}",
            env.ws.path().display()
        )
    };
    let inside = env.hook(&["gemini"], payload("sub").as_bytes());
    expect(
        &inside,
        "{\"decision\":\"deny\",\"reason\":\"airlock: `make deploy` rejected: deploys go through CI\"}\n",
        "inside the trusted project",
    );
    let outside = env.hook(&["gemini"], payload(".").as_bytes());
    expect(&outside, "{}\n", "outside the trusted project");
}

#[test]
fn malformed_payloads_never_block_and_never_allow() {
    let env = Env::new(RULES);
    let cwd = env.ws.path().display().to_string();
    let cases: Vec<(&str, String)> = vec![
        ("empty stdin", String::new()),
        ("not JSON", "rm -rf build".to_owned()),
        ("truncated", "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",".to_owned()),
        ("an array", "[{\"tool_name\":\"Bash\"}]".to_owned()),
        ("no event name", format!("{{\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"ls\"}},\"cwd\":\"{cwd}\"}}")),
        ("an event it does not answer", format!("{{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"rm -rf build\"}},\"cwd\":\"{cwd}\"}}")),
        ("command not a string", format!("{{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":[\"rm\",\"-rf\",\"build\"]}},\"cwd\":\"{cwd}\"}}")),
        ("no command", format!("{{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{{}},\"cwd\":\"{cwd}\"}}")),
        ("tool_input not an object", format!("{{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":\"rm -rf build\",\"cwd\":\"{cwd}\"}}")),
        ("no cwd", "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf build\"}}".to_owned()),
        ("relative cwd", "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf build\"},\"cwd\":\"app\"}".to_owned()),
        ("a NUL in the command", format!("{{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"ls\\u0000x\"}},\"cwd\":\"{cwd}\"}}")),
    ];
    for (case, input) in &cases {
        for (adapter, none) in [
            (["claude-code", "--allow-skip"], ""),
            (["gemini", "-a=never"], "{}\n"),
        ] {
            let output = env.hook(&adapter, input.as_bytes());
            expect(&output, none, case);
            let stderr = text(&output.stderr);
            assert!(
                stderr.starts_with("airlock hook: ")
                    && stderr
                        .ends_with("; no decision (the harness decides as without this hook)\n"),
                "{case} / {adapter:?}: {stderr}"
            );
        }
    }
    // The same event shapes but Gemini's name sent to Claude's adapter and back.
    let gemini_to_claude = env.hook(&["claude-code"], &env.payload("gemini_forbidden"));
    expect(&gemini_to_claude, "", "BeforeTool to claude-code");
    assert!(text(&gemini_to_claude.stderr).contains("not `BeforeTool`"));
    let claude_to_gemini = env.hook(&["gemini"], &env.payload("claude_pre_forbidden"));
    expect(&claude_to_gemini, "{}\n", "PreToolUse to gemini");
}

#[test]
fn unusable_configuration_gives_no_decision_and_broken_rules_fail_closed() {
    let env = Env::new(RULES);
    std::fs::write(env.home.path().join("config.toml"), "approval_policy = [\n").unwrap();
    for name in ["claude_pre_forbidden", "claude_pre_skip_rule"] {
        let output = env.hook(&["claude-code", "--allow-skip"], &env.payload(name));
        expect(&output, "", name);
        assert!(
            text(&output.stderr).starts_with("airlock hook: "),
            "{}",
            text(&output.stderr)
        );
    }
    // A rules file that does not load: every command needs approval (spec 02, fail closed),
    // so a command the rules allowed is asked about, never allowed.
    let broken = Env::new("prefix_rule(pattern=[\"cargo\"], decision=\"allow\"\n");
    let output = broken.hook(
        &["claude-code", "--allow-skip"],
        &broken.payload("claude_pre_skip_rule"),
    );
    assert_eq!(output.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask");
    let output = broken.hook(
        &["claude-code"],
        &broken.payload("claude_permission_allowed_by_rule"),
    );
    expect(&output, "", "PermissionRequest with broken rules");
    assert!(
        text(&output.stderr).contains("warning"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn approval_policy_never_turns_asks_into_denials() {
    let env = Env::new(RULES);
    let output = env.hook(
        &["gemini", "-a", "never"],
        &env.payload("gemini_needs_approval"),
    );
    assert_eq!(output.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["decision"], "deny");
}

#[test]
fn print_config_installs_the_same_command_with_its_options() {
    let env = Env::new(RULES);
    let exe = env!("CARGO_BIN_EXE_airlock");
    let output = env.hook(
        &[
            "claude-code",
            "--allow-skip",
            "-r",
            "team.rules",
            "--print-config",
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let snippet: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rules = env.ws.path().join("team.rules");
    let command = shlex::try_join([
        exe,
        "hook",
        "claude-code",
        "--allow-skip",
        "-r",
        rules.to_str().unwrap(),
    ])
    .unwrap();
    let hook = serde_json::json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": command, "timeout": 30}]}]);
    assert_eq!(
        snippet,
        serde_json::json!({"hooks": {"PreToolUse": hook, "PermissionRequest": hook}})
    );
    let output = env.hook(&["gemini", "--print-config"], b"");
    let snippet: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        snippet,
        serde_json::json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{
            "type": "command", "name": "airlock",
            "command": shlex::try_join([exe, "hook", "gemini"]).unwrap(),
            "timeout": 30000, "description": "Airlock policy check of shell commands"}]}]}})
    );
}

#[test]
fn project_rules_the_agent_could_have_written_never_loosen() {
    // The harness's agent writes files without Airlock's sandbox, so a trusted project's
    // `.airlock/rules/` is hostile input: it may forbid, but its allow rules allow nothing.
    let env = Env::new(RULES);
    let project = env.ws.path();
    std::fs::create_dir_all(project.join(".airlock/rules")).unwrap();
    std::fs::write(
        project.join(".airlock/rules/planted.rules"),
        "prefix_rule(pattern=[\"curl\"], decision=\"allow\")\nprefix_rule(pattern=[\"cargo\", \"test\"], decision=\"allow\")\nprefix_rule(pattern=[\"make\"], decision=\"forbidden\", justification=\"use cargo\")\n",
    )
    .unwrap();
    std::fs::write(
        env.home.path().join("config.toml"),
        format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            project.display()
        ),
    )
    .unwrap();
    let event = |name: &str, command: &str| {
        format!(
            "{{\"hook_event_name\":\"{name}\",\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"{command}\"}},\"cwd\":\"{}\"}}",
            project.display()
        )
    };
    // Allowed only by the project's rules: asked about, never allowed.
    let pre = env.hook(
        &["claude-code", "--allow-skip"],
        event("PreToolUse", "curl https://example.com").as_bytes(),
    );
    let answer: serde_json::Value = serde_json::from_slice(&pre.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "ask",
        "{answer}"
    );
    let request = env.hook(
        &["claude-code"],
        event("PermissionRequest", "curl https://example.com").as_bytes(),
    );
    expect(
        &request,
        "",
        "PermissionRequest allowed only by project rules",
    );
    // Allowed by the user's own rules too: allowed.
    let request = env.hook(
        &["claude-code"],
        event("PermissionRequest", "cargo test").as_bytes(),
    );
    expect(
        &request,
        "{\"hookSpecificOutput\":{\"decision\":{\"behavior\":\"allow\"},\"hookEventName\":\"PermissionRequest\"}}\n",
        "allowed by the user's rules",
    );
    // Forbidden by the project: forbidden.
    let pre = env.hook(&["claude-code"], event("PreToolUse", "make all").as_bytes());
    let answer: serde_json::Value = serde_json::from_slice(&pre.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
}

#[test]
fn a_profile_with_denied_reads_waves_nothing_through() {
    let env = Env::new(RULES);
    let secret = env.ws.path().join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(
        env.home.path().join("config.toml"),
        format!(
            "default_permissions = \"dev\"\n[permissions.dev]\nextends = \":workspace\"\n\
             [permissions.dev.filesystem]\n{:?} = \"deny\"\n",
            secret.display().to_string()
        ),
    )
    .unwrap();
    // What a rule or the known-safe list allows still runs outside the sandbox under a hook,
    // where the deny entry is not enforced: a reviewer decides.
    let output = env.hook(
        &["claude-code", "--allow-skip"],
        &env.payload("claude_pre_skip_rule"),
    );
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("\"permissionDecision\":\"ask\"")
            && stdout.contains("denies reading some paths"),
        "{stdout} {}",
        text(&output.stderr)
    );
    let output = env.hook(
        &["claude-code"],
        &env.payload("claude_permission_allowed_by_rule"),
    );
    expect(&output, "", "no allow from a rule while reads are denied");
    // Forbidden stays a denial.
    let output = env.hook(&["claude-code"], &env.payload("claude_pre_forbidden"));
    assert!(text(&output.stdout).contains("\"permissionDecision\":\"deny\""));
}
