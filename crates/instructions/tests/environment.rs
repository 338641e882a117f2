//! Spec 08 §Which environment: the primary environment's profile, materialised against its own
//! workspace roots, with its own cwd; otherwise the turn-level profile and cwd; non-primary
//! environments never leak into the text.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::path::Path;
use std::path::PathBuf;

use airlock_instructions::ApprovalFeatures;
use airlock_instructions::EnvironmentPermissions;
use airlock_instructions::InstructionsSource;
use airlock_instructions::TurnPermissions;
use airlock_instructions::select_instructions_target;
use airlock_permissions::built_in_profile;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use pretty_assertions::assert_eq;

fn environment(
    id: &str,
    primary: bool,
    cwd: &str,
    roots: &[&str],
    profile: &str,
) -> EnvironmentPermissions {
    EnvironmentPermissions {
        id: id.to_owned(),
        primary,
        cwd: PathBuf::from(cwd),
        workspace_roots: roots.iter().map(PathBuf::from).collect(),
        profile: built_in_profile(profile).unwrap(),
    }
}

fn turn(cwd: &str, profile: &str) -> TurnPermissions {
    TurnPermissions {
        profile: built_in_profile(profile).unwrap(),
        cwd: PathBuf::from(cwd),
        workspace_roots: Vec::new(),
    }
}

fn body_for(target: &airlock_instructions::InstructionsTarget) -> String {
    airlock_instructions::PermissionsInstructions::from_permission_profile_in(
        &target.profile,
        AskForApproval::OnRequest,
        airlock_instructions::ApprovalPromptContext::new(ApprovalsReviewer::User, None),
        Vec::new(),
        &airlock_permissions::ResolveContext::with_tmpdir(&target.cwd, None),
        ApprovalFeatures::default(),
    )
    .body()
}

#[test]
fn the_primary_environment_is_described_with_its_own_roots_and_cwd() {
    let environments = [
        environment(
            "remote",
            false,
            "/remote/ws",
            &["/remote/ws"],
            ":danger-full-access",
        ),
        environment("local", true, "/srv/a", &["/srv/a", "/srv/b"], ":workspace"),
    ];
    let target = select_instructions_target(&environments, &turn("/turn", ":read-only"));
    assert_eq!(
        target.source,
        InstructionsSource::PrimaryEnvironment("local".to_owned())
    );
    assert_eq!(target.cwd, Path::new("/srv/a"));
    let body = body_for(&target);
    assert!(
        body.contains("The writable roots are `/srv/a`, `/srv/b`, `/tmp`."),
        "{body}"
    );
    // Nothing of the non-primary environment or of the turn.
    assert!(!body.contains("/remote") && !body.contains("/turn"));
    assert!(!body.contains("danger-full-access"));
}

#[test]
fn the_first_primary_wins_when_several_are_marked() {
    let environments = [
        environment("one", true, "/srv/one", &["/srv/one"], ":read-only"),
        environment("two", true, "/srv/two", &["/srv/two"], ":workspace"),
    ];
    let target = select_instructions_target(&environments, &turn("/turn", ":workspace"));
    assert_eq!(
        target.source,
        InstructionsSource::PrimaryEnvironment("one".to_owned())
    );
    assert!(body_for(&target).contains("`sandbox_mode` is `read-only`"));
}

#[test]
fn without_a_primary_environment_the_turn_profile_and_cwd_are_used() {
    let environments = [environment(
        "remote",
        false,
        "/remote/ws",
        &["/remote/ws"],
        ":danger-full-access",
    )];
    let target = select_instructions_target(&environments, &turn("/srv/turn", ":workspace"));
    assert_eq!(target.source, InstructionsSource::Turn);
    assert_eq!(target.cwd, Path::new("/srv/turn"));
    let body = body_for(&target);
    assert!(
        body.contains("The writable roots are `/srv/turn`, `/tmp`."),
        "{body}"
    );
    assert!(!body.contains("/remote"));

    let explicit_roots = TurnPermissions {
        workspace_roots: vec![PathBuf::from("/srv/turn"), PathBuf::from("/srv/lib")],
        ..turn("/srv/turn", ":workspace")
    };
    let body = body_for(&select_instructions_target(&[], &explicit_roots));
    assert!(
        body.contains("The writable roots are `/srv/lib`, `/srv/turn`, `/tmp`."),
        "{body}"
    );
}
