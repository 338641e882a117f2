//! Step 6 and beyond: denials, the retry rules, strict review, hooks, network, abort.

use crate::support::*;
use pretty_assertions::assert_eq;

/// Scenario row 6 under `untrusted`: the approved command is denied by the sandbox, and the
/// retry runs without the sandbox without asking again (it was already approved).
#[tokio::test]
async fn untrusted_denial_retries_unsandboxed_without_asking_again() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Denied);
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    )
    .go(&tool)
    .await;
    assert_eq!(outcome.result.as_ref().unwrap().exit_code, 0);
    assert_eq!(reviewers.requests("hook").len(), 1);
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
    assert_eq!(attempts[1].phase, AttemptPhase::Retry);
    assert_eq!(attempts[1].sandbox, SandboxType::None);
    assert!(!attempts[1].sandbox_requested);
    assert_eq!(
        outcome.trace.retry_reason.as_deref(),
        Some(
            "command failed in the sandbox; retry without sandbox? (touch: cannot touch '/elsewhere/file': Read-only file system)"
        )
    );
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Hook)]
    );
}

/// Under `untrusted`, a denial inferred only from the command's output (it printed
/// "Read-only file system" itself, or really hit one: Airlock cannot tell) is no reason to
/// drop the sandbox unasked: the retry is asked again with its reason, and declining it
/// means no unsandboxed attempt ran (spec 07 step 6, Airlock addition).
#[tokio::test]
async fn untrusted_output_only_denial_asks_again_before_the_unsandboxed_retry() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::DeniedByOutput);
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook_allow_first_deny_retry()),
    )
    .go(&tool)
    .await;
    assert!(
        matches!(&outcome.result, Err(ToolError::Rejected { .. })),
        "{:?} {:?}",
        outcome.result,
        reviewers.requests("hook")
    );
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 1, "no unsandboxed attempt ran");
    assert_eq!(attempts[0].sandbox, platform_sandbox());
    let requests = reviewers.requests("hook");
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(
        outcome.trace.retry_reason.as_deref(),
        Some(
            "command failed in the sandbox; retry without sandbox? (touch: cannot touch '/elsewhere/file': Read-only file system)"
        )
    );
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::Hook),
            (AttemptPhase::Retry, DecisionSource::Hook)
        ]
    );
}

/// Under `untrusted`, a command that needed no approval (`Skip`) is asked about before the
/// unsandboxed retry; the hook sees the retry id and a denial ends the call.
#[tokio::test]
async fn untrusted_skip_asks_before_the_unsandboxed_retry() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("deny")),
    )
    .go(&tool)
    .await;
    assert!(matches!(
        &outcome.result,
        Err(ToolError::Rejected { message, .. }) if message == "PermissionRequest hook denied approval"
    ));
    assert_eq!(tool.attempts().len(), 1, "the retry never ran");
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::Config),
            (AttemptPhase::Retry, DecisionSource::Hook)
        ]
    );
    assert_eq!(reviewers.requests("hook").len(), 1);
}

/// Scenario row 6 under `on-request`: the denial is returned, no retry, nobody asked.
#[tokio::test]
async fn on_request_returns_the_denial_without_retry() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Denied);
    let outcome = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert!(matches!(
        outcome.result,
        Err(ToolError::SandboxDenied { .. })
    ));
    assert_eq!(tool.attempts().len(), 1);
    assert_eq!(
        reviewers.requests("hook").len(),
        1,
        "only the first approval"
    );
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::PolicyDisallowsUnsandboxedApproval)
    );
}

/// Deny-read is sticky: even under `untrusted` nothing is retried without the sandbox.
#[tokio::test]
async fn deny_read_is_never_retried_unsandboxed() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Denied);
    let mut run = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    );
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    assert!(matches!(
        outcome.result,
        Err(ToolError::SandboxDenied { .. })
    ));
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::DenyReadIsSticky)
    );
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
}

/// Granular: the retry follows `sandbox_approval` — with `false` the denial is returned, with
/// `true` the retry of a command nobody approved yet is asked about first.
#[tokio::test]
async fn granular_sandbox_approval_switch_governs_the_retry() {
    let granular = |sandbox_approval| {
        AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval,
            rules: true,
            skill_approval: false,
            request_permissions: false,
            mcp_elicitations: false,
        })
    };
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let outcome = Run::new(granular(false), config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::PolicyDisallowsUnsandboxedApproval)
    );
    assert!(reviewers.requests("hook").is_empty());
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let outcome = Run::new(granular(true), config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    outcome.result.as_ref().unwrap();
    assert_eq!(tool.attempts().len(), 2);
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::Config),
            (AttemptPhase::Retry, DecisionSource::Hook)
        ]
    );
}

