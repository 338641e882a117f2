//! Policies that forbid asking: granular categories set to `false` and `never` (spec README
//! invariants 4 and 5).

use airlock_approval::ApprovalCategory;
use airlock_approval::ApprovalContext;
use airlock_approval::DecisionSource;
use airlock_protocol::AskForApproval;
use airlock_protocol::GranularApprovalConfig;
use airlock_protocol::ReviewDecision;

use crate::support::*;

fn granular(sandbox_approval: bool, rules: bool) -> AskForApproval {
    AskForApproval::Granular(GranularApprovalConfig {
        sandbox_approval,
        rules,
        skill_approval: false,
        request_permissions: false,
        mcp_elicitations: true,
    })
}

#[tokio::test]
async fn a_false_category_is_rejected_without_hook_prompt_or_pending_request() {
    let dir = tempdir();
    let marker = dir.path().join("hook-ran");
    let hook = script(
        dir.path(),
        "hook.sh",
        &format!(
            "touch '{}'\necho '{{\"hookSpecificOutput\":{{\"decision\":{{\"behavior\":\"allow\"}}}}}}'",
            marker.display()
        ),
    );
    let h = Harness::start(
        dir,
        config(&hook_toml(&hook, "", 10)),
        settings(granular(false, true)),
        always(ReviewDecision::Approved),
    );
    let cwd = h.dir.path().to_path_buf();
    for (category, field) in [
        (ApprovalCategory::SandboxApproval, "sandbox"),
        (ApprovalCategory::SkillApproval, "skill_approval"),
        (ApprovalCategory::RequestPermissions, "request_permissions"),
    ] {
        let mut ctx = ApprovalContext::new("c1");
        ctx.category = category;
        let resolution = h
            .request(&shell_action("c1", &["sudo", "ls"], &cwd), &ctx)
            .await;
        assert_eq!(resolution.source, DecisionSource::Config);
        assert_eq!(
            resolution.into_tool_result().unwrap_err().message,
            format!("approval policy disallowed {field} approval prompt")
        );
    }
    assert_eq!(h.asked(), 0, "no prompt");
    assert_eq!(h.turn.pending_count(), 0, "no pending request");
    assert!(!marker.exists(), "no hook");
    // A `true` category still asks (the hook answers first).
    let mut ctx = ApprovalContext::new("c2");
    ctx.category = ApprovalCategory::Rules;
    let allowed = h
        .request(&shell_action("c2", &["git", "push"], &cwd), &ctx)
        .await;
    assert_eq!(allowed.decision, ReviewDecision::Approved);
    assert_eq!(allowed.source, DecisionSource::Hook);
    assert!(marker.exists());
}

#[tokio::test]
async fn rules_category_false_rejects_prompt_rules_only() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(granular(true, false)),
        always(ReviewDecision::Approved),
    );
    let cwd = h.dir.path().to_path_buf();
    let mut ctx = ApprovalContext::new("c1");
    ctx.category = ApprovalCategory::Rules;
    let rejected = h
        .request(&shell_action("c1", &["git", "push"], &cwd), &ctx)
        .await;
    assert_eq!(
        rejected.into_tool_result().unwrap_err().message,
        "approval policy disallowed rules approval prompt"
    );
    let asked = h
        .request(
            &shell_action("c2", &["git", "push"], &cwd),
            &ApprovalContext::new("c2"),
        )
        .await;
    assert_eq!(asked.decision, ReviewDecision::Approved);
    assert_eq!(h.asked(), 1);
}

#[tokio::test]
async fn never_means_nobody_is_asked() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::Never),
        always(ReviewDecision::Approved),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(resolution.source, DecisionSource::Config);
    assert!(
        resolution
            .into_tool_result()
            .unwrap_err()
            .message
            .contains("approval policy is never")
    );
    assert_eq!(h.asked(), 0);
}

#[tokio::test]
async fn untrusted_and_on_request_ask() {
    for policy in [AskForApproval::UnlessTrusted, AskForApproval::OnRequest] {
        let dir = tempdir();
        let h = Harness::start(
            dir,
            config(""),
            settings(policy),
            always(ReviewDecision::Approved),
        );
        let mut ctx = ApprovalContext::new("c1");
        ctx.category = ApprovalCategory::McpElicitations;
        let resolution = h
            .request(&shell_action("c1", &["ls"], h.dir.path()), &ctx)
            .await;
        assert_eq!(resolution.decision, ReviewDecision::Approved);
        assert_eq!(h.asked(), 1);
    }
}
