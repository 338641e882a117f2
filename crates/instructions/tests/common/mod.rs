//! Shared fixtures: the built-in profiles materialised for a fixed cwd, the approval policies and
//! reviewers of the combination matrix, and a deterministic builder (no `$TMPDIR`).
#![allow(dead_code)] // each test binary uses a different subset

use std::path::Path;

use airlock_instructions::ApprovalFeatures;
use airlock_instructions::ApprovalPromptContext;
use airlock_instructions::InstructionsCatalog;
use airlock_instructions::PermissionsInstructions;
use airlock_permissions::BUILT_IN_IDS;
use airlock_permissions::ResolveContext;
use airlock_permissions::built_in_profile;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::GranularApprovalConfig;
use airlock_protocol::PermissionProfile;

/// A cwd that need not exist: every query falls back to lexical paths.
pub const CWD: &str = "/srv/airlock-ws";

/// A granular config with some categories on and some off.
pub const MIXED_GRANULAR: GranularApprovalConfig = GranularApprovalConfig {
    sandbox_approval: true,
    rules: false,
    skill_approval: false,
    request_permissions: true,
    mcp_elicitations: true,
};

/// Every policy value (`on-failure` is only an input alias of `on-request`) with a short name.
pub fn policies() -> Vec<(&'static str, AskForApproval)> {
    vec![
        ("untrusted", AskForApproval::UnlessTrusted),
        ("on_request", AskForApproval::OnRequest),
        ("granular", AskForApproval::Granular(MIXED_GRANULAR)),
        ("never", AskForApproval::Never),
    ]
}

/// Both reviewers with a short name.
pub fn reviewers() -> Vec<(&'static str, ApprovalsReviewer)> {
    vec![
        ("user", ApprovalsReviewer::User),
        ("auto_review", ApprovalsReviewer::AutoReview),
    ]
}

/// Every built-in profile, materialised against `cwd`, with a short name.
pub fn built_in_profiles(cwd: &Path) -> Vec<(String, PermissionProfile)> {
    BUILT_IN_IDS
        .iter()
        .map(|id| {
            let profile = built_in_profile(id).expect("built-in");
            let name = id.trim_start_matches(':').replace('-', "_");
            (
                name,
                materialize_project_roots_with_workspace_roots(&profile, &[cwd.to_path_buf()]),
            )
        })
        .collect()
}

/// The materialised built-in `id` for `cwd`.
pub fn built_in(id: &str, cwd: &Path) -> PermissionProfile {
    materialize_project_roots_with_workspace_roots(
        &built_in_profile(id).expect("built-in"),
        &[cwd.to_path_buf()],
    )
}

/// Deterministic instructions: fixed cwd, no `$TMPDIR`.
pub fn build(
    profile: &PermissionProfile,
    policy: AskForApproval,
    reviewer: ApprovalsReviewer,
    prefixes: &[&[&str]],
    features: ApprovalFeatures,
    catalog: Option<&InstructionsCatalog>,
) -> PermissionsInstructions {
    PermissionsInstructions::from_permission_profile_in(
        profile,
        policy,
        ApprovalPromptContext::new(reviewer, catalog),
        owned_prefixes(prefixes),
        &ResolveContext::with_tmpdir(Path::new(CWD), None),
        features,
    )
}

/// `&[&["git", "pull"]]` → owned prefixes.
pub fn owned_prefixes(prefixes: &[&[&str]]) -> Vec<Vec<String>> {
    prefixes
        .iter()
        .map(|prefix| prefix.iter().map(|token| (*token).to_owned()).collect())
        .collect()
}
