//! Every top-level type has a JSON Schema (spec 01) that names the canonical forms only.

use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::GranularApprovalConfig;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkApprovalProtocol;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::Rejection;
use airlock_protocol::ReviewDecision;
use airlock_protocol::SandboxMode;
use airlock_protocol::SandboxPermissions;
use schemars::schema_for;

/// The schema as JSON text, after checking that it is a JSON object naming a draft.
fn schema_text(schema: &schemars::Schema) -> String {
    let value = schema.as_value();
    assert!(value.get("$schema").is_some(), "{value}");
    value.to_string()
}

fn assert_mentions(text: &str, names: &[&str]) {
    for name in names {
        assert!(
            text.contains(&format!("\"{name}\"")),
            "schema lacks {name}: {text}"
        );
    }
}

fn assert_omits(text: &str, names: &[&str]) {
    for name in names {
        assert!(
            !text.contains(&format!("\"{name}\"")),
            "schema names alias {name}: {text}"
        );
    }
}

#[test]
fn approval_policy_schema() {
    let text = schema_text(&schema_for!(AskForApproval));
    assert_mentions(
        &text,
        &[
            "untrusted",
            "on-request",
            "granular",
            "never",
            "sandbox_approval",
        ],
    );
    assert_omits(&text, &["on-failure"]);

    let text = schema_text(&schema_for!(GranularApprovalConfig));
    assert_mentions(
        &text,
        &[
            "sandbox_approval",
            "rules",
            "skill_approval",
            "request_permissions",
            "mcp_elicitations",
        ],
    );
}

#[test]
fn reviewer_and_sandbox_schemas() {
    let text = schema_text(&schema_for!(ApprovalsReviewer));
    assert_mentions(&text, &["user", "auto_review"]);
    assert_omits(&text, &["guardian_subagent"]);

    let text = schema_text(&schema_for!(SandboxMode));
    assert_mentions(
        &text,
        &["read-only", "workspace-write", "danger-full-access"],
    );

    let text = schema_text(&schema_for!(SandboxPermissions));
    assert_mentions(
        &text,
        &[
            "use_default",
            "require_escalated",
            "with_additional_permissions",
        ],
    );
}

#[test]
fn amendment_and_network_schemas() {
    let text = schema_text(&schema_for!(ExecPolicyAmendment));
    assert_mentions(&text, &["array"]);

    let text = schema_text(&schema_for!(NetworkPolicyAmendment));
    assert_mentions(&text, &["host", "action", "allow", "deny"]);

    let text = schema_text(&schema_for!(NetworkPolicyRuleAction));
    assert_mentions(&text, &["allow", "deny"]);

    let text = schema_text(&schema_for!(NetworkApprovalContext));
    assert_mentions(&text, &["host", "protocol", "socks5_tcp"]);

    let text = schema_text(&schema_for!(NetworkApprovalProtocol));
    assert_mentions(&text, &["http", "https", "socks5_tcp", "socks5_udp"]);
    assert_omits(&text, &["https_connect", "http-connect"]);
}

#[test]
fn decision_and_requirement_schemas() {
    let text = schema_text(&schema_for!(ReviewDecision));
    assert_mentions(
        &text,
        &[
            "approved",
            "approved_execpolicy_amendment",
            "proposed_execpolicy_amendment",
            "approved_for_session",
            "approved_mcp_policy_amendment",
            "network_policy_amendment",
            "denied",
            "rejection",
            "timed_out",
            "abort",
        ],
    );

    schema_text(&schema_for!(Rejection));

    let text = schema_text(&schema_for!(ExecApprovalRequirement));
    assert_mentions(
        &text,
        &[
            "type",
            "skip",
            "needs_approval",
            "forbidden",
            "bypass_sandbox",
            "reason",
        ],
    );
}
