//! `ReviewDecision` and `Rejection` (reference `protocol.md` §9, spec 01).

use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::REJECTION_MAX_BYTES;
use airlock_protocol::Rejection;
use airlock_protocol::ReviewDecision;
use pretty_assertions::assert_eq;
use serde::Deserialize;

use crate::support::assert_reads_as;
use crate::support::assert_rejected;
use crate::support::assert_round_trip;

#[test]
fn unit_decisions_round_trip() {
    let cases = [
        (r#""approved""#, ReviewDecision::Approved),
        (
            r#""approved_for_session""#,
            ReviewDecision::ApprovedForSession,
        ),
        (
            r#""approved_mcp_policy_amendment""#,
            ReviewDecision::ApprovedMcpPolicyAmendment,
        ),
        (r#""timed_out""#, ReviewDecision::TimedOut),
        (r#""abort""#, ReviewDecision::Abort),
    ];
    for (json, expected) in cases {
        assert_eq!(assert_round_trip::<ReviewDecision>(json), expected);
    }
}

#[test]
fn exec_amendment_decision_round_trips() {
    assert_eq!(
        assert_round_trip::<ReviewDecision>(
            r#"{"approved_execpolicy_amendment":{"proposed_execpolicy_amendment":["git","pull"]}}"#
        ),
        ReviewDecision::ApprovedExecpolicyAmendment {
            proposed_execpolicy_amendment: ExecPolicyAmendment::new(vec![
                "git".to_owned(),
                "pull".to_owned()
            ]),
        }
    );
}

#[test]
fn network_amendment_decision_round_trips() {
    assert_eq!(
        assert_round_trip::<ReviewDecision>(
            r#"{"network_policy_amendment":{"network_policy_amendment":{"host":"h","action":"allow"}}}"#
        ),
        ReviewDecision::NetworkPolicyAmendment {
            network_policy_amendment: NetworkPolicyAmendment {
                host: "h".to_owned(),
                action: NetworkPolicyRuleAction::Allow,
            },
        }
    );
    assert_round_trip::<ReviewDecision>(
        r#"{"network_policy_amendment":{"network_policy_amendment":{"host":"h","action":"deny"}}}"#,
    );
}

#[test]
fn denied_round_trips_with_and_without_reason() {
    let with_reason = assert_round_trip::<ReviewDecision>(r#"{"denied":{"rejection":"reason"}}"#);
    assert_eq!(with_reason, ReviewDecision::denied_with_reason("reason"));
    assert_eq!(with_reason.rejection_reason(), Some("reason"));

    let without = assert_round_trip::<ReviewDecision>(r#"{"denied":{"rejection":null}}"#);
    assert_eq!(without, ReviewDecision::denied());
    assert_eq!(without.rejection_reason(), None);
}

#[test]
fn bare_denied_is_a_legacy_input_form() {
    assert_reads_as::<ReviewDecision>(r#""denied""#, r#"{"denied":{"rejection":null}}"#);
    assert_reads_as::<ReviewDecision>(r#"{"denied":{}}"#, r#"{"denied":{"rejection":null}}"#);
}

#[test]
fn payload_objects_ignore_unknown_fields() {
    assert_reads_as::<ReviewDecision>(
        r#"{"denied":{"rejection":"no","extra":1}}"#,
        r#"{"denied":{"rejection":"no"}}"#,
    );
}

#[test]
fn decisions_read_inside_tagged_and_list_containers() {
    // `Op` is internally tagged, so its decision is read from buffered content; the legacy and
    // canonical forms must both survive that path.
    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Op {
        ExecApproval {
            id: String,
            decision: ReviewDecision,
        },
    }
    for (json, expected) in [
        (
            r#"{"type":"exec_approval","id":"c1","decision":"denied"}"#,
            ReviewDecision::denied(),
        ),
        (
            r#"{"type":"exec_approval","id":"c1","decision":{"denied":{"rejection":"r"}}}"#,
            ReviewDecision::denied_with_reason("r"),
        ),
        (
            r#"{"type":"exec_approval","id":"c1","decision":"approved_for_session"}"#,
            ReviewDecision::ApprovedForSession,
        ),
    ] {
        let op: Op = match serde_json::from_str(json) {
            Ok(op) => op,
            Err(err) => panic!("{json}: {err}"),
        };
        let Op::ExecApproval { id, decision } = op;
        assert_eq!(id, "c1");
        assert_eq!(decision, expected);
    }

    let list: Vec<ReviewDecision> = match serde_json::from_str(
        r#"["approved",{"approved_execpolicy_amendment":{"proposed_execpolicy_amendment":["ls"]}},"abort"]"#,
    ) {
        Ok(list) => list,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(list.len(), 3);
    assert_eq!(list[2], ReviewDecision::Abort);
}

#[test]
fn long_reasons_are_cut_on_a_char_boundary() {
    // 3-byte characters: 4096 is not a multiple of 3, so the cut must step back to 4095.
    let long = "€".repeat(2000);
    let expected = "€".repeat(REJECTION_MAX_BYTES / 3);

    let built = Rejection::new(long.clone());
    assert_eq!(built.reason(), Some(expected.as_str()));

    let json = match serde_json::to_string(&serde_json::json!({ "denied": { "rejection": long } }))
    {
        Ok(json) => json,
        Err(err) => panic!("{err}"),
    };
    let read: ReviewDecision = match serde_json::from_str(&json) {
        Ok(read) => read,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(read.rejection_reason(), Some(expected.as_str()));
    assert_eq!(ReviewDecision::denied_with_reason(long), read);
}

#[test]
fn reasons_up_to_the_limit_are_kept() {
    let exact = "a".repeat(REJECTION_MAX_BYTES);
    assert_eq!(Rejection::new(exact.clone()).reason(), Some(exact.as_str()));
    let over = "a".repeat(REJECTION_MAX_BYTES + 1);
    assert_eq!(Rejection::new(over).into_reason(), Some(exact));
    assert_eq!(Rejection::from(None).reason(), None);
    assert_eq!(Rejection::new("").reason(), Some(""));
}

#[test]
fn default_is_denied_without_reason() {
    assert_eq!(ReviewDecision::default(), ReviewDecision::denied());
    assert_eq!(Rejection::default(), Rejection::none());
}

#[test]
fn opaque_labels_follow_the_reference() {
    let allow = NetworkPolicyAmendment {
        host: "h".to_owned(),
        action: NetworkPolicyRuleAction::Allow,
    };
    let deny = NetworkPolicyAmendment {
        host: "h".to_owned(),
        action: NetworkPolicyRuleAction::Deny,
    };
    let cases = [
        (ReviewDecision::Approved, "approved"),
        (
            ReviewDecision::ApprovedExecpolicyAmendment {
                proposed_execpolicy_amendment: ExecPolicyAmendment::default(),
            },
            "approved_with_amendment",
        ),
        (ReviewDecision::ApprovedForSession, "approved_for_session"),
        (
            ReviewDecision::ApprovedMcpPolicyAmendment,
            "approved_mcp_policy_amendment",
        ),
        (
            ReviewDecision::NetworkPolicyAmendment {
                network_policy_amendment: allow,
            },
            "approved_with_network_policy_allow",
        ),
        (
            ReviewDecision::NetworkPolicyAmendment {
                network_policy_amendment: deny,
            },
            "denied_with_network_policy_deny",
        ),
        (ReviewDecision::denied_with_reason("secret"), "denied"),
        (ReviewDecision::TimedOut, "timed_out"),
        (ReviewDecision::Abort, "abort"),
    ];
    for (decision, label) in cases {
        assert_eq!(decision.opaque_label(), label);
    }
}

#[test]
fn rejects_invalid_decisions() {
    for bad in [
        r#""approve""#,
        r#""Approved""#,
        r#""approved-for-session""#,
        r#""accept""#,
        r#""""#,
        r#""approved_execpolicy_amendment""#,
        r#""network_policy_amendment""#,
        r#"{"approved":null}"#,
        r#"{"abort":{}}"#,
        "{}",
        r#"{"denied":{},"abort":null}"#,
        r#"{"denied":null}"#,
        r#"{"denied":{"rejection":5}}"#,
        r#"{"denied":"reason"}"#,
        r#"{"approved_execpolicy_amendment":{"proposed_execpolicy_amendment":"git pull"}}"#,
        r#"{"approved_execpolicy_amendment":{}}"#,
        r#"{"approved_execpolicy_amendment":["git","pull"]}"#,
        r#"{"network_policy_amendment":{"network_policy_amendment":{"host":"h","action":"maybe"}}}"#,
        r#"{"network_policy_amendment":{"host":"h","action":"allow"}}"#,
        r#"{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["git"]}}"#,
        "null",
        "true",
        "0",
        r#"["approved"]"#,
    ] {
        assert_rejected::<ReviewDecision>(bad);
    }
}

#[test]
fn error_messages_are_specific() {
    let unknown = assert_rejected::<ReviewDecision>(r#""approve""#);
    assert!(unknown.contains("unknown variant"), "{unknown}");
    assert!(unknown.contains("approved_for_session"), "{unknown}");

    let missing_payload = assert_rejected::<ReviewDecision>(r#""approved_execpolicy_amendment""#);
    assert!(
        missing_payload.contains("needs a payload"),
        "{missing_payload}"
    );

    let wrapped_unit = assert_rejected::<ReviewDecision>(r#"{"abort":{}}"#);
    assert!(wrapped_unit.contains("bare string"), "{wrapped_unit}");

    let two_keys = assert_rejected::<ReviewDecision>(r#"{"denied":{},"abort":null}"#);
    assert!(two_keys.contains("exactly one key"), "{two_keys}");
}
