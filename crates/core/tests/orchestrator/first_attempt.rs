//! Steps 1–5: requirement, first approval, first-attempt override and the attempt (scenario rows).

use crate::support::*;
use pretty_assertions::assert_eq;

#[tokio::test]
async fn forbidden_runs_nothing_and_asks_nobody() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(
        Some(ExecApprovalRequirement::Forbidden {
            reason: "blocked by rule".to_owned(),
        }),
        Scripted::Exit(0),
    );
    let outcome = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert!(matches!(
        &outcome.result,
        Err(ToolError::Rejected { message, interrupts_turn: false }) if message == "blocked by rule"
    ));
    assert!(tool.attempts().is_empty());
    assert!(reviewers.requests("hook").is_empty());
    assert!(outcome.trace.approvals.is_empty());
}

/// Scenario row 1: restricted filesystem + `on-request` → the default requirement is
/// `NeedsApproval`; the attempt is sandboxed (`sandbox_requested = true`).
#[tokio::test]
async fn default_requirement_on_request_restricted_needs_approval_and_sandboxes() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(None, Scripted::Exit(0));
    let outcome = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert_eq!(outcome.result.as_ref().unwrap().exit_code, 0);
    assert_eq!(
        outcome.trace.requirement,
        Some(ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_execpolicy_amendment: None
        })
    );
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Hook)]
    );
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 1);
    assert!(attempts[0].sandbox_requested);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
}

/// Scenario row 2: `never` + restricted → `Skip { bypass_sandbox: false }`, nobody asked,
/// the restricted attempt still runs sandboxed; a denial is returned (never retried).
#[tokio::test]
async fn never_skips_approval_but_keeps_the_sandbox() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(None, Scripted::Denied);
    let outcome = Run::new(AskForApproval::Never, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert_eq!(
        outcome.trace.requirement,
        skip(false),
        "the default requirement under never"
    );
    assert!(matches!(
        outcome.result,
        Err(ToolError::SandboxDenied { .. })
    ));
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::PolicyDisallowsUnsandboxedApproval)
    );
    assert!(reviewers.requests("hook").is_empty());
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 1);
    assert!(attempts[0].sandbox_requested);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Config)]
    );
}

/// Scenario row 3: exec-policy allow on every segment → the first attempt bypasses the
/// sandbox, unless a deny-read entry exists.
#[tokio::test]
async fn explicit_allow_bypasses_the_sandbox_unless_reads_are_denied() {
    let tool = FakeTool::new(skip(true), Scripted::Exit(0));
    Run::new(AskForApproval::OnRequest, ApprovalConfig::default())
        .go(&tool)
        .await
        .result
        .unwrap();
    let attempt = &tool.attempts()[0];
    assert_eq!(attempt.sandbox, SandboxType::None);
    assert!(!attempt.sandbox_requested);

    let tool = FakeTool::new(skip(true), Scripted::Exit(0));
    let mut run = Run::new(AskForApproval::OnRequest, ApprovalConfig::default());
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    assert_eq!(
        outcome.trace.first_attempt_override,
        Some(airlock_core::SandboxOverride::NoOverride)
    );
    let attempt = &tool.attempts()[0];
    assert_eq!(attempt.sandbox, platform_sandbox());
    assert!(attempt.sandbox_requested);
}

/// Scenario row 4: escalation requested + deny-read → approved, but the override is forced
/// back to `NoOverride`: the filesystem sandbox is kept.
#[tokio::test]
async fn escalation_with_deny_read_keeps_the_filesystem_sandbox() {
    let reviewers = Reviewers::new();
    let mut tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    tool.sandbox_permissions = SandboxPermissions::RequireEscalated;
    let mut run = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")));
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert_eq!(reviewers.requests("hook").len(), 1, "approved once");
    assert_eq!(tool.attempts()[0].sandbox, platform_sandbox());

    // Without deny-read the same approved escalation runs unsandboxed.
    let mut tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    tool.sandbox_permissions = SandboxPermissions::RequireEscalated;
    Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await
        .result
        .unwrap();
    assert_eq!(tool.attempts()[0].sandbox, SandboxType::None);
}

/// Scenario row 5: `External` profile → no prompt for filesystem limits under `on-request`,
/// no outer sandbox, and `sandbox_requested = false`.
#[tokio::test]
async fn external_profile_adds_no_outer_sandbox_and_no_prompt() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(None, Scripted::Exit(0));
    let mut run = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("deny")));
    run.profile = built_in_profile(":external-sandbox").unwrap();
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert_eq!(outcome.trace.requirement, skip(false));
    assert!(reviewers.requests("hook").is_empty());
    let attempt = &tool.attempts()[0];
    assert_eq!(attempt.sandbox, SandboxType::None);
    assert!(!attempt.sandbox_requested);
    assert!(matches!(
        attempt.permissions,
        PermissionProfile::External { .. }
    ));
}
