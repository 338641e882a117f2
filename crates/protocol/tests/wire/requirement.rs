//! `ExecApprovalRequirement` (reference `orchestrator-and-approvals.md` §1; spec 10 `explain`).

use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::ExecPolicyAmendment;
use pretty_assertions::assert_eq;

use crate::support::assert_reads_as;
use crate::support::assert_rejected;
use crate::support::assert_round_trip;

fn git_pull() -> ExecPolicyAmendment {
    ExecPolicyAmendment::new(vec!["git".to_owned(), "pull".to_owned()])
}

#[test]
fn skip_round_trips() {
    assert_eq!(
        assert_round_trip::<ExecApprovalRequirement>(
            r#"{"type":"skip","bypass_sandbox":false,"proposed_execpolicy_amendment":null}"#
        ),
        ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            proposed_execpolicy_amendment: None,
        }
    );
    let skip = assert_round_trip::<ExecApprovalRequirement>(
        r#"{"type":"skip","bypass_sandbox":true,"proposed_execpolicy_amendment":["git","pull"]}"#,
    );
    assert_eq!(skip.proposed_execpolicy_amendment(), Some(&git_pull()));
}

#[test]
fn needs_approval_round_trips() {
    assert_eq!(
        assert_round_trip::<ExecApprovalRequirement>(
            r#"{"type":"needs_approval","reason":null,"proposed_execpolicy_amendment":null}"#
        ),
        ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_execpolicy_amendment: None,
        }
    );
    assert_eq!(
        assert_round_trip::<ExecApprovalRequirement>(
            r#"{"type":"needs_approval","reason":"`rm -rf` requires approval","proposed_execpolicy_amendment":["git","pull"]}"#
        ),
        ExecApprovalRequirement::NeedsApproval {
            reason: Some("`rm -rf` requires approval".to_owned()),
            proposed_execpolicy_amendment: Some(git_pull()),
        }
    );
}

#[test]
fn forbidden_round_trips() {
    let forbidden = assert_round_trip::<ExecApprovalRequirement>(
        r#"{"type":"forbidden","reason":"approval policy disallowed sandbox approval prompt"}"#,
    );
    assert_eq!(
        forbidden,
        ExecApprovalRequirement::Forbidden {
            reason: "approval policy disallowed sandbox approval prompt".to_owned(),
        }
    );
    assert_eq!(forbidden.proposed_execpolicy_amendment(), None);
}

#[test]
fn optional_fields_may_be_left_out_and_are_written_as_null() {
    assert_reads_as::<ExecApprovalRequirement>(
        r#"{"type":"skip"}"#,
        r#"{"type":"skip","bypass_sandbox":false,"proposed_execpolicy_amendment":null}"#,
    );
    assert_reads_as::<ExecApprovalRequirement>(
        r#"{"type":"needs_approval"}"#,
        r#"{"type":"needs_approval","reason":null,"proposed_execpolicy_amendment":null}"#,
    );
}

#[test]
fn rejects_invalid_inputs() {
    for bad in [
        r#"{"bypass_sandbox":true}"#,
        r#"{"type":"Skip","bypass_sandbox":false}"#,
        r#"{"type":"needs-approval"}"#,
        r#"{"type":"NeedsApproval"}"#,
        r#"{"type":"allow"}"#,
        r#"{"type":"forbidden"}"#,
        r#"{"type":"forbidden","reason":null}"#,
        r#"{"type":"skip","bypass_sandbox":"yes"}"#,
        r#"{"type":"skip","proposed_execpolicy_amendment":"git pull"}"#,
        r#""skip""#,
        "null",
    ] {
        assert_rejected::<ExecApprovalRequirement>(bad);
    }
}
