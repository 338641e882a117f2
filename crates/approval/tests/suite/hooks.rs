//! Permission-request hooks: protocol, precedence and bad input (spec 06 step 1, invariant 6).

use airlock_approval::ApprovalContext;
use airlock_approval::DEFAULT_HOOK_DENY_MESSAGE;
use airlock_approval::DecisionSource;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ReviewDecision;

use crate::support::*;

const ALLOW_JSON: &str = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;

fn allow_hook_body() -> String {
    format!("cat > /dev/null\necho '{ALLOW_JSON}'")
}

#[tokio::test]
async fn hook_allow_beats_strict_auto_review() {
    let dir = tempdir();
    let marker = dir.path().join("reviewer-ran");
    let hook = script(dir.path(), "allow.sh", &allow_hook_body());
    let reviewer = script(
        dir.path(),
        "reviewer.sh",
        &format!(
            "touch '{}'\necho '{{\"outcome\":\"deny\",\"rationale\":\"strict\"}}'",
            marker.display()
        ),
    );
    let toml = format!(
        "{}{}",
        hook_toml(&hook, "^Bash$", 10),
        auto_review_toml(&reviewer, 10)
    );
    let h = Harness::start(
        dir,
        config(&toml),
        settings(AskForApproval::OnRequest),
        never_answer(),
    );
    let mut ctx = ApprovalContext::new("c1");
    ctx.strict_auto_review = true;
    let resolution = h
        .request(&shell_action("c1", &["git", "push"], h.dir.path()), &ctx)
        .await;
    assert_eq!(resolution.decision, ReviewDecision::Approved);
    assert_eq!(resolution.source, DecisionSource::Hook);
    assert!(
        !marker.exists(),
        "the automatic reviewer must not run after a hook allowed"
    );
    assert_eq!(h.asked(), 0);
}

#[tokio::test]
async fn any_deny_wins_over_allows() {
    let dir = tempdir();
    let allow_a = script(dir.path(), "a.sh", &allow_hook_body());
    let deny = script(
        dir.path(),
        "deny.sh",
        "cat > /dev/null\necho 'no pushes to main' >&2\nexit 2",
    );
    let allow_b = script(dir.path(), "b.sh", &allow_hook_body());
    let toml = [&allow_a, &deny, &allow_b]
        .iter()
        .map(|path| hook_toml(path, "", 10))
        .collect::<String>();
    let h = Harness::start(
        dir,
        config(&toml),
        settings(AskForApproval::OnRequest),
        never_answer(),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["git", "push"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(resolution.source, DecisionSource::Hook);
    assert_eq!(
        resolution.into_tool_result().unwrap_err().message,
        "no pushes to main"
    );
    assert_eq!(h.asked(), 0);
}

#[tokio::test]
async fn hook_deny_beats_a_user_who_would_approve() {
    let dir = tempdir();
    let deny = script(
        dir.path(),
        "deny.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny"}}}'"#,
    );
    let h = Harness::start(
        dir,
        config(&hook_toml(&deny, "*", 10)),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::Approved),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(
        resolution.decision,
        ReviewDecision::denied_with_reason(DEFAULT_HOOK_DENY_MESSAGE)
    );
    assert_eq!(h.asked(), 0);
}

#[tokio::test]
async fn hook_receives_the_projected_payload_on_stdin() {
    let dir = tempdir();
    let dump = dir.path().join("input.json");
    let hook = script(
        dir.path(),
        "dump.sh",
        &format!("cat > '{}'", dump.display()),
    );
    let h = Harness::start(
        dir,
        config(&hook_toml(&hook, "Bash", 10)),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::Approved),
    );
    let mut action = shell_action("c1", &["bash", "-lc", "git status"], h.dir.path());
    if let airlock_approval::ApprovalAction::Shell(command) = &mut action {
        command.justification = Some("look".to_owned());
    }
    let resolution = h.request(&action, &ApprovalContext::new("c1")).await;
    // The hook printed nothing: no decision, so the user answered.
    assert_eq!(resolution.source, DecisionSource::User);
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PermissionRequest");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(
        input["tool_input"],
        serde_json::json!({"command": "git status", "description": "look"})
    );
    assert_eq!(input["session_id"], "session-1");
    assert_eq!(input["turn_id"], "turn-1");
    assert_eq!(input["model"], "test-model");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["transcript_path"], serde_json::Value::Null);
    assert_eq!(
        input["approval_context"]["sandbox_permissions"],
        "use_default"
    );
}

