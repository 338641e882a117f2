//! Each decision kind through the user reviewer (issue 6 "Must show"; spec 06 §Decisions).

use std::sync::Arc;
use std::sync::RwLock;

use airlock_approval::APPROVAL_ABORTED;
use airlock_approval::AmendmentTarget;
use airlock_approval::ApprovalAction;
use airlock_approval::ApprovalContext;
use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::DecisionSource;
use airlock_approval::NO_REVIEWER_AVAILABLE;
use airlock_approval::PatchAction;
use airlock_approval::REJECTED_BY_USER;
use airlock_execpolicy::Policy;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::ReviewDecision;

use crate::support::*;

#[tokio::test]
async fn approved_applies_to_this_request_only() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::Approved),
    );
    let action = shell_action("c1", &["git", "push"], h.dir.path());
    let first = h.request(&action, &ApprovalContext::new("c1")).await;
    assert_eq!(first.decision, ReviewDecision::Approved);
    assert_eq!(first.source, DecisionSource::User);
    assert_eq!(
        first.clone().into_tool_result(),
        Ok(ReviewDecision::Approved)
    );
    let second = h.request(&action, &ApprovalContext::new("c1")).await;
    assert_eq!(second.source, DecisionSource::User);
    assert_eq!(h.asked(), 2, "plain approval is not remembered");
    assert!(h.session.store().is_empty());
}

#[tokio::test]
async fn approved_for_session_is_not_asked_again() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::ApprovedForSession),
    );
    let cwd = h.dir.path().to_path_buf();
    let first = h
        .request(
            &shell_action("c1", &["cargo", "build"], &cwd),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(first.decision, ReviewDecision::ApprovedForSession);
    assert_eq!(first.source, DecisionSource::User);
    // Same command spelled through a shell wrapper: same canonical key, not asked.
    let wrapped = shell_action("c2", &["bash", "-lc", "cargo build"], &cwd);
    let second = h.request(&wrapped, &ApprovalContext::new("c2")).await;
    assert_eq!(second.decision, ReviewDecision::ApprovedForSession);
    assert_eq!(second.source, DecisionSource::SessionCache);
    assert_eq!(h.asked(), 1);
    // A different cwd changes the risk: asked again.
    let other_cwd = shell_action("c3", &["cargo", "build"], &cwd.join("sub"));
    h.request(&other_cwd, &ApprovalContext::new("c3")).await;
    assert_eq!(h.asked(), 2);
}

#[tokio::test]
async fn approved_for_session_covers_patches_touching_a_subset_of_files() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::ApprovedForSession),
    );
    let cwd = h.dir.path().to_path_buf();
    let patch = |id: &str, files: &[&str]| {
        ApprovalAction::ApplyPatch(PatchAction {
            id: id.to_owned(),
            environment_id: None,
            cwd: cwd.clone(),
            files: files.iter().map(|f| cwd.join(f)).collect(),
            patch: "*** Begin Patch\n*** End Patch".to_owned(),
            changes: Default::default(),
            permissions_preapproved: false,
        })
    };
    h.request(
        &patch("p1", &["a.txt", "b.txt"]),
        &ApprovalContext::new("p1"),
    )
    .await;
    let subset = h
        .request(&patch("p2", &["b.txt"]), &ApprovalContext::new("p2"))
        .await;
    assert_eq!(subset.source, DecisionSource::SessionCache);
    assert_eq!(h.asked(), 1);
    let wider = h
        .request(
            &patch("p3", &["b.txt", "c.txt"]),
            &ApprovalContext::new("p3"),
        )
        .await;
    assert_eq!(wider.source, DecisionSource::User);
    assert_eq!(h.asked(), 2);
    // A retry of a patch is never answered from the cache.
    let mut retry = ApprovalContext::new("p4");
    retry.retry_reason = Some("command failed; retry without sandbox?".to_owned());
    let retried = h.request(&patch("p4", &["a.txt"]), &retry).await;
    assert_eq!(retried.source, DecisionSource::User);
    assert_eq!(h.asked(), 3);
}

