//! `ExecPolicyAmendment`, `NetworkPolicyAmendment`, `NetworkPolicyRuleAction`
//! (reference `protocol.md` §8).

use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::NetworkPolicyRuleAction;
use pretty_assertions::assert_eq;

use crate::support::assert_rejected;
use crate::support::assert_round_trip;

#[test]
fn exec_amendment_is_a_bare_array() {
    let amendment = assert_round_trip::<ExecPolicyAmendment>(r#"["git","pull"]"#);
    assert_eq!(amendment.command(), ["git", "pull"]);
    assert_eq!(
        amendment,
        ExecPolicyAmendment::from(vec!["git".to_owned(), "pull".to_owned()])
    );
}

#[test]
fn exec_amendment_keeps_tokens_verbatim() {
    assert_round_trip::<ExecPolicyAmendment>(r#"["python3","-c","print(\"a b\")","ünï\ncode"]"#);
}

#[test]
fn exec_amendment_accepts_an_empty_array_on_the_wire() {
    // Persisting must refuse it; the wire type only carries it.
    let amendment = assert_round_trip::<ExecPolicyAmendment>("[]");
    assert!(amendment.command().is_empty());
}

#[test]
fn exec_amendment_rejects_other_shapes() {
    for bad in [
        r#"{"command":["git","pull"]}"#,
        r#""git pull""#,
        "[1,2]",
        r#"["git",null]"#,
        "null",
    ] {
        assert_rejected::<ExecPolicyAmendment>(bad);
    }
}

#[test]
fn network_amendment_round_trips_both_actions() {
    assert_eq!(
        assert_round_trip::<NetworkPolicyAmendment>(r#"{"host":"h","action":"allow"}"#),
        NetworkPolicyAmendment {
            host: "h".to_owned(),
            action: NetworkPolicyRuleAction::Allow,
        }
    );
    assert_eq!(
        assert_round_trip::<NetworkPolicyAmendment>(r#"{"host":"example.com","action":"deny"}"#),
        NetworkPolicyAmendment {
            host: "example.com".to_owned(),
            action: NetworkPolicyRuleAction::Deny,
        }
    );
}

#[test]
fn rule_action_round_trips() {
    assert_eq!(
        assert_round_trip::<NetworkPolicyRuleAction>(r#""allow""#),
        NetworkPolicyRuleAction::Allow
    );
    assert_eq!(
        assert_round_trip::<NetworkPolicyRuleAction>(r#""deny""#),
        NetworkPolicyRuleAction::Deny
    );
}

#[test]
fn network_amendment_rejects_invalid_inputs() {
    for bad in [
        r#"{"host":"h"}"#,
        r#"{"action":"allow"}"#,
        r#"{"host":"h","action":"Allow"}"#,
        r#"{"host":"h","action":"prompt"}"#,
        r#"{"host":7,"action":"allow"}"#,
        "null",
    ] {
        assert_rejected::<NetworkPolicyAmendment>(bad);
    }
    for bad in [r#""ask""#, r#""forbidden""#, r#""ALLOW""#, "true"] {
        assert_rejected::<NetworkPolicyRuleAction>(bad);
    }
}
