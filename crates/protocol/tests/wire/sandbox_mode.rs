//! `SandboxMode` (reference `protocol.md` §3).

use airlock_protocol::SandboxMode;
use pretty_assertions::assert_eq;

use crate::support::assert_rejected;
use crate::support::assert_round_trip;

#[test]
fn variants_round_trip() {
    assert_eq!(
        assert_round_trip::<SandboxMode>(r#""read-only""#),
        SandboxMode::ReadOnly
    );
    assert_eq!(
        assert_round_trip::<SandboxMode>(r#""workspace-write""#),
        SandboxMode::WorkspaceWrite
    );
    assert_eq!(
        assert_round_trip::<SandboxMode>(r#""danger-full-access""#),
        SandboxMode::DangerFullAccess
    );
}

#[test]
fn default_is_read_only() {
    assert_eq!(SandboxMode::default(), SandboxMode::ReadOnly);
}

#[test]
fn rejects_invalid_modes() {
    for bad in [
        r#""read_only""#,
        r#""workspace_write""#,
        r#""full-access""#,
        r#""ReadOnly""#,
        "null",
        r#"{"type":"read-only"}"#,
    ] {
        assert_rejected::<SandboxMode>(bad);
    }
}