#[tokio::test]
async fn approved_execpolicy_amendment_writes_the_rule_first_and_updates_the_live_policy() {
    let dir = tempdir();
    let rules_file = dir.path().join("rules").join("default.rules");
    let policy = Arc::new(RwLock::new(Policy::empty()));
    let target = AmendmentTarget::new(rules_file.clone(), Arc::clone(&policy));
    let amendment = ExecPolicyAmendment::new(vec!["git".to_owned(), "pull".to_owned()]);
    let answer = ReviewDecision::ApprovedExecpolicyAmendment {
        proposed_execpolicy_amendment: amendment.clone(),
    };
    let h = Harness::start_with(
        dir,
        settings(AskForApproval::OnRequest),
        always(answer.clone()),
        |events| ApprovalSession::new("s", config(""), Some(events)).with_amendment_target(target),
    );
    let mut action = shell_action("c1", &["git", "pull", "--rebase"], h.dir.path());
    if let ApprovalAction::Shell(command) = &mut action {
        command.proposed_execpolicy_amendment = Some(amendment);
    }
    let resolution = h.request(&action, &ApprovalContext::new("c1")).await;
    assert_eq!(resolution.decision, answer);
    assert!(resolution.into_tool_result().is_ok());
    // The event offered exactly this amendment.
    let prompts = h.prompts.lock().unwrap().clone();
    let ApprovalEvent::ExecApprovalRequest(event) = &prompts[0] else {
        panic!("{prompts:?}")
    };
    assert!(
        event.available_decisions.contains(&answer),
        "{:?}",
        event.available_decisions
    );
    // On disk, loadable, and live.
    let text = std::fs::read_to_string(&rules_file).unwrap();
    assert!(
        text.contains(r#"prefix_rule(pattern=["git", "pull"], decision="allow")"#),
        "{text}"
    );
    let reloaded = airlock_execpolicy::load_policy_files(&[&rules_file]).unwrap();
    assert_eq!(
        reloaded.get_allowed_prefixes(),
        vec![vec!["git".to_owned(), "pull".to_owned()]]
    );
    assert_eq!(
        policy.read().unwrap().get_allowed_prefixes(),
        vec![vec!["git".to_owned(), "pull".to_owned()]]
    );
}

#[tokio::test]
async fn amendment_that_cannot_be_persisted_warns_and_still_approves() {
    let dir = tempdir();
    // A regular file where the rules folder should be: the append fails.
    std::fs::write(dir.path().join("rules"), "not a folder").unwrap();
    let target = AmendmentTarget::new(
        dir.path().join("rules").join("default.rules"),
        Arc::new(RwLock::new(Policy::empty())),
    );
    let amendment = ExecPolicyAmendment::new(vec!["make".to_owned()]);
    let answer = ReviewDecision::ApprovedExecpolicyAmendment {
        proposed_execpolicy_amendment: amendment.clone(),
    };
    let h = Harness::start_with(
        dir,
        settings(AskForApproval::OnRequest),
        always(answer.clone()),
        |events| ApprovalSession::new("s", config(""), Some(events)).with_amendment_target(target),
    );
    let mut action = shell_action("c1", &["make"], h.dir.path());
    if let ApprovalAction::Shell(command) = &mut action {
        command.proposed_execpolicy_amendment = Some(amendment);
    }
    let resolution = h.request(&action, &ApprovalContext::new("c1")).await;
    assert_eq!(resolution.decision, answer);
    let warnings = h.flushed_warnings().await;
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("Failed to apply execpolicy amendment: ")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn an_amendment_that_was_not_offered_is_treated_as_denied() {
    let dir = tempdir();
    let rules_file = dir.path().join("default.rules");
    let target = AmendmentTarget::new(rules_file.clone(), Arc::new(RwLock::new(Policy::empty())));
    // The client tries to persist a much wider prefix than proposed.
    let answer = ReviewDecision::ApprovedExecpolicyAmendment {
        proposed_execpolicy_amendment: ExecPolicyAmendment::new(vec!["rm".to_owned()]),
    };
    let h = Harness::start_with(
        dir,
        settings(AskForApproval::OnRequest),
        always(answer),
        |events| ApprovalSession::new("s", config(""), Some(events)).with_amendment_target(target),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["rm", "x"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert!(
        matches!(resolution.decision, ReviewDecision::Denied { .. }),
        "{resolution:?}"
    );
    assert!(!rules_file.exists(), "nothing may be persisted");
}

#[tokio::test]
async fn approved_for_session_is_not_offered_with_additional_permissions() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::ApprovedForSession),
    );
    let mut action = shell_action("c1", &["curl", "example.com"], h.dir.path());
    if let ApprovalAction::Shell(command) = &mut action {
        command.sandbox_permissions =
            airlock_protocol::SandboxPermissions::WithAdditionalPermissions;
        command.additional_permissions = Some(airlock_protocol::AdditionalPermissionProfile {
            network: Some(airlock_protocol::NetworkPermissions {
                enabled: Some(true),
            }),
            file_system: None,
        });
    }
    let resolution = h.request(&action, &ApprovalContext::new("c1")).await;
    assert!(
        matches!(resolution.decision, ReviewDecision::Denied { .. }),
        "{resolution:?}"
    );
    assert!(
        h.session.store().is_empty(),
        "a grant is never remembered for the session"
    );
    let prompts = h.prompts.lock().unwrap().clone();
    let ApprovalEvent::ExecApprovalRequest(event) = &prompts[0] else {
        panic!()
    };
    assert_eq!(
        event.available_decisions,
        vec![ReviewDecision::Approved, ReviewDecision::Abort]
    );
}

#[tokio::test]
async fn denied_becomes_model_visible_error_text() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::denied_with_reason("not on a Friday")),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["deploy"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    let error = resolution.into_tool_result().unwrap_err();
    assert_eq!(error.message, "not on a Friday");
    assert!(!error.interrupts_turn, "a denial lets the turn go on");
    assert!(!h.turn.is_interrupted());

    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::denied()),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["deploy"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(
        resolution.into_tool_result().unwrap_err().message,
        REJECTED_BY_USER
    );
}

