#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `airlock_core::Session` end to end under the real sandbox (bubblewrap through the `airlock`
//! helper): every decision kind with a scripted user, the retry path, and every row of the
//! scenarios table of `spec/README.md`, with real processes writing (or failing to write)
//! real files. Reviewers are scripted: hook scripts, an automatic-review script, or a user task
//! answering approval events.

mod exec_support;

use airlock_approval::AUTO_REVIEW_TIMED_OUT;
use airlock_approval::ApprovalEvent;
use airlock_approval::DecisionSource;
use airlock_core::AuditRecord;
use airlock_core::CallOutcome;
use airlock_core::ShellCallOutcome;
use airlock_core::ToolError;
use airlock_core::orchestrator::NoRetryReason;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::ReviewDecision;
use airlock_protocol::SandboxPermissions;
use airlock_sandbox::SandboxType;
use exec_support::Dirs;
use exec_support::Harness;
use exec_support::HarnessOptions;
use exec_support::call;
use exec_support::exists;
use pretty_assertions::assert_eq;

fn approve(decision: ReviewDecision) -> Box<exec_support::Answer> {
    Box::new(move |_| Some(decision.clone()))
}

/// Answers with the amendment the prompt offers.
fn approve_amendment() -> Box<exec_support::Answer> {
    Box::new(|event| match event {
        ApprovalEvent::ExecApprovalRequest(request) => request
            .decisions()
            .into_iter()
            .find(|d| matches!(d, ReviewDecision::ApprovedExecpolicyAmendment { .. })),
        _ => None,
    })
}

fn sandboxes(record: &AuditRecord) -> Vec<(SandboxType, bool)> {
    record
        .trace
        .attempts
        .iter()
        .map(|a| (a.sandbox, a.sandbox_denied))
        .collect()
}

fn sources(record: &AuditRecord) -> Vec<DecisionSource> {
    record.trace.approvals.iter().map(|a| a.source).collect()
}

fn exit_code(outcome: &ShellCallOutcome) -> i32 {
    match &outcome.result {
        Ok(output) => output.exit_code,
        Err(error) => panic!("expected the command to run, got {error:?}"),
    }
}

fn rejection(outcome: &ShellCallOutcome) -> (String, bool) {
    match &outcome.result {
        Err(ToolError::Rejected {
            message,
            interrupts_turn,
        }) => (message.clone(), *interrupts_turn),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

const LINUX: SandboxType = SandboxType::LinuxSeccomp;

#[tokio::test]
async fn approved_runs_inside_the_sandbox() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions::new(AskForApproval::UnlessTrusted),
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let out = h
        .session
        .exec(&turn, call("c1", &["touch", "made.txt"]))
        .await;
    assert_eq!(exit_code(&out), 0);
    assert!(exists(dirs.ws.join("made.txt")));
    assert_eq!(sandboxes(&out.record), vec![(LINUX, false)]);
    assert_eq!(sources(&out.record), vec![DecisionSource::User]);
    assert_eq!(h.prompt_count(), 1);
}

#[tokio::test]
async fn approved_for_session_is_not_asked_again() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions::new(AskForApproval::UnlessTrusted),
        approve(ReviewDecision::ApprovedForSession),
    );
    let turn = h.session.start_turn("turn-1");
    let first = h.session.exec(&turn, call("c1", &["touch", "a.txt"])).await;
    let second = h.session.exec(&turn, call("c2", &["touch", "a.txt"])).await;
    assert_eq!((exit_code(&first), exit_code(&second)), (0, 0));
    assert_eq!(
        h.prompt_count(),
        1,
        "the second call is answered by the cache"
    );
    assert_eq!(sources(&second.record), vec![DecisionSource::SessionCache]);
    // A different command is a different key: asked again.
    let third = h.session.exec(&turn, call("c3", &["touch", "b.txt"])).await;
    assert_eq!(exit_code(&third), 0);
    assert_eq!(h.prompt_count(), 2);
}