/// Strict auto review: a `Skip` is still reviewed, and the unsandboxed retry is reviewed
/// again (spec README invariant 7) even though the first review approved.
#[tokio::test]
async fn strict_auto_review_covers_skip_and_is_never_reused_for_the_retry() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let mut run = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.auto_review("allow")),
    );
    run.strict = true;
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    let requests = reviewers.requests("review");
    assert_eq!(requests.len(), 2, "first attempt and retry: {requests:#?}");
    assert!(requests[0].get("retry_reason").is_none());
    assert!(requests[1]["retry_reason"].is_string());
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::AutoReview),
            (AttemptPhase::Retry, DecisionSource::AutoReview)
        ]
    );
}

/// Hooks first: a hook allow is final even under strict auto review (invariant 6).
#[tokio::test]
async fn hook_allow_beats_strict_auto_review() {
    let reviewers = Reviewers::new();
    let text = format!(
        "{}{}",
        reviewers.hook("allow"),
        reviewers.auto_review("deny")
    );
    let tool = FakeTool::new(skip(false), Scripted::Exit(0));
    let mut run = Run::new(AskForApproval::OnRequest, config(&text));
    run.strict = true;
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert!(reviewers.requests("review").is_empty());
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Hook)]
    );
}

/// A denial from the automatic reviewer ends the call with its text; the turn goes on.
#[tokio::test]
async fn auto_review_denial_is_a_rejection_that_does_not_interrupt() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    let mut run = Run::new(
        AskForApproval::OnRequest,
        config(&reviewers.auto_review("deny")),
    );
    run.reviewer = ApprovalsReviewer::AutoReview;
    let outcome = run.go(&tool).await;
    assert!(matches!(
        outcome.result,
        Err(ToolError::Rejected {
            interrupts_turn: false,
            ..
        })
    ));
    assert!(tool.attempts().is_empty());
    // Issue 18 item 8: the audit trace names the kind of the reviewer's refusal.
    assert_eq!(
        outcome.trace.approvals[0].review_failure,
        Some(airlock_approval::ReviewFailureKind::RiskDenial)
    );
    let audit = serde_json::to_value(&outcome.trace).unwrap();
    assert_eq!(audit["approvals"][0]["review_failure"], "risk_denial");
}

/// Network denials (spec 07 step 6): without an approvable context they are returned; with
/// one, under `on-request` and a restricted filesystem, the retry asks again with the host
/// in the reason — and with deny-read the retry keeps the filesystem sandbox.
#[tokio::test]
async fn network_denials_follow_step_six() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::NetworkDenied(None));
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    )
    .go(&tool)
    .await;
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::NetworkDecisionWithoutContext)
    );

    let context = NetworkApprovalContext {
        host: "example.com".to_owned(),
        protocol: NetworkApprovalProtocol::Https,
    };
    let tool = FakeTool::new(
        needs_approval(),
        Scripted::NetworkDenied(Some(context.clone())),
    );
    let mut run = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")));
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert_eq!(
        outcome.trace.retry_reason.as_deref(),
        Some("Network access to \"example.com\" is blocked by policy.")
    );
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::Hook),
            (AttemptPhase::Retry, DecisionSource::Hook)
        ],
        "a network retry is always asked again"
    );
    let attempts = tool.attempts();
    assert_eq!(
        attempts[1].sandbox,
        platform_sandbox(),
        "deny-read keeps it"
    );
}

/// A tool that does not escalate on failure returns the denial.
#[tokio::test]
async fn a_tool_without_escalation_returns_the_denial() {
    let mut tool = FakeTool::new(needs_approval(), Scripted::Denied);
    tool.escalate_on_failure = false;
    let reviewers = Reviewers::new();
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    )
    .go(&tool)
    .await;
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::ToolDoesNotEscalate)
    );
}

