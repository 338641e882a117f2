//! Catalog overrides per approval policy (spec 08 §Sections: "fall back to built-in templates when
//! absent"): a replacement swaps only the policy paragraph, facts (granular lists, prefixes,
//! writable roots) stay; `on_request_auto_review` also replaces the built-in auto-review note; an
//! empty replacement removes the paragraph; a missing one keeps the built-in text. Catalog JSON
//! rejects unknown keys.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::path::Path;

use airlock_instructions::ApprovalFeatures;
use airlock_instructions::ApprovalMessages;
use airlock_instructions::InstructionsCatalog;
use airlock_instructions::PermissionsState;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use common::CWD;
use common::build;
use common::built_in;

fn catalog(messages: ApprovalMessages) -> InstructionsCatalog {
    InstructionsCatalog {
        approvals: messages,
        ..InstructionsCatalog::default()
    }
}

fn body(
    policy: AskForApproval,
    reviewer: ApprovalsReviewer,
    catalog: Option<&InstructionsCatalog>,
) -> String {
    build(
        &built_in(":workspace", Path::new(CWD)),
        policy,
        reviewer,
        &[&["git", "pull"]],
        ApprovalFeatures::default(),
        catalog,
    )
    .body()
}

#[test]
fn a_policy_override_replaces_only_that_policys_paragraph() {
    let custom = catalog(ApprovalMessages {
        on_request: Some("CUSTOM on-request text.".to_owned()),
        never: Some("CUSTOM never text.".to_owned()),
        ..ApprovalMessages::default()
    });
    let on_request = body(
        AskForApproval::OnRequest,
        ApprovalsReviewer::User,
        Some(&custom),
    );
    let built_in_text = body(AskForApproval::OnRequest, ApprovalsReviewer::User, None);
    assert!(
        on_request.contains("\n\nCUSTOM on-request text.\n\n## How the exec policy sees a command")
    );
    assert!(!on_request.contains("Approval policy is `on-request`"));
    assert!(built_in_text.contains("Approval policy is `on-request`"));
    // Everything after the paragraph is unchanged.
    let tail = |text: &str| {
        text.split_once("## How the exec policy")
            .unwrap()
            .1
            .to_owned()
    };
    assert_eq!(tail(&on_request), tail(&built_in_text));
    // Other policies keep falling back.
    let untrusted = body(
        AskForApproval::UnlessTrusted,
        ApprovalsReviewer::User,
        Some(&custom),
    );
    assert!(untrusted.contains("Approval policy is `untrusted`"));
    let never = body(
        AskForApproval::Never,
        ApprovalsReviewer::User,
        Some(&custom),
    );
    assert!(never.contains("CUSTOM never text.\n\n## Approved command prefixes"));
}

#[test]
fn the_auto_review_override_replaces_the_paragraph_and_the_auto_review_note() {
    let custom = catalog(ApprovalMessages {
        on_request: Some("USER text.".to_owned()),
        on_request_auto_review: Some("AUTO text.".to_owned()),
        ..ApprovalMessages::default()
    });
    let auto = body(
        AskForApproval::OnRequest,
        ApprovalsReviewer::AutoReview,
        Some(&custom),
    );
    assert!(auto.contains("AUTO text.") && !auto.contains("USER text."));
    assert!(!auto.contains("## Automatic review"));
    let user = body(
        AskForApproval::OnRequest,
        ApprovalsReviewer::User,
        Some(&custom),
    );
    assert!(user.contains("USER text.") && !user.contains("AUTO text."));
    // Without the auto-review text, the user text is used and the built-in note is kept.
    let only_user = catalog(ApprovalMessages {
        on_request: Some("USER text.".to_owned()),
        ..ApprovalMessages::default()
    });
    let auto = body(
        AskForApproval::OnRequest,
        ApprovalsReviewer::AutoReview,
        Some(&only_user),
    );
    assert!(auto.contains("USER text.") && auto.contains("## Automatic review"));
}

#[test]
fn an_empty_override_drops_the_paragraph_but_not_the_facts() {
    let empty = catalog(ApprovalMessages {
        granular: Some(String::new()),
        ..ApprovalMessages::default()
    });
    let text = body(
        AskForApproval::Granular(common::MIXED_GRANULAR),
        ApprovalsReviewer::User,
        Some(&empty),
    );
    assert!(!text.contains("Approval policy is `granular`"));
    assert!(text.contains("These kinds of request may ask the user:"));
    assert!(text.contains("- [\"git\", \"pull\"]"));
    // Missing and empty are different texts, so different snapshots.
    let missing = PermissionsState::new(build(
        &built_in(":workspace", Path::new(CWD)),
        AskForApproval::Granular(common::MIXED_GRANULAR),
        ApprovalsReviewer::User,
        &[],
        ApprovalFeatures::default(),
        None,
    ));
    let emptied = PermissionsState::new(build(
        &built_in(":workspace", Path::new(CWD)),
        AskForApproval::Granular(common::MIXED_GRANULAR),
        ApprovalsReviewer::User,
        &[],
        ApprovalFeatures::default(),
        Some(&empty),
    ));
    assert_ne!(missing.snapshot(), emptied.snapshot());
}

#[test]
fn catalog_json_has_a_fixed_shape() {
    let parsed: InstructionsCatalog = serde_json::from_str(
        r#"{"sandbox":{"read_only":""},"approvals":{"on_request":"x","never":"y"}}"#,
    )
    .unwrap();
    assert_eq!(parsed.sandbox.read_only.as_deref(), Some(""));
    assert_eq!(parsed.approvals.on_request.as_deref(), Some("x"));
    assert_eq!(parsed.approvals.never.as_deref(), Some("y"));
    assert!(
        serde_json::from_str::<InstructionsCatalog>(r#"{"approvals":{"on_requets":"x"}}"#).is_err()
    );
    assert_eq!(
        serde_json::from_str::<InstructionsCatalog>("{}").unwrap(),
        InstructionsCatalog::default()
    );
}