#[tokio::test]
async fn amendment_is_written_to_disk_and_the_next_call_skips() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions::new(AskForApproval::UnlessTrusted),
        approve_amendment(),
    );
    let turn = h.session.start_turn("turn-1");
    let first = h.session.exec(&turn, call("c1", &["touch", "x.txt"])).await;
    assert_eq!(exit_code(&first), 0);
    let rules = std::fs::read_to_string(dirs.home.join("rules/default.rules")).unwrap();
    assert!(
        rules.contains(r#"prefix_rule(pattern=["touch", "x.txt"], decision="allow")"#),
        "{rules}"
    );
    assert_eq!(first.record.trace.amendments, vec![vec!["touch", "x.txt"]]);
    assert_eq!(
        first.record.amendment_file,
        Some(dirs.home.join("rules/default.rules"))
    );
    let second = h.session.exec(&turn, call("c2", &["touch", "x.txt"])).await;
    assert_eq!(exit_code(&second), 0);
    assert_eq!(h.prompt_count(), 1, "the live policy now allows it");
    assert!(matches!(
        second.record.trace.requirement,
        Some(ExecApprovalRequirement::Skip {
            bypass_sandbox: true,
            ..
        })
    ));
    // A new session loading the rules from disk skips too.
    let fresh = Harness::start(
        &dirs,
        HarnessOptions {
            rules: vec![dirs.home.join("rules/default.rules")],
            ..HarnessOptions::new(AskForApproval::UnlessTrusted)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = fresh.session.start_turn("turn-1");
    let third = fresh
        .session
        .exec(&turn, call("c1", &["touch", "x.txt"]))
        .await;
    assert_eq!(exit_code(&third), 0);
    assert_eq!(fresh.prompt_count(), 0);
}

#[tokio::test]
async fn denied_returns_the_error_and_the_turn_goes_on() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions::new(AskForApproval::UnlessTrusted),
        Box::new(|event| match event {
            ApprovalEvent::ExecApprovalRequest(request) if request.command[1] == "no.txt" => {
                Some(ReviewDecision::denied())
            }
            _ => Some(ReviewDecision::Approved),
        }),
    );
    let turn = h.session.start_turn("turn-1");
    let denied = h
        .session
        .exec(&turn, call("c1", &["touch", "no.txt"]))
        .await;
    assert_eq!(rejection(&denied), ("rejected by user".to_owned(), false));
    assert!(!exists(dirs.ws.join("no.txt")));
    assert!(denied.record.trace.attempts.is_empty());
    let next = h
        .session
        .exec(&turn, call("c2", &["touch", "yes.txt"]))
        .await;
    assert_eq!(exit_code(&next), 0);
    assert!(exists(dirs.ws.join("yes.txt")));
}

#[tokio::test]
async fn timed_out_review_is_rejected_with_the_timeout_message() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            reviewer: ApprovalsReviewer::AutoReview,
            approval_toml: dirs.auto_review_with("sleep 5", 1),
            ..HarnessOptions::new(AskForApproval::UnlessTrusted)
        },
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let started = std::time::Instant::now();
    let out = h
        .session
        .exec(&turn, call("c1", &["touch", "late.txt"]))
        .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
    assert_eq!(rejection(&out), (AUTO_REVIEW_TIMED_OUT.to_owned(), false));
    assert_eq!(
        out.record.trace.approvals[0].decision,
        ReviewDecision::TimedOut
    );
    assert!(!exists(dirs.ws.join("late.txt")));
}

#[tokio::test]
async fn abort_interrupts_the_turn() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions::new(AskForApproval::UnlessTrusted),
        approve(ReviewDecision::Abort),
    );
    let turn = h.session.start_turn("turn-1");
    let out = h.session.exec(&turn, call("c1", &["touch", "a.txt"])).await;
    assert_eq!(
        rejection(&out),
        ("approval request aborted".to_owned(), true)
    );
    assert!(turn.is_interrupted());
    // Later calls of the interrupted turn are aborted without a prompt.
    let later = h.session.exec(&turn, call("c2", &["touch", "b.txt"])).await;
    assert_eq!(rejection(&later).1, true);
    assert_eq!(h.prompt_count(), 1);
    assert!(!exists(dirs.ws.join("a.txt")) && !exists(dirs.ws.join("b.txt")));
}

/// Scenario row 6 under `untrusted`: the write outside the workspace fails in the sandbox,
/// the retry runs without it and succeeds; the hook approved once and is not asked again.
#[tokio::test]
async fn untrusted_outside_write_is_retried_unsandboxed() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            ..HarnessOptions::new(AskForApproval::UnlessTrusted)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let target = dirs.outside_file("f.txt");
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert_eq!(exit_code(&out), 0);
    assert!(exists(&target));
    assert_eq!(
        sandboxes(&out.record),
        vec![(LINUX, true), (SandboxType::None, false)]
    );
    assert_eq!(dirs.requests("hook").len(), 1);
    let reason = out.record.trace.retry_reason.clone().unwrap();
    assert!(reason.contains("Read-only file system"), "{reason}");
    assert_eq!(h.prompt_count(), 0);
}

/// Under `on-request` the denial is returned without a retry.
#[tokio::test]
async fn on_request_denial_is_returned_without_retry() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let target = dirs.outside_file("f.txt");
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert!(matches!(out.result, Err(ToolError::SandboxDenied { .. })));
    assert!(!exists(&target));
    assert_eq!(sandboxes(&out.record), vec![(LINUX, true)]);
    assert_eq!(
        out.record.trace.no_retry,
        Some(NoRetryReason::PolicyDisallowsUnsandboxedApproval)
    );
    assert!(matches!(
        out.record.outcome,
        CallOutcome::SandboxDenied { .. }
    ));
}