#[tokio::test]
async fn abort_interrupts_the_turn_and_every_pending_approval() {
    let dir = tempdir();
    // The user aborts only c3; c1 and c2 stay pending until the abort interrupts the turn.
    let answer: Box<Answer> = Box::new(|event| match event {
        ApprovalEvent::ExecApprovalRequest(request) if request.call_id == "c3" => {
            Some(ReviewDecision::Abort)
        }
        _ => None,
    });
    let h = Harness::start(dir, config(""), settings(AskForApproval::OnRequest), answer);
    let cwd = h.dir.path().to_path_buf();
    let (session, turn) = (Arc::clone(&h.session), Arc::clone(&h.turn));
    let pending: Vec<_> = ["c1", "c2"]
        .into_iter()
        .map(|id| {
            let (session, turn, action) = (
                Arc::clone(&session),
                Arc::clone(&turn),
                shell_action(id, &["ls", id], &cwd),
            );
            tokio::spawn(async move {
                session
                    .request_approval(&turn, &action, &ApprovalContext::new(id))
                    .await
            })
        })
        .collect();
    // Wait until both are registered before c3 is asked.
    while h.turn.pending_count() < 2 {
        tokio::task::yield_now().await;
    }
    let third = h
        .request(
            &shell_action("c3", &["rm", "-rf", "x"], &cwd),
            &ApprovalContext::new("c3"),
        )
        .await;
    assert_eq!(third.decision, ReviewDecision::Abort);
    let error = third.into_tool_result().unwrap_err();
    assert_eq!(error.message, APPROVAL_ABORTED);
    assert!(error.interrupts_turn);
    for handle in pending {
        assert_eq!(handle.await.unwrap().decision, ReviewDecision::Abort);
    }
    assert!(h.turn.is_interrupted());
    assert_eq!(h.turn.pending_count(), 0);
    h.flush().await;
    let mut resolved = h.resolved.lock().unwrap().clone();
    resolved.sort_by(|a, b| a.0.cmp(&b.0));
    let expected: Vec<(String, ReviewDecision)> = ["c1", "c2", "c3"]
        .iter()
        .map(|id| ((*id).to_owned(), ReviewDecision::Abort))
        .collect();
    assert_eq!(
        resolved, expected,
        "each pending approval resolved once, as abort"
    );
    // A later request in the interrupted turn is aborted without a prompt.
    let asked = h.asked();
    let late = h
        .request(
            &shell_action("c4", &["ls"], &cwd),
            &ApprovalContext::new("c4"),
        )
        .await;
    assert_eq!(late.decision, ReviewDecision::Abort);
    assert_eq!(h.asked(), asked);
}

