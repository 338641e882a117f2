#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `airlock_core::Session` end to end under the real sandbox (bubblewrap through the `airlock`
//! helper): every decision kind with a scripted user, the retry path (scenario row 6) and the
//! audit log, with real processes writing (or failing to write) real files. Reviewers are
//! scripted: hook scripts, an automatic-review script, or a user task answering approval
//! events. The other scenario rows are in `exec_scenarios.rs`.

mod exec_support;

use airlock_approval::AUTO_REVIEW_TIMED_OUT;
use airlock_approval::ApprovalEvent;
use airlock_approval::DecisionSource;
use airlock_core::CallOutcome;
use airlock_core::ToolError;
use airlock_core::orchestrator::NoRetryReason;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::ReviewDecision;
use airlock_sandbox::SandboxType;
use exec_support::Dirs;
use exec_support::Harness;
use exec_support::HarnessOptions;
use exec_support::call;
use exec_support::exists;
use exec_support::outcome::LINUX;
use exec_support::outcome::approve;
use exec_support::outcome::approve_amendment;
use exec_support::outcome::deny_read_profile;
use exec_support::outcome::exit_code;
use exec_support::outcome::rejection;
use exec_support::outcome::sandboxes;
use exec_support::outcome::sources;
use pretty_assertions::assert_eq;

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
/// the retry runs without it and succeeds. The denial is known only from the command's
/// output, so the hook is asked again for the retry (spec 07 step 6, Airlock addition).
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
    let Some(target) = dirs.outside_file("f.txt") else {
        return;
    };
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert_eq!(exit_code(&out), 0);
    assert!(exists(&target));
    assert_eq!(
        sandboxes(&out.record),
        vec![(LINUX, true), (SandboxType::None, false)]
    );
    assert_eq!(dirs.requests("hook").len(), 2);
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
    let Some(target) = dirs.outside_file("f.txt") else {
        return;
    };
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

#[tokio::test]
async fn deny_read_is_never_retried_unsandboxed() {
    let dirs = Dirs::new();
    let Some(outside) = dirs.outside() else {
        return;
    };
    std::fs::write(outside.join("secret"), "the-secret-value").unwrap();
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
    let Some(target) = dirs.outside_file("f.txt") else {
        return;
    };
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert!(matches!(out.result, Err(ToolError::SandboxDenied { .. })));
    assert_eq!(
        out.record.trace.no_retry,
        Some(NoRetryReason::DenyReadIsSticky)
    );
    assert!(!exists(&target));
    let Some(secret) = dirs.outside_file("secret") else {
        return;
    };
    let read = h.session.exec(&turn, call("c2", &["cat", &secret])).await;
    let output = match &read.result {
        Err(ToolError::SandboxDenied { output, .. }) => output.clone(),
        other => panic!("{other:?}"),
    };
    assert!(!output.stdout.contains("the-secret-value"));
    assert_eq!(sandboxes(&read.record), vec![(LINUX, true)]);
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

/// Issue 17 item 11: calls without an id get their own id, different for every call of the
/// process, and the audit log records it.
#[tokio::test]
async fn calls_without_an_id_get_distinct_ids() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions::new(AskForApproval::Never),
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let first = h.session.exec(&turn, call("", &["true"])).await;
    let second = h.session.exec(&turn, call("", &["true"])).await;
    assert!(first.record.call_id.starts_with("call-"));
    assert_ne!(first.record.call_id, second.record.call_id);
    let ids: Vec<String> = dirs
        .audit()
        .iter()
        .map(|entry| entry["call_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, [first.record.call_id, second.record.call_id]);
}