fn deny_read_profile(dirs: &Dirs) -> airlock_protocol::PermissionProfile {
    let env = airlock_permissions::ConfigEnv {
        airlock_home: dirs.home.clone(),
        home: None,
    };
    let config = airlock_permissions::AirlockConfig::from_toml_str(
        &dirs.deny_read_profile_toml(),
        &dirs.home.join("config.toml"),
        &env,
    )
    .unwrap();
    airlock_permissions::select_permission_profile(&config, None, &dirs.ws)
        .unwrap()
        .symbolic()
        .clone()
}

/// With a deny-read entry nothing is ever retried without the sandbox, even under
/// `untrusted` with an approving hook; the denied file stays unreadable.
#[tokio::test]
async fn deny_read_is_never_retried_unsandboxed() {
    let dirs = Dirs::new();
    std::fs::write(dirs.outside.join("secret"), "the-secret-value").unwrap();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            profile: deny_read_profile(&dirs),
            ..HarnessOptions::new(AskForApproval::UnlessTrusted)
        },
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let target = dirs.outside_file("f.txt");
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert!(matches!(out.result, Err(ToolError::SandboxDenied { .. })));
    assert_eq!(
        out.record.trace.no_retry,
        Some(NoRetryReason::DenyReadIsSticky)
    );
    assert!(!exists(&target));
    let secret = dirs.outside_file("secret");
    let read = h.session.exec(&turn, call("c2", &["cat", &secret])).await;
    let output = match &read.result {
        Err(ToolError::SandboxDenied { output, .. }) => output.clone(),
        other => panic!("{other:?}"),
    };
    assert!(!output.stdout.contains("the-secret-value"));
    assert_eq!(sandboxes(&read.record), vec![(LINUX, true)]);
}

/// Scenario row 1: restricted filesystem + `on-request`, a `prompt` rule → `NeedsApproval`,
/// and the approved attempt is still sandboxed (the write outside fails).
#[tokio::test]
async fn row1_on_request_prompt_rule_needs_approval_and_stays_sandboxed() {
    let dirs = Dirs::new();
    let rules = dirs.rules(
        "ask.rules",
        "prefix_rule(pattern=[\"touch\"], decision=\"prompt\")\n",
    );
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            rules: vec![rules],
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let target = dirs.outside_file("f.txt");
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert!(matches!(
        out.record.trace.requirement,
        Some(ExecApprovalRequirement::NeedsApproval { .. })
    ));
    assert_eq!(sources(&out.record), vec![DecisionSource::Hook]);
    assert!(out.record.trace.attempts[0].sandbox_requested);
    assert_eq!(sandboxes(&out.record), vec![(LINUX, true)]);
    assert!(!exists(&target));
}

/// Scenario row 2: `never` + restricted → `Skip { bypass_sandbox: false }`; nobody is asked
/// and the sandbox still applies.
#[tokio::test]
async fn row2_never_skips_but_the_sandbox_applies() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            ..HarnessOptions::new(AskForApproval::Never)
        },
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let target = dirs.outside_file("f.txt");
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert!(matches!(
        out.record.trace.requirement,
        Some(ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            ..
        })
    ));
    assert!(dirs.requests("hook").is_empty());
    assert_eq!(sandboxes(&out.record), vec![(LINUX, true)]);
    assert!(!exists(&target));
    // Inside the workspace the same command works.
    let inside = h
        .session
        .exec(&turn, call("c2", &["touch", "in.txt"]))
        .await;
    assert_eq!(exit_code(&inside), 0);
}