#[tokio::test]
async fn a_closed_event_channel_aborts() {
    let dir = tempdir();
    let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
    drop(receiver);
    let session = ApprovalSession::new("s", config(""), Some(events));
    let turn = session.start_turn(settings(AskForApproval::OnRequest));
    let resolution = session
        .request_approval(
            &turn,
            &shell_action("c1", &["ls"], dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(resolution.decision, ReviewDecision::Abort);
    assert_eq!(turn.pending_count(), 0);
}

#[tokio::test]
async fn ending_the_turn_aborts_what_is_pending() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        never_answer(),
    );
    let (session, turn) = (Arc::clone(&h.session), Arc::clone(&h.turn));
    let action = shell_action("c1", &["ls"], h.dir.path());
    let waiting = tokio::spawn(async move {
        session
            .request_approval(&turn, &action, &ApprovalContext::new("c1"))
            .await
    });
    while h.turn.pending_count() < 1 {
        tokio::task::yield_now().await;
    }
    assert!(h.session.is_waiting_on_user());
    h.session.end_turn();
    assert_eq!(waiting.await.unwrap().decision, ReviewDecision::Abort);
    assert!(!h.session.is_waiting_on_user());
}

#[tokio::test]
async fn without_a_user_reviewer_a_prompt_is_denied() {
    let dir = tempdir();
    let session = ApprovalSession::new("s", config(""), None);
    let turn = session.start_turn(settings(AskForApproval::OnRequest));
    let resolution = session
        .request_approval(
            &turn,
            &shell_action("c1", &["ls"], dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(resolution.source, DecisionSource::Config);
    assert_eq!(
        resolution.into_tool_result().unwrap_err().message,
        NO_REVIEWER_AVAILABLE
    );
}

#[tokio::test]
async fn answering_an_unknown_id_only_warns() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        never_answer(),
    );
    h.session
        .submit_exec_approval("nobody", None, ReviewDecision::Approved)
        .await;
    assert!(
        !h.session
            .notify_approval("nobody", ReviewDecision::Approved)
    );
    let warnings = h.flushed_warnings().await;
    assert_eq!(
        warnings,
        vec!["No pending approval found for call_id: nobody".to_owned(); 2]
    );
}

#[tokio::test]
async fn user_event_carries_reason_decisions_and_segments() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::Approved),
    );
    let mut action = shell_action(
        "c1",
        &["bash", "-lc", "git add . && git commit -m wip"],
        h.dir.path(),
    );
    if let ApprovalAction::Shell(command) = &mut action {
        command.justification = Some("save work".to_owned());
    }
    let mut ctx = ApprovalContext::new("c1");
    ctx.approval_id = Some("a-1".to_owned());
    ctx.approval_reason = Some("writes outside the sandbox".to_owned());
    ctx.retry_reason = Some("command failed; retry without sandbox?".to_owned());
    h.request(&action, &ctx).await;
    let prompts = h.prompts.lock().unwrap().clone();
    let ApprovalEvent::ExecApprovalRequest(event) = &prompts[0] else {
        panic!()
    };
    assert_eq!(event.effective_approval_id(), "a-1");
    assert_eq!(event.turn_id, "turn-1");
    assert_eq!(
        event.reason.as_deref(),
        Some("command failed; retry without sandbox?")
    );
    assert_eq!(
        event.available_decisions,
        vec![
            ReviewDecision::Approved,
            ReviewDecision::ApprovedForSession,
            ReviewDecision::denied(),
            ReviewDecision::Abort
        ]
    );
    let json = serde_json::to_value(&prompts[0]).unwrap();
    assert_eq!(json["type"], "exec_approval_request");
    assert_eq!(
        json["parsed_cmd"],
        serde_json::json!([{"type":"unknown","cmd":"git add ."},{"type":"unknown","cmd":"git commit -m wip"}])
    );
}