/// Abort interrupts the turn: the call is rejected with `interrupts_turn` and later
/// requests of the turn are aborted at once (spec README invariant 8). Here nobody can
/// answer because the event channel is closed.
#[tokio::test]
async fn abort_interrupts_the_turn() {
    let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
    drop(events_rx);
    let approvals = ApprovalSession::new("s", ApprovalConfig::default(), Some(events_tx));
    let turn = approvals.start_turn(TurnSettings {
        turn_id: "t".to_owned(),
        approval_policy: AskForApproval::OnRequest,
        approvals_reviewer: ApprovalsReviewer::User,
        model: String::new(),
    });
    let environment = environment(workspace_profile());
    let ctx = ToolCallContext {
        approvals: &approvals,
        turn: &turn,
        call_id: "call-1",
        environment: &environment,
        strict_auto_review: false,
    };
    let tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    let outcome = ToolOrchestrator::default().run(&tool, &Req, &ctx).await;
    assert!(matches!(
        &outcome.result,
        Err(ToolError::Rejected { message, interrupts_turn: true }) if message == "approval request aborted"
    ));
    assert!(turn.is_interrupted());
    assert_eq!(outcome.trace.approvals[0].decision, ReviewDecision::Abort);
    assert!(tool.attempts().is_empty());
}

#[test]
fn retry_reason_quotes_the_last_line_of_output() {
    let output = ExecOutput {
        exit_code: 1,
        stdout: "x".repeat(10),
        stderr: format!("first\n{}\n\n", "y".repeat(300)),
        ..ExecOutput::default()
    };
    let reason = airlock_core::orchestrator::sandbox_retry_reason(&output);
    assert_eq!(
        reason,
        format!(
            "command failed in the sandbox; retry without sandbox? ({}…)",
            "y".repeat(200)
        )
    );
    let silent = ExecOutput {
        exit_code: 159,
        ..ExecOutput::default()
    };
    assert_eq!(
        airlock_core::orchestrator::sandbox_retry_reason(&silent),
        "command failed in the sandbox (exit code 159); retry without sandbox?"
    );
}

// ------------------------------------ issue 18 item 7: PreToolUse hooks (field log BL-17)

/// A `PreToolUse` hook runs for a call that needs no approval and can block it: nothing
/// runs, the model reads the hook's reason.
#[tokio::test]
async fn pre_tool_use_runs_for_a_call_needing_no_approval_and_blocks_it() {
    for (answer, message) in [
        ("deny-json", "no pushes on Fridays"),
        ("deny-exit2", "blocked by policy script"),
    ] {
        let reviewers = Reviewers::new();
        let tool = FakeTool::new(skip(false), Scripted::Exit(0));
        let outcome = Run::new(
            AskForApproval::OnRequest,
            config(&reviewers.pre_tool_use(answer)),
        )
        .go(&tool)
        .await;
        assert!(
            matches!(&outcome.result, Err(ToolError::Rejected { message: m, .. }) if m.contains(message)),
            "{answer}: {:?}",
            outcome.result
        );
        assert!(
            tool.attempts().is_empty(),
            "{answer}: the command must not run"
        );
        let requests = reviewers.requests("pre");
        assert_eq!(requests.len(), 1, "{answer}");
        assert_eq!(requests[0]["hook_event_name"], "PreToolUse");
        assert_eq!(requests[0]["tool_name"], "Bash");
        assert_eq!(
            sources(&outcome),
            vec![(AttemptPhase::First, DecisionSource::Hook)]
        );
    }
}

/// Codex's `PreToolUse` is deny-only: an `allow` answer approves nothing, and a failing
/// hook blocks nothing; the PermissionRequest path stays as it is.
#[tokio::test]
async fn pre_tool_use_cannot_approve_and_failures_do_not_block() {
    for answer in ["allow-json", "fail", "none"] {
        let reviewers = Reviewers::new();
        let text = format!(
            "{}{}",
            reviewers.pre_tool_use(answer),
            reviewers.hook("deny")
        );
        // A call needing approval: the PermissionRequest hook still decides (deny).
        let tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
        let outcome = Run::new(AskForApproval::OnRequest, config(&text))
            .go(&tool)
            .await;
        assert!(
            matches!(&outcome.result, Err(ToolError::Rejected { message, .. }) if message == "PermissionRequest hook denied approval"),
            "{answer}: {:?}",
            outcome.result
        );
        assert_eq!(reviewers.requests("pre").len(), 1, "{answer}");
        assert_eq!(reviewers.requests("hook").len(), 1, "{answer}");
        // A call needing no approval runs.
        let tool = FakeTool::new(skip(false), Scripted::Exit(0));
        let outcome = Run::new(AskForApproval::OnRequest, config(&text))
            .go(&tool)
            .await;
        assert_eq!(outcome.result.as_ref().unwrap().exit_code, 0, "{answer}");
        assert_eq!(reviewers.requests("pre").len(), 2, "{answer}");
    }
}