/// Scenario row 3: an exec-policy allow on every segment bypasses the sandbox; one unmatched
/// segment keeps it (invariant 3); a deny-read entry keeps it (invariant 2).
#[tokio::test]
async fn row3_allow_on_every_segment_bypasses_the_sandbox() {
    let dirs = Dirs::new();
    let rules = dirs.rules(
        "allow.rules",
        "prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n",
    );
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            rules: vec![rules.clone()],
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let target = dirs.outside_file("f.txt");
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert_eq!(exit_code(&out), 0);
    assert!(exists(&target));
    assert_eq!(sandboxes(&out.record), vec![(SandboxType::None, false)]);

    let mixed_dir = dirs.outside_file("d");
    let script = format!("touch mixed.txt && mkdir '{mixed_dir}'");
    let mixed = h
        .session
        .exec(
            &turn,
            airlock_core::ShellCall {
                command: exec_support::bash(&script),
                call_id: "c2".to_owned(),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(sandboxes(&mixed.record)[0].0, LINUX);
    assert!(
        !exists(&mixed_dir),
        "mkdir is not allowed by a rule: sandboxed"
    );

    let guarded = Harness::start(
        &dirs,
        HarnessOptions {
            rules: vec![rules],
            profile: deny_read_profile(&dirs),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = guarded.session.start_turn("turn-1");
    let target = dirs.outside_file("g.txt");
    let out = guarded
        .session
        .exec(&turn, call("c1", &["touch", &target]))
        .await;
    assert_eq!(sandboxes(&out.record), vec![(LINUX, true)]);
    assert!(!exists(&target));
}

/// Scenario row 4: an approved escalation with a deny-read entry keeps the filesystem
/// sandbox; without deny-read the approved escalation runs unsandboxed.
#[tokio::test]
async fn row4_escalation_with_deny_read_keeps_the_sandbox() {
    let dirs = Dirs::new();
    std::fs::write(dirs.outside.join("secret"), "the-secret-value").unwrap();
    let escalated = |id: &str, command: &[&str]| airlock_core::ShellCall {
        sandbox_permissions: SandboxPermissions::RequireEscalated,
        justification: Some("needs it".to_owned()),
        ..call(id, command)
    };
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            profile: deny_read_profile(&dirs),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let secret = dirs.outside_file("secret");
    let out = h
        .session
        .exec(&turn, escalated("c1", &["cat", &secret]))
        .await;
    assert_eq!(sources(&out.record), vec![DecisionSource::Hook]);
    assert_eq!(
        out.record.trace.first_attempt_override,
        Some(airlock_core::SandboxOverride::NoOverride)
    );
    assert_eq!(out.record.trace.attempts[0].sandbox, LINUX);
    let printed = match &out.result {
        Ok(output) | Err(ToolError::SandboxDenied { output, .. }) => output.stdout.clone(),
        Err(other) => panic!("{other:?}"),
    };
    assert!(!printed.contains("the-secret-value"));
    let hook_input = &dirs.requests("hook")[0];
    assert_eq!(
        hook_input["approval_context"]["sandbox_permissions"],
        "require_escalated"
    );

    let open = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = open.session.start_turn("turn-1");
    let target = dirs.outside_file("escalated.txt");
    let out = open
        .session
        .exec(&turn, escalated("c1", &["touch", &target]))
        .await;
    assert_eq!(exit_code(&out), 0);
    assert_eq!(sandboxes(&out.record), vec![(SandboxType::None, false)]);
    assert!(exists(&target));
}

/// Scenario row 5: an `External` profile → no prompt for filesystem limits under
/// `on-request`, no outer sandbox added.
#[tokio::test]
async fn row5_external_profile_has_no_outer_sandbox() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("deny"),
            profile: airlock_permissions::built_in_profile(":external-sandbox").unwrap(),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let target = dirs.outside_file("f.txt");
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert_eq!(exit_code(&out), 0);
    assert!(dirs.requests("hook").is_empty(), "nobody was asked");
    let attempt = &out.record.trace.attempts[0];
    assert_eq!(
        (attempt.sandbox, attempt.sandbox_requested),
        (SandboxType::None, false)
    );
}

/// The audit log gets one line per call, with the command but never environment values.
#[tokio::test]
async fn audit_log_records_each_call_without_environment_values() {
    let dirs = Dirs::new();
    let mut options = HarnessOptions::new(AskForApproval::OnRequest);
    options.env.insert(
        "AIRLOCK_TEST_VALUE".to_owned(),
        "v4lue-never-logged".to_owned(),
    );
    let h = Harness::start(&dirs, options, approve(ReviewDecision::Approved));
    let turn = h.session.start_turn("turn-7");
    let out = h
        .session
        .exec(&turn, call("c1", &["printenv", "AIRLOCK_TEST_VALUE"]))
        .await;
    assert_eq!(out.result.as_ref().unwrap().stdout, "v4lue-never-logged\n");
    let bad = h.session.exec(&turn, call("c2", &[""])).await;
    assert!(rejection(&bad).0.starts_with("invalid command"));
    let text = std::fs::read_to_string(dirs.home.join("log/audit.jsonl")).unwrap();
    assert!(!text.contains("v4lue-never-logged"));
    let lines = dirs.audit();
    assert_eq!(lines.len(), 2);
    let first = &lines[0];
    for field in [
        "time",
        "session_id",
        "turn_id",
        "call_id",
        "cwd",
        "command",
        "policy",
        "requirement",
        "approvals",
        "attempts",
        "amendments",
        "outcome",
        "duration_ms",
    ] {
        assert!(first.get(field).is_some(), "missing {field}: {first}");
    }
    assert_eq!(first["turn_id"], "turn-7");
    assert_eq!(first["policy"]["segments"][0][0], "printenv");
    assert_eq!(first["attempts"][0]["sandbox"], "linuxSeccomp");
    assert_eq!(first["outcome"]["status"], "ran");
    assert_eq!(lines[1]["outcome"]["status"], "rejected");
}
