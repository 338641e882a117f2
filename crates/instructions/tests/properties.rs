//! Property tests over random profiles, policies, reviewers, features and prefix sets:
//! - the text is well formed (markers, `\n`-terminated body, no triple newlines);
//! - the writable roots and denied reads it states are exactly the query results;
//! - `never` never invites asking;
//! - diffs: own snapshot → nothing; prefixes added → exactly the additions; any removal → the
//!   full text; the `Current` hash ignores prefixes; snapshots survive a JSON round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use airlock_instructions::ApprovalFeatures;
use airlock_instructions::ApprovedCommandPrefixSaved;
use airlock_instructions::PermissionsSnapshot;
use airlock_instructions::PermissionsState;
use airlock_instructions::PermissionsUpdate;
use airlock_instructions::PreviousSectionState;
use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ResolveContext;
use airlock_permissions::file_system_sandbox_policy;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::GranularApprovalConfig;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use common::CWD;
use proptest::prelude::*;

fn access() -> impl Strategy<Value = FileSystemAccessMode> {
    prop_oneof![
        Just(FileSystemAccessMode::Read),
        Just(FileSystemAccessMode::Write),
        Just(FileSystemAccessMode::Deny),
    ]
}

fn entry() -> impl Strategy<Value = FileSystemSandboxEntry> {
    let special = prop_oneof![
        Just(FileSystemSpecialPath::Root),
        Just(FileSystemSpecialPath::Minimal),
        Just(FileSystemSpecialPath::SlashTmp),
        Just(FileSystemSpecialPath::Tmpdir),
        Just(FileSystemSpecialPath::ProjectRoots { subpath: None }),
        prop_oneof![Just("src"), Just(".git"), Just("docs/a b"), Just("..")].prop_map(|sub| {
            FileSystemSpecialPath::ProjectRoots {
                subpath: Some(PathBuf::from(sub)),
            }
        }),
    ];
    let path = prop_oneof![
        Just("/srv/airlock-ws/out"),
        Just("/srv/other"),
        Just("/opt"),
        Just("relative/dir"),
        Just("/"),
    ];
    prop_oneof![
        (special, access())
            .prop_map(|(value, access)| FileSystemSandboxEntry::special(value, access)),
        (path, access()).prop_map(|(path, access)| FileSystemSandboxEntry::path(path, access)),
        prop_oneof![
            Just("**/*.env"),
            Just("/srv/airlock-ws/secrets/**"),
            Just("*.pem")
        ]
        .prop_map(FileSystemSandboxEntry::deny_glob),
    ]
}

fn network() -> impl Strategy<Value = NetworkSandboxPolicy> {
    prop_oneof![
        Just(NetworkSandboxPolicy::Restricted),
        Just(NetworkSandboxPolicy::Enabled)
    ]
}

fn profile() -> impl Strategy<Value = PermissionProfile> {
    prop_oneof![
        4 => (prop::collection::vec(entry(), 0..8), network()).prop_map(|(entries, network)| {
            PermissionProfile::Managed {
                file_system: ManagedFileSystemPermissions::Restricted {
                    entries,
                    glob_scan_max_depth: None,
                },
                network,
            }
        }),
        1 => network().prop_map(|network| PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Unrestricted,
            network,
        }),
        1 => Just(PermissionProfile::Disabled),
        1 => network().prop_map(|network| PermissionProfile::External { network }),
    ]
}

fn policy() -> impl Strategy<Value = AskForApproval> {
    prop_oneof![
        Just(AskForApproval::UnlessTrusted),
        Just(AskForApproval::OnRequest),
        Just(AskForApproval::Never),
        any::<[bool; 5]>().prop_map(|flags| AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval: flags[0],
            rules: flags[1],
            skill_approval: flags[2],
            request_permissions: flags[3],
            mcp_elicitations: flags[4],
        })),
    ]
}

fn reviewer() -> impl Strategy<Value = ApprovalsReviewer> {
    prop_oneof![
        Just(ApprovalsReviewer::User),
        Just(ApprovalsReviewer::AutoReview)
    ]
}

fn features() -> impl Strategy<Value = ApprovalFeatures> {
    any::<(bool, bool)>().prop_map(|(exec, tool)| ApprovalFeatures {
        exec_permission_approvals: exec,
        request_permissions_tool: tool,
    })
}

fn prefixes() -> impl Strategy<Value = BTreeSet<Vec<String>>> {
    let token = prop_oneof![
        Just("git".to_owned()),
        Just("cargo".to_owned()),
        Just("test".to_owned()),
        Just("pull".to_owned()),
        Just("say \"hi\"".to_owned()),
        "[a-z]{1,6}",
    ];
    prop::collection::btree_set(prop::collection::vec(token, 1..4), 0..6)
}

