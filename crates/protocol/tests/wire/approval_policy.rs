//! `AskForApproval` and `GranularApprovalConfig` (reference `protocol.md` §1, spec 01).

use airlock_protocol::AskForApproval;
use airlock_protocol::GranularApprovalConfig;
use pretty_assertions::assert_eq;

use crate::support::assert_reads_as;
use crate::support::assert_rejected;
use crate::support::assert_round_trip;

const GRANULAR: &str = r#"{"granular":{"sandbox_approval":true,"rules":false,"skill_approval":false,"request_permissions":true,"mcp_elicitations":false}}"#;

#[test]
fn simple_variants_round_trip() {
    assert_eq!(
        assert_round_trip::<AskForApproval>(r#""untrusted""#),
        AskForApproval::UnlessTrusted
    );
    assert_eq!(
        assert_round_trip::<AskForApproval>(r#""on-request""#),
        AskForApproval::OnRequest
    );
    assert_eq!(
        assert_round_trip::<AskForApproval>(r#""never""#),
        AskForApproval::Never
    );
}

#[test]
fn granular_round_trips() {
    let policy = assert_round_trip::<AskForApproval>(GRANULAR);
    assert_eq!(
        policy,
        AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval: true,
            rules: false,
            skill_approval: false,
            request_permissions: true,
            mcp_elicitations: false,
        })
    );
}

#[test]
fn granular_config_round_trips_on_its_own() {
    let config = assert_round_trip::<GranularApprovalConfig>(
        r#"{"sandbox_approval":false,"rules":true,"skill_approval":true,"request_permissions":false,"mcp_elicitations":true}"#,
    );
    assert!(!config.allows_sandbox_approval());
    assert!(config.allows_rules_approval());
    assert!(config.allows_skill_approval());
    assert!(!config.allows_request_permissions());
    assert!(config.allows_mcp_elicitations());
}

#[test]
fn granular_optional_fields_default_to_false_and_are_written() {
    assert_reads_as::<AskForApproval>(
        r#"{"granular":{"sandbox_approval":true,"rules":true,"mcp_elicitations":true}}"#,
        r#"{"granular":{"sandbox_approval":true,"rules":true,"skill_approval":false,"request_permissions":false,"mcp_elicitations":true}}"#,
    );
}

#[test]
fn granular_ignores_unknown_fields() {
    assert_reads_as::<GranularApprovalConfig>(
        r#"{"sandbox_approval":true,"rules":true,"mcp_elicitations":true,"future_switch":true}"#,
        r#"{"sandbox_approval":true,"rules":true,"skill_approval":false,"request_permissions":false,"mcp_elicitations":true}"#,
    );
}

#[test]
fn on_failure_is_an_input_alias_of_on_request() {
    assert_reads_as::<AskForApproval>(r#""on-failure""#, r#""on-request""#);
}

#[test]
fn default_is_on_request() {
    assert_eq!(AskForApproval::default(), AskForApproval::OnRequest);
}

#[test]
fn rejects_invalid_policies() {
    for bad in [
        r#""unless-trusted""#,
        r#""on_request""#,
        r#""OnRequest""#,
        r#""on-failure ""#,
        r#""always""#,
        r#""""#,
        "null",
        "true",
        "3",
        "[]",
        r#"{"granular":{}}"#,
        r#"{"granular":{"sandbox_approval":true,"rules":true}}"#,
        r#"{"granular":{"sandbox_approval":"yes","rules":true,"mcp_elicitations":true}}"#,
        r#"{"granular":true}"#,
        r#"{"sometimes":{}}"#,
    ] {
        assert_rejected::<AskForApproval>(bad);
    }
}

#[test]
fn unknown_policy_error_names_the_canonical_values() {
    let message = assert_rejected::<AskForApproval>(r#""always""#);
    assert!(message.contains("on-request"), "{message}");
    assert!(message.contains("untrusted"), "{message}");
}
