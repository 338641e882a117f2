//! Network prompts: host amendments are persisted before delivery, never cached (spec 06
//! §Decisions; reference `orchestrator-and-approvals.md` §12).

use std::sync::Arc;
use std::sync::RwLock;

use airlock_approval::AmendmentTarget;
use airlock_approval::ApprovalContext;
use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::DecisionSource;
use airlock_approval::REJECTED_BY_USER;
use airlock_execpolicy::Policy;
use airlock_protocol::AskForApproval;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkApprovalProtocol;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::ReviewDecision;

use crate::support::*;

fn host_rule(action: NetworkPolicyRuleAction) -> ReviewDecision {
    ReviewDecision::NetworkPolicyAmendment {
        network_policy_amendment: NetworkPolicyAmendment {
            host: "example.com".to_owned(),
            action,
        },
    }
}

fn network_ctx(call_id: &str) -> ApprovalContext {
    let mut ctx = ApprovalContext::new(call_id);
    ctx.network_approval_context = Some(NetworkApprovalContext {
        host: "example.com".to_owned(),
        protocol: NetworkApprovalProtocol::Https,
    });
    ctx.retry_reason = Some("Network access to \"example.com\" is blocked by policy.".to_owned());
    ctx
}

async fn answer_with(
    action: NetworkPolicyRuleAction,
) -> (
    airlock_approval::ApprovalResolution,
    Harness,
    Arc<RwLock<Policy>>,
) {
    let dir = tempdir();
    let rules_file = dir.path().join("default.rules");
    let policy = Arc::new(RwLock::new(Policy::empty()));
    let target = AmendmentTarget::new(rules_file, Arc::clone(&policy));
    let h = Harness::start_with(
        dir,
        settings(AskForApproval::OnRequest),
        always(host_rule(action)),
        |events| ApprovalSession::new("s", config(""), Some(events)).with_amendment_target(target),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["curl", "https://example.com"], h.dir.path()),
            &network_ctx("c1"),
        )
        .await;
    (resolution, h, policy)
}

#[tokio::test]
async fn allow_host_is_persisted_and_approves() {
    let (resolution, h, policy) = answer_with(NetworkPolicyRuleAction::Allow).await;
    assert_eq!(
        resolution.clone().into_tool_result(),
        Ok(host_rule(NetworkPolicyRuleAction::Allow))
    );
    let text = std::fs::read_to_string(h.dir.path().join("default.rules")).unwrap();
    assert!(
        text.contains(r#"network_rule(host="example.com", protocol="https", decision="allow")"#),
        "{text}"
    );
    assert_eq!(policy.read().unwrap().network_rules().len(), 1);
    let prompts = h.prompts.lock().unwrap().clone();
    let ApprovalEvent::ExecApprovalRequest(event) = &prompts[0] else {
        panic!()
    };
    assert_eq!(
        event.reason.as_deref(),
        Some("Network access to \"example.com\" is blocked by policy.")
    );
    assert_eq!(
        event
            .proposed_network_policy_amendments
            .as_ref()
            .map(Vec::len),
        Some(2)
    );
}

#[tokio::test]
async fn deny_host_is_persisted_and_rejects() {
    let (resolution, h, _policy) = answer_with(NetworkPolicyRuleAction::Deny).await;
    assert_eq!(resolution.source, DecisionSource::User);
    assert_eq!(
        resolution.into_tool_result().unwrap_err().message,
        REJECTED_BY_USER
    );
    let text = std::fs::read_to_string(h.dir.path().join("default.rules")).unwrap();
    assert!(text.contains(r#"decision="deny")"#), "{text}");
}

#[tokio::test]
async fn network_prompts_are_never_cached() {
    let dir = tempdir();
    let h = Harness::start(
        dir,
        config(""),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::ApprovedForSession),
    );
    let action = shell_action("c1", &["curl", "https://example.com"], h.dir.path());
    h.request(&action, &network_ctx("c1")).await;
    let second = h.request(&action, &network_ctx("c2")).await;
    assert_eq!(second.source, DecisionSource::User);
    assert_eq!(h.asked(), 2);
    assert!(h.session.store().is_empty());
}

#[tokio::test]
async fn a_client_that_stops_reading_events_aborts_its_pending_approvals() {
    let dir = tempdir();
    let (events, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let session = Arc::new(ApprovalSession::new("s", config(""), Some(events)));
    let turn = session.start_turn(settings(AskForApproval::OnRequest));
    let (s, t, action) = (
        Arc::clone(&session),
        Arc::clone(&turn),
        shell_action("c1", &["ls"], dir.path()),
    );
    let waiting = tokio::spawn(async move {
        s.request_approval(&t, &action, &ApprovalContext::new("c1"))
            .await
    });
    let Some(ApprovalEvent::ExecApprovalRequest(_)) = receiver.recv().await else {
        panic!("no prompt")
    };
    drop(receiver);
    let resolution = tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resolution.decision, ReviewDecision::Abort);
    assert_eq!(turn.pending_count(), 0);
}

#[test]
fn events_round_trip_through_json() {
    let event = ApprovalEvent::ApprovalResolved {
        id: "a".to_owned(),
        turn_id: "t".to_owned(),
        decision: ReviewDecision::denied_with_reason("no"),
    };
    let json = serde_json::to_value(&event).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "approval_resolved", "id": "a", "turn_id": "t", "decision": {"denied": {"rejection": "no"}}})
    );
    assert_eq!(
        serde_json::from_value::<ApprovalEvent>(json).unwrap(),
        event
    );
    let request = serde_json::json!({"type": "exec_approval_request", "call_id": "c", "command": ["ls"], "cwd": "/w"});
    let ApprovalEvent::ExecApprovalRequest(parsed) = serde_json::from_value(request).unwrap()
    else {
        panic!()
    };
    // A sender that left out `available_decisions` gets the derived list.
    assert_eq!(
        parsed.decisions(),
        vec![
            ReviewDecision::Approved,
            ReviewDecision::ApprovedForSession,
            ReviewDecision::denied(),
            ReviewDecision::Abort
        ]
    );
}

#[test]
fn an_api_key_over_plain_http_to_another_host_warns() {
    let parse = |endpoint: &str| {
        let table: toml::Table = format!(
            "[auto_review]\nendpoint = {endpoint:?}\nmodel = \"m\"\napi_key_env = \"KEY\"\n"
        )
        .parse()
        .unwrap();
        airlock_approval::ApprovalConfig::from_config_table(&table, "config.toml", None)
            .unwrap()
            .warnings
    };
    assert!(parse("http://127.0.0.1:8080/v1").is_empty());
    assert!(parse("http://localhost/v1").is_empty());
    assert!(parse("http://models.internal/v1")[0].contains("sent unencrypted"));
}