#[tokio::test]
async fn matcher_selects_tools_and_aliases() {
    let dir = tempdir();
    let deny = script(
        dir.path(),
        "deny.sh",
        "cat > /dev/null\necho 'patches need review' >&2\nexit 2",
    );
    let h = Harness::start(
        dir,
        config(&hook_toml(&deny, "^(Write|Edit)$", 10)),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::Approved),
    );
    let cwd = h.dir.path().to_path_buf();
    // Bash does not match: the user answers.
    let shell = h
        .request(
            &shell_action("c1", &["ls"], &cwd),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(shell.source, DecisionSource::User);
    // apply_patch matches through its `Edit` alias.
    let patch = airlock_approval::ApprovalAction::ApplyPatch(airlock_approval::PatchAction {
        id: "p1".to_owned(),
        environment_id: None,
        cwd: cwd.clone(),
        files: vec![cwd.join("a")],
        patch: "*** Begin Patch".to_owned(),
        changes: Default::default(),
        permissions_preapproved: false,
    });
    let resolution = h.request(&patch, &ApprovalContext::new("p1")).await;
    assert_eq!(resolution.source, DecisionSource::Hook);
    assert_eq!(
        resolution.into_tool_result().unwrap_err().message,
        "patches need review"
    );
}

#[tokio::test]
async fn unparseable_hook_output_gives_no_verdict_and_a_clear_warning() {
    let dir = tempdir();
    let broken = script(
        dir.path(),
        "broken.sh",
        "cat > /dev/null\necho '{\"hookSpecificOutput\": oops'",
    );
    let h = Harness::start(
        dir,
        config(&hook_toml(&broken, "", 10)),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::denied_with_reason("user said no")),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    // Fail closed: the broken hook did not approve; the user was asked.
    assert_eq!(resolution.source, DecisionSource::User);
    assert_eq!(h.asked(), 1);
    let warnings = h.flushed_warnings().await;
    assert!(
        warnings.iter().any(|w| w.contains("broken.sh")
            && w.contains("invalid JSON output")
            && w.contains("no decision")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn a_hanging_hook_times_out_without_a_verdict() {
    let dir = tempdir();
    let hang = script(
        dir.path(),
        "hang.sh",
        "cat > /dev/null\nsleep 30\necho 'never'",
    );
    let h = Harness::start(
        dir,
        config(&hook_toml(&hang, "", 1)),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::Approved),
    );
    let started = std::time::Instant::now();
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(resolution.source, DecisionSource::User);
    let warnings = h.flushed_warnings().await;
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("hang.sh") && w.contains("timed out after 1 s")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn failing_hooks_never_approve() {
    let dir = tempdir();
    let cases = [
        (
            "exit1.sh",
            "cat > /dev/null\nexit 1",
            "exited with status 1",
        ),
        (
            "exit2-silent.sh",
            "cat > /dev/null\nexit 2",
            "wrote no reason on stderr",
        ),
        (
            "allow-updated.sh",
            r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"rm -rf /"}}}}'"#,
            "unsupported fields (updatedInput)",
        ),
        (
            "maybe.sh",
            r#"cat > /dev/null
echo '{"hookSpecificOutput":{"decision":{"behavior":"maybe"}}}'"#,
            "expected \"allow\" or \"deny\"",
        ),
    ];
    let mut toml = String::new();
    for (name, body, _) in &cases {
        toml.push_str(&hook_toml(&script(dir.path(), name, body), "", 10));
    }
    toml.push_str("[[hooks.permission_request]]\ncommand = \"/nonexistent/airlock-hook\"\n");
    let h = Harness::start(
        dir,
        config(&toml),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::denied()),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(
        resolution.source,
        DecisionSource::User,
        "no hook may decide"
    );
    let warnings = h.flushed_warnings().await;
    for (name, _, needle) in cases {
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(name) && w.contains(needle)),
            "{name}: {needle:?} not in {warnings:?}"
        );
    }
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("/nonexistent/airlock-hook")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn hooks_json_in_codex_format_is_read() {
    let dir = tempdir();
    let deny = script(
        dir.path(),
        "deny.sh",
        "cat > /dev/null\necho 'from hooks.json' >&2\nexit 2",
    );
    let hooks_json = dir.path().join("hooks.json");
    std::fs::write(
        &hooks_json,
        serde_json::json!({"hooks": {
            "PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "false"}]}],
            "PermissionRequest": [{"matcher": "^Bash$", "hooks": [
                {"type": "prompt", "prompt": "ignored"},
                {"type": "command", "command": hook_command(&deny), "timeout": 5}
            ]}]
        }})
        .to_string(),
    )
    .unwrap();
    let table = toml::Table::new();
    let config = airlock_approval::ApprovalConfig::load(&table, "config.toml", dir.path()).unwrap();
    assert_eq!(config.hooks.len(), 1);
    // The PreToolUse group is its own list (issue 18 item 7), never a PermissionRequest hook.
    assert_eq!(config.pre_tool_use_hooks.len(), 1);
    assert_eq!(config.pre_tool_use_hooks[0].command, "false");
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.contains("hook type `prompt` is not supported")),
        "{:?}",
        config.warnings
    );
    let h = Harness::start(
        dir,
        config,
        settings(AskForApproval::OnRequest),
        never_answer(),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(
        resolution.into_tool_result().unwrap_err().message,
        "from hooks.json"
    );
}

