//! Every approval policy × reviewer × built-in profile: a golden snapshot (insta, files under
//! `tests/snapshots/`) of the full text, plus accuracy checks that hold for each combination —
//! e.g. under `never` nothing invites the model to ask. Feature flags and granular switches get
//! their own snapshots and checks.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::path::Path;

use airlock_instructions::ApprovalFeatures;
use airlock_instructions::PermissionsInstructions;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::GranularApprovalConfig;
use airlock_protocol::PermissionProfile;
use common::CWD;
use common::build;
use common::built_in;
use common::built_in_profiles;
use common::policies;
use common::reviewers;

const PREFIXES: &[&[&str]] = &[&["git", "pull"], &["cargo", "test"]];

/// Phrases that invite the model to ask for approval or escalation.
const INVITATIONS: &[&str] = &[
    "you can ask",
    "Call the command with `sandbox_permissions`",
    "may ask",
    "## Suggesting a `prefix_rule`",
    "Call `request_permissions`",
];

fn all_features() -> [(&'static str, ApprovalFeatures); 4] {
    [
        ("", ApprovalFeatures::default()),
        (
            "__exec_perm",
            ApprovalFeatures {
                exec_permission_approvals: true,
                request_permissions_tool: false,
            },
        ),
        (
            "__rp_tool",
            ApprovalFeatures {
                exec_permission_approvals: false,
                request_permissions_tool: true,
            },
        ),
        (
            "__both",
            ApprovalFeatures {
                exec_permission_approvals: true,
                request_permissions_tool: true,
            },
        ),
    ]
}

fn text(
    profile: &PermissionProfile,
    policy: AskForApproval,
    reviewer: ApprovalsReviewer,
    features: ApprovalFeatures,
) -> PermissionsInstructions {
    build(profile, policy, reviewer, PREFIXES, features, None)
}

#[test]
fn golden_text_for_each_policy_reviewer_and_built_in_profile() {
    for (profile_name, profile) in built_in_profiles(Path::new(CWD)) {
        for (policy_name, policy) in policies() {
            for (reviewer_name, reviewer) in reviewers() {
                let instructions = text(&profile, policy, reviewer, ApprovalFeatures::default());
                insta::assert_snapshot!(
                    format!("{policy_name}__{reviewer_name}__{profile_name}"),
                    instructions.render()
                );
            }
        }
    }
}

#[test]
fn golden_text_for_feature_flags() {
    let workspace = built_in(":workspace", Path::new(CWD));
    for (suffix, features) in all_features().into_iter().skip(1) {
        for (policy_name, policy) in [
            ("on_request", AskForApproval::OnRequest),
            ("granular", AskForApproval::Granular(common::MIXED_GRANULAR)),
        ] {
            let instructions = text(&workspace, policy, ApprovalsReviewer::User, features);
            insta::assert_snapshot!(
                format!("features__{policy_name}{suffix}__workspace"),
                instructions.render()
            );
        }
    }
}

#[test]
fn golden_text_for_granular_with_everything_switched_off() {
    let off = AskForApproval::Granular(GranularApprovalConfig::default());
    let instructions = text(
        &built_in(":workspace", Path::new(CWD)),
        off,
        ApprovalsReviewer::AutoReview,
        ApprovalFeatures {
            exec_permission_approvals: true,
            request_permissions_tool: true,
        },
    );
    insta::assert_snapshot!(
        "granular_all_off__auto_review__workspace",
        instructions.render()
    );
}

/// Runs `check` over every profile × policy × reviewer × feature combination.
fn for_every_combination(
    mut check: impl FnMut(
        &str,
        &PermissionProfile,
        AskForApproval,
        ApprovalsReviewer,
        ApprovalFeatures,
        &str,
    ),
) {
    let mut granular_variants = vec![GranularApprovalConfig::default(), common::MIXED_GRANULAR];
    granular_variants.push(GranularApprovalConfig {
        sandbox_approval: false,
        rules: true,
        skill_approval: true,
        request_permissions: false,
        mcp_elicitations: false,
    });
    let mut all_policies: Vec<AskForApproval> =
        policies().into_iter().map(|(_, policy)| policy).collect();
    all_policies.extend(granular_variants.into_iter().map(AskForApproval::Granular));
    for (profile_name, profile) in built_in_profiles(Path::new(CWD)) {
        for policy in &all_policies {
            for (_, reviewer) in reviewers() {
                for (_, features) in all_features() {
                    let body = text(&profile, *policy, reviewer, features).body();
                    check(&profile_name, &profile, *policy, reviewer, features, &body);
                }
            }
        }
    }
}

#[test]
fn never_does_not_invite_asking_in_any_combination() {
    let mut checked = 0;
    for_every_combination(|profile, _, policy, reviewer, features, body| {
        if policy != AskForApproval::Never {
            return;
        }
        checked += 1;
        let context = format!("{profile} {reviewer:?} {features:?}");
        for phrase in INVITATIONS {
            assert!(!body.contains(phrase), "{context}: `{phrase}` in\n{body}");
        }
        assert!(body.contains("do not ask for approval"), "{context}");
        assert!(!body.contains("## Automatic review"), "{context}");
        assert!(!body.contains("automatic reviewer"), "{context}");
        if features.request_permissions_tool {
            assert!(body.contains("cannot grant anything"), "{context}");
        }
    });
    assert_eq!(checked, 4 * 2 * 4);
}

#[test]
fn the_reviewer_named_is_the_configured_one() {
    for_every_combination(|profile, _, policy, reviewer, features, body| {
        let context = format!("{profile} {policy:?} {reviewer:?} {features:?}");
        match reviewer {
            ApprovalsReviewer::User => {
                assert!(!body.contains("automatic reviewer"), "{context}");
                assert!(!body.contains("## Automatic review"), "{context}");
            }
            ApprovalsReviewer::AutoReview => {
                let anyone = match policy {
                    AskForApproval::Never => false,
                    AskForApproval::Granular(config) => {
                        config.sandbox_approval
                            || config.rules
                            || config.skill_approval
                            || config.mcp_elicitations
                            || (config.request_permissions && features.request_permissions_tool)
                    }
                    _ => true,
                };
                assert_eq!(body.contains("## Automatic review"), anyone, "{context}");
                // Only a person can save a proposed rule.
                assert!(!body.contains("## Suggesting a `prefix_rule`"), "{context}");
                assert!(!body.contains("the user for approval"), "{context}");
            }
        }
    });
}

#[test]
fn escalation_guidance_appears_exactly_when_escalation_can_be_asked_for() {
    for_every_combination(|profile_name, profile, policy, _, features, body| {
        let context = format!("{profile_name} {policy:?} {features:?}");
        let sandboxed = !matches!(
            profile,
            PermissionProfile::Disabled | PermissionProfile::External { .. }
        );
        let network_restricted = !profile.network().is_enabled();
        let something_to_escalate = sandboxed || network_restricted;
        let may_escalate = match policy {
            AskForApproval::Never => false,
            AskForApproval::Granular(config) => config.sandbox_approval,
            AskForApproval::UnlessTrusted | AskForApproval::OnRequest => true,
        };
        assert_eq!(
            body.contains("## Running a command outside the sandbox"),
            may_escalate && something_to_escalate,
            "{context}"
        );
        let additional = may_escalate
            && something_to_escalate
            && features.exec_permission_approvals
            && !matches!(policy, AskForApproval::UnlessTrusted);
        assert_eq!(
            body.contains("## Asking for additional permissions"),
            additional,
            "{context}"
        );
        if let AskForApproval::Granular(config) = policy
            && !config.sandbox_approval
            && something_to_escalate
        {
            assert!(body.contains("switched off: do not make them"), "{context}");
        }
        if !something_to_escalate && may_escalate {
            assert!(body.contains("nothing to escalate"), "{context}");
        }
        // Sandbox-specific advice only where there is a filesystem sandbox.
        assert_eq!(
            body.contains("`sandbox_mode` is `danger-full-access`"),
            !sandboxed,
            "{context}"
        );
        if !sandboxed {
            assert!(
                !body.contains("inside the sandbox without asking"),
                "{context}"
            );
            assert!(!body.contains("writable roots"), "{context}");
        }
        if !network_restricted {
            assert!(!body.contains("need the network"), "{context}");
        }
    });
}

#[test]
fn granular_lists_each_category_once_on_the_side_it_is_switched() {
    let config = common::MIXED_GRANULAR;
    for request_permissions_tool in [false, true] {
        let body = text(
            &built_in(":workspace", Path::new(CWD)),
            AskForApproval::Granular(config),
            ApprovalsReviewer::User,
            ApprovalFeatures {
                exec_permission_approvals: false,
                request_permissions_tool,
            },
        )
        .body();
        let (enabled, disabled) = body
            .split_once("These kinds of request are rejected without asking anyone:")
            .unwrap();
        let enabled = enabled
            .split_once("These kinds of request may ask")
            .unwrap()
            .1;
        let disabled = disabled.split("\n\n").next().unwrap();
        for (field, on) in [
            ("sandbox_approval", config.sandbox_approval),
            ("rules", config.rules),
            ("skill_approval", config.skill_approval),
            ("mcp_elicitations", config.mcp_elicitations),
        ] {
            let bullet = format!("- `{field}`:");
            assert_eq!(enabled.contains(&bullet), on, "{field}");
            assert_eq!(disabled.contains(&bullet), !on, "{field}");
        }
        // `request_permissions` is only meaningful when the tool exists.
        assert_eq!(
            enabled.contains("- `request_permissions`:"),
            request_permissions_tool
        );
        assert!(!disabled.contains("- `request_permissions`:"));
    }
}

#[test]
fn approved_prefixes_are_listed_under_every_policy_last_in_the_approval_section() {
    for_every_combination(|profile_name, _, policy, _, _, body| {
        let heading = body
            .find("## Approved command prefixes")
            .unwrap_or_else(|| panic!("{profile_name} {policy:?}: no prefixes in\n{body}"));
        let list = &body[heading..];
        assert!(
            list.contains(":\n- [\"git\", \"pull\"]\n- [\"cargo\", \"test\"]"),
            "{list}"
        );
        for later in [
            "# Approvals",
            "## Automatic review",
            "# The `request_permissions` tool",
        ] {
            assert!(
                !list.contains(later),
                "{profile_name} {policy:?}: {later} after the prefixes"
            );
        }
    });
}