fn instructions(
    profile: &PermissionProfile,
    policy: AskForApproval,
    reviewer: ApprovalsReviewer,
    features: ApprovalFeatures,
    prefixes: &BTreeSet<Vec<String>>,
) -> airlock_instructions::PermissionsInstructions {
    airlock_instructions::PermissionsInstructions::from_permission_profile_in(
        profile,
        policy,
        airlock_instructions::ApprovalPromptContext::new(reviewer, None),
        prefixes.iter().cloned(),
        &ResolveContext::with_tmpdir(Path::new(CWD), Some(PathBuf::from("/var/tmp-x"))),
        features,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn text_is_well_formed_and_states_the_enforced_roots(
        profile in profile(), policy in policy(), reviewer in reviewer(),
        features in features(), prefixes in prefixes(),
    ) {
        let built = instructions(&profile, policy, reviewer, features, &prefixes);
        let body = built.body();
        prop_assert!(body.ends_with('\n') && !body.ends_with("\n\n"));
        prop_assert!(!body.contains("\n\n\n"));
        prop_assert_eq!(built.render(), format!("<permissions instructions>\n{body}</permissions instructions>"));

        let ctx = ResolveContext::with_tmpdir(Path::new(CWD), Some(PathBuf::from("/var/tmp-x")));
        let fs = file_system_sandbox_policy(&profile);
        let roots: BTreeSet<PathBuf> = if fs.has_full_disk_write_access() {
            BTreeSet::new()
        } else {
            fs.get_writable_roots(&ctx).into_iter().map(|root| root.root).collect()
        };
        let projection = built.projection();
        let stated: BTreeSet<PathBuf> =
            projection.writable_roots.iter().map(|root| root.root.clone()).collect();
        prop_assert_eq!(&stated, &roots);
        for root in &roots {
            let quoted = format!("`{}`", root.display());
            prop_assert!(body.contains(&quoted), "root {} missing", root.display());
        }
        let denied: BTreeSet<PathBuf> = fs.get_unreadable_roots(&ctx).into_iter().collect();
        for path in &denied {
            let bullet = format!("- path `{}`", path.display());
            prop_assert!(body.contains(&bullet));
        }
        for glob in fs.get_unreadable_globs_with_cwd(Path::new(CWD)) {
            let bullet = format!("- glob `{glob}`");
            prop_assert!(body.contains(&bullet));
        }
        let bullets = body.lines().filter(|line| line.starts_with("- path `") || line.starts_with("- glob `")).count();
        prop_assert_eq!(bullets, denied.len() + fs.get_unreadable_globs_with_cwd(Path::new(CWD)).len());
        prop_assert_eq!(body.contains("## Denied filesystem reads"), bullets > 0);
    }

    #[test]
    fn never_never_invites_asking(
        profile in profile(), reviewer in reviewer(), features in features(), prefixes in prefixes(),
    ) {
        let body = instructions(&profile, AskForApproval::Never, reviewer, features, &prefixes).body();
        for phrase in ["you can ask", "may ask", "Call the command with", "prefix_rule", "Call `request_permissions`", "automatic reviewer"] {
            prop_assert!(!body.contains(phrase), "`{}` under never", phrase);
        }
    }

    #[test]
    fn diffs_follow_the_snapshot_rules(
        profile in profile(), policy in policy(), reviewer in reviewer(), features in features(),
        before in prefixes(), after in prefixes(),
    ) {
        let previous = PermissionsState::new(instructions(&profile, policy, reviewer, features, &before));
        let current = PermissionsState::new(instructions(&profile, policy, reviewer, features, &after));
        prop_assert_eq!(current.render_diff(PreviousSectionState::Known(current.snapshot())), None);
        let update = current.render_diff(PreviousSectionState::Known(previous.snapshot()));
        if before == after {
            prop_assert_eq!(update, None);
        } else if before.is_subset(&after) {
            let added: Vec<Vec<String>> = after.difference(&before).cloned().collect();
            let expected = ApprovedCommandPrefixSaved::new(added).unwrap();
            prop_assert_eq!(update, Some(PermissionsUpdate::PrefixesSaved(expected)));
        } else {
            prop_assert_eq!(update.map(|update| update.render()), Some(current.instructions().render()));
        }
        // JSON round trip of the snapshot keeps the decision.
        let json = serde_json::to_string(previous.snapshot()).unwrap();
        // No field is written as JSON `null` (absent fields are left out); a
        // prefix may itself be the word "null", so look at values, not text.
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        prop_assert!(!contains_null(&value), "null value in {}", json);
        let read = PermissionsSnapshot::from_json(&json).unwrap();
        prop_assert_eq!(&read, previous.snapshot());
    }
}

/// Whether any value inside `value` is JSON `null`.
fn contains_null(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null => true,
        serde_json::Value::Array(items) => items.iter().any(contains_null),
        serde_json::Value::Object(fields) => fields.values().any(contains_null),
        _ => false,
    }
}