#[tokio::test]
async fn hooks_run_before_the_automatic_reviewer_and_without_verdict_fall_through() {
    let dir = tempdir();
    let silent = script(
        dir.path(),
        "silent.sh",
        "cat > /dev/null\necho 'just logging'",
    );
    let reviewer = script(
        dir.path(),
        "reviewer.sh",
        "cat > /dev/null\necho '{\"outcome\":\"allow\"}'",
    );
    let toml = format!(
        "{}{}",
        hook_toml(&silent, "", 10),
        auto_review_toml(&reviewer, 10)
    );
    let mut turn = settings(AskForApproval::OnRequest);
    turn.approvals_reviewer = ApprovalsReviewer::AutoReview;
    let h = Harness::start(dir, config(&toml), turn, never_answer());
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(resolution.decision, ReviewDecision::Approved);
    assert_eq!(resolution.source, DecisionSource::AutoReview);
}

// ----------------------------------------- issue 18 item 7: PreToolUse (field log BL-17)

#[test]
fn pre_tool_use_hooks_are_read_from_config_toml() {
    let table: toml::Table = "[[hooks.pre_tool_use]]\nmatcher = \"^Bash$\"\ncommand = \"a\"\n\
         [[hooks.PreToolUse]]\nmatcher = \"*\"\nhooks = [{type = \"command\", command = \"b\", timeout = 3}]\n"
        .parse()
        .unwrap();
    let config =
        airlock_approval::ApprovalConfig::from_config_table(&table, "config.toml", None).unwrap();
    let mut commands: Vec<&str> = config
        .pre_tool_use_hooks
        .iter()
        .map(|hook| hook.command.as_str())
        .collect();
    commands.sort_unstable();
    assert_eq!(commands, ["a", "b"]);
    assert!(config.hooks.is_empty());
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn pre_tool_use_output_is_deny_only() {
    use airlock_approval::{
        DEFAULT_PRE_TOOL_USE_DENY_MESSAGE, HookRunResult, HookVerdict, parse_pre_tool_use_output,
    };
    let deny = |message: &str| HookVerdict::Deny {
        message: message.to_owned(),
    };
    let verdict = |result: HookRunResult| match result {
        HookRunResult::Decided { verdict, .. } => Some(verdict),
        _ => None,
    };
    assert_eq!(
        verdict(parse_pre_tool_use_output(
            Some(0),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}"#,
            ""
        )),
        Some(deny("nope"))
    );
    assert_eq!(
        verdict(parse_pre_tool_use_output(
            Some(0),
            r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#,
            ""
        )),
        Some(deny(DEFAULT_PRE_TOOL_USE_DENY_MESSAGE))
    );
    assert_eq!(
        verdict(parse_pre_tool_use_output(
            Some(0),
            r#"{"decision":"block","reason":"old"}"#,
            ""
        )),
        Some(deny("old"))
    );
    assert_eq!(
        verdict(parse_pre_tool_use_output(Some(2), "", "from stderr\n")),
        Some(deny("from stderr"))
    );
    for unsupported in ["allow", "ask", "defer"] {
        let result = parse_pre_tool_use_output(
            Some(0),
            &format!(
                r#"{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"{unsupported}"}}}}"#
            ),
            "",
        );
        match result {
            HookRunResult::NoDecision { warnings } => assert!(
                warnings.iter().any(|w| w.contains("not supported")),
                "{warnings:?}"
            ),
            other => panic!("{unsupported}: {other:?}"),
        }
    }
    assert!(matches!(
        parse_pre_tool_use_output(Some(1), "", "boom"),
        HookRunResult::Failed { .. }
    ));
    assert!(matches!(
        parse_pre_tool_use_output(
            Some(0),
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","permissionDecision":"deny"}}"#,
            ""
        ),
        HookRunResult::Failed { .. }
    ));
}
