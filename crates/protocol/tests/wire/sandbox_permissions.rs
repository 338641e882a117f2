//! `SandboxPermissions` (reference `protocol.md` §7).

use airlock_protocol::SandboxPermissions;
use pretty_assertions::assert_eq;

use crate::support::assert_rejected;
use crate::support::assert_round_trip;

#[test]
fn variants_round_trip() {
    assert_eq!(
        assert_round_trip::<SandboxPermissions>(r#""use_default""#),
        SandboxPermissions::UseDefault
    );
    assert_eq!(
        assert_round_trip::<SandboxPermissions>(r#""require_escalated""#),
        SandboxPermissions::RequireEscalated
    );
    assert_eq!(
        assert_round_trip::<SandboxPermissions>(r#""with_additional_permissions""#),
        SandboxPermissions::WithAdditionalPermissions
    );
}

#[test]
fn default_is_use_default() {
    assert_eq!(
        SandboxPermissions::default(),
        SandboxPermissions::UseDefault
    );
}

#[test]
fn helpers_follow_the_reference() {
    let cases = [
        (SandboxPermissions::UseDefault, false, false, false),
        (SandboxPermissions::RequireEscalated, true, true, false),
        (
            SandboxPermissions::WithAdditionalPermissions,
            false,
            true,
            true,
        ),
    ];
    for (permissions, escalated, overrides, additional) in cases {
        assert_eq!(
            permissions.requires_escalated_permissions(),
            escalated,
            "{permissions:?}"
        );
        assert_eq!(
            permissions.requests_sandbox_override(),
            overrides,
            "{permissions:?}"
        );
        assert_eq!(
            permissions.uses_additional_permissions(),
            additional,
            "{permissions:?}"
        );
    }
}

#[test]
fn rejects_invalid_values() {
    for bad in [
        r#""escalated""#,
        r#""require-escalated""#,
        r#""useDefault""#,
        r#""""#,
        "null",
        "1",
    ] {
        assert_rejected::<SandboxPermissions>(bad);
    }
}
