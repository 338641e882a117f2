//! `ApprovalsReviewer` (reference `protocol.md` §2).

use airlock_protocol::ApprovalsReviewer;
use pretty_assertions::assert_eq;

use crate::support::assert_reads_as;
use crate::support::assert_rejected;
use crate::support::assert_round_trip;

#[test]
fn variants_round_trip() {
    assert_eq!(
        assert_round_trip::<ApprovalsReviewer>(r#""user""#),
        ApprovalsReviewer::User
    );
    assert_eq!(
        assert_round_trip::<ApprovalsReviewer>(r#""auto_review""#),
        ApprovalsReviewer::AutoReview
    );
}

#[test]
fn guardian_subagent_is_an_input_alias_of_auto_review() {
    assert_reads_as::<ApprovalsReviewer>(r#""guardian_subagent""#, r#""auto_review""#);
}

#[test]
fn default_is_user() {
    assert_eq!(ApprovalsReviewer::default(), ApprovalsReviewer::User);
}

#[test]
fn rejects_invalid_reviewers() {
    for bad in [
        r#""auto-review""#,
        r#""autoReview""#,
        r#""guardian""#,
        r#""User""#,
        "null",
        "{}",
    ] {
        assert_rejected::<ApprovalsReviewer>(bad);
    }
}
