//! Pre-checks and `assess_patch_safety` against real profiles (spec 11; reference §A6).

use std::path::Path;
use std::path::PathBuf;

use airlock_core::apply_patch::OUTSIDE_PROJECT_REJECT_REASON;
use airlock_core::apply_patch::PatchPolicy;
use airlock_core::apply_patch::READ_ONLY_REJECT_REASON;
use airlock_core::apply_patch::assess_patch_safety;
use airlock_core::apply_patch::named_paths;
use airlock_core::apply_patch::refusal_before_reading;
use airlock_patch::parse_patch;
use airlock_permissions::built_in_profile;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::GranularApprovalConfig;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::PermissionProfile;
use pretty_assertions::assert_eq;

const WS: &str = "/srv/ws";

fn profile(id: &str) -> PermissionProfile {
    let symbolic = built_in_profile(id).unwrap();
    materialize_project_roots_with_workspace_roots(&symbolic, &[PathBuf::from(WS)])
}

fn assess(
    id: &str,
    policy: AskForApproval,
    paths: &[&str],
    platform: bool,
) -> (ExecApprovalRequirement, Vec<PathBuf>) {
    let permissions = profile(id);
    let fs_policy = file_system_sandbox_policy(&permissions);
    let roots = [PathBuf::from(WS)];
    let patch_policy = PatchPolicy {
        permissions: &permissions,
        fs_policy: &fs_policy,
        policy_cwd: Path::new(WS),
        workspace_roots: &roots,
    };
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let assessment = assess_patch_safety(&paths, policy, &patch_policy, platform);
    (assessment.requirement, assessment.extra_writable_dirs)
}

fn skip() -> ExecApprovalRequirement {
    ExecApprovalRequirement::Skip {
        bypass_sandbox: false,
        proposed_execpolicy_amendment: None,
    }
}

fn ask() -> ExecApprovalRequirement {
    ExecApprovalRequirement::NeedsApproval {
        reason: None,
        proposed_execpolicy_amendment: None,
    }
}

fn forbidden(reason: &str) -> ExecApprovalRequirement {
    ExecApprovalRequirement::Forbidden {
        reason: format!("patch rejected: {reason}"),
    }
}

#[test]
fn workspace_writes_skip_approval_and_stay_sandboxed() {
    let inside = ["/srv/ws/src/lib.rs", "/srv/ws/new/file"];
    assert_eq!(
        assess(":workspace", AskForApproval::OnRequest, &inside, true),
        (skip(), vec![])
    );
    assert_eq!(
        assess(":workspace", AskForApproval::Never, &inside, true),
        (skip(), vec![])
    );
}

#[test]
fn untrusted_always_asks() {
    assert_eq!(
        assess(
            ":workspace",
            AskForApproval::UnlessTrusted,
            &["/srv/ws/a"],
            true
        ),
        (ask(), vec![])
    );
}

#[test]
fn outside_writes_ask_or_are_rejected_with_the_reference_reason() {
    // `/etc` exists everywhere: the extra writable directory is the targets' parent.
    let outside = ["/srv/ws/a", "/etc/airlock-x.md", "/etc/airlock-y.md"];
    let dirs = vec![PathBuf::from("/etc")];
    assert_eq!(
        assess(":workspace", AskForApproval::OnRequest, &outside, true),
        (ask(), dirs.clone())
    );
    assert_eq!(
        assess(":workspace", AskForApproval::Never, &outside, true),
        (forbidden(OUTSIDE_PROJECT_REJECT_REASON), dirs.clone())
    );
    let no_sandbox_prompts = AskForApproval::Granular(GranularApprovalConfig {
        sandbox_approval: false,
        ..GranularApprovalConfig::default()
    });
    assert_eq!(
        assess(":workspace", no_sandbox_prompts, &outside, true),
        (forbidden(OUTSIDE_PROJECT_REJECT_REASON), dirs)
    );
}

#[test]
fn read_only_profile_uses_the_read_only_reason() {
    assert_eq!(
        assess(
            ":read-only",
            AskForApproval::Never,
            &["/etc/airlock-a"],
            true
        ),
        (
            forbidden(READ_ONLY_REJECT_REASON),
            vec![PathBuf::from("/etc")]
        )
    );
}

#[test]
fn no_platform_sandbox_asks_or_rejects_even_inside() {
    assert_eq!(
        assess(
            ":workspace",
            AskForApproval::OnRequest,
            &["/srv/ws/a"],
            false
        ),
        (ask(), vec![])
    );
    assert_eq!(
        assess(":workspace", AskForApproval::Never, &["/srv/ws/a"], false),
        (forbidden(OUTSIDE_PROJECT_REJECT_REASON), vec![])
    );
    // A profile that needs no sandbox is auto-approved anyway.
    assert_eq!(
        assess(
            ":danger-full-access",
            AskForApproval::Never,
            &["/etc/x"],
            false
        ),
        (skip(), vec![])
    );
}

#[test]
fn protected_metadata_under_the_workspace_is_not_writable_by_the_lexical_check() {
    assert_eq!(
        assess(
            ":workspace",
            AskForApproval::OnRequest,
            &["/srv/ws/.codex/config.toml"],
            true
        )
        .0,
        ask()
    );
}

fn refusal(permissions: &PermissionProfile, patch: &str, cwd: &str) -> Option<String> {
    let fs_policy = file_system_sandbox_policy(permissions);
    let roots = [PathBuf::from(WS)];
    let policy = PatchPolicy {
        permissions,
        fs_policy: &fs_policy,
        policy_cwd: Path::new(WS),
        workspace_roots: &roots,
    };
    let parsed = parse_patch(patch).unwrap();
    refusal_before_reading(&named_paths(&parsed, Path::new(cwd)), &policy)
}

fn add(path: &str) -> String {
    format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch")
}

#[test]
fn protected_metadata_is_refused_before_reading() {
    let workspace = profile(":workspace");
    for (path, name) in [
        (".git/hooks/pre-commit", ".git"),
        ("vendor/lib/.git/config", ".git"),
        (".codex/config.toml", ".codex"),
        (".agents/x", ".agents"),
        (".aws/credentials", ".aws"),
        (".airlock/rules/allow.rules", ".airlock"),
        ("sub/../.airlock/config.toml", ".airlock"),
        (".GIT/config", ".git"),
        (".Codex/config.toml", ".codex"),
    ] {
        let reason =
            refusal(&workspace, &add(path), WS).unwrap_or_else(|| panic!("{path} not refused"));
        assert!(
            reason.starts_with(&format!(
                "refusing to write {path}: '{name}' is protected metadata"
            )),
            "{reason}"
        );
    }
    // A move destination counts too.
    let moved =
        "*** Begin Patch\n*** Update File: a\n*** Move to: .git/config\n-a\n+b\n*** End Patch";
    assert!(refusal(&workspace, moved, WS).is_some());
    // Names that only look alike, and `.codex` deeper than the top of a root, are ordinary.
    for path in [
        "src/.gitignore",
        "docs/.codex/notes.md",
        ".github/workflows/ci.yml",
    ] {
        assert_eq!(refusal(&workspace, &add(path), WS), None, "{path}");
    }
}

#[test]
fn deny_read_paths_are_refused_before_reading() {
    let PermissionProfile::Managed {
        file_system:
            ManagedFileSystemPermissions::Restricted {
                mut entries,
                glob_scan_max_depth,
            },
        network,
    } = profile(":workspace")
    else {
        panic!(":workspace is restricted");
    };
    entries.push(FileSystemSandboxEntry::path(
        "/srv/ws/secrets",
        FileSystemAccessMode::Deny,
    ));
    entries.push(FileSystemSandboxEntry {
        path: FileSystemPath::GlobPattern {
            pattern: "/srv/ws/**/*.pem".to_owned(),
        },
        access: FileSystemAccessMode::Deny,
        missing_path_behavior: None,
    });
    let secretive = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries,
            glob_scan_max_depth,
        },
        network,
    };
    let update = "*** Begin Patch\n*** Update File: secrets/token\n-a\n+b\n*** End Patch";
    assert_eq!(
        refusal(&secretive, update, WS).as_deref(),
        Some(
            "refusing secrets/token: the permission profile denies reading it, so apply_patch \
             neither reads nor shows it"
        )
    );
    assert!(refusal(&secretive, &add("keys/site.pem"), WS).is_some());
    assert_eq!(refusal(&secretive, &add("src/main.rs"), WS), None);
}

#[test]
fn a_target_in_a_missing_folder_grants_its_nearest_existing_ancestor() {
    let Some(root) = scratch_outside_workspace() else {
        return;
    };
    let target = root.path().join("new/deeper/file.txt");
    let (requirement, dirs) = assess(
        ":workspace",
        AskForApproval::OnRequest,
        &[target.to_str().unwrap()],
        true,
    );
    assert_eq!(
        (requirement, dirs),
        (ask(), vec![root.path().to_path_buf()])
    );
}

/// A fresh directory that `:workspace` at [`WS`] does not make writable, asked of the
/// permissions crate rather than assumed: a checkout under `/tmp` puts the cargo target inside
/// a writable root (issue 17). Candidates: `$AIRLOCK_TEST_OUTSIDE`, the target's temporary
/// directory, `$HOME/.cache`, `/var/tmp`; `None` with a loud message when none qualifies.
fn scratch_outside_workspace() -> Option<tempfile::TempDir> {
    let permissions = profile(":workspace");
    let fs_policy = file_system_sandbox_policy(&permissions);
    let ctx = airlock_permissions::ResolveContext::new(Path::new(WS));
    let mut candidates: Vec<PathBuf> = std::env::var_os("AIRLOCK_TEST_OUTSIDE")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.push(PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    if let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        candidates.push(PathBuf::from(home).join(".cache"));
    }
    candidates.push(PathBuf::from("/var/tmp"));
    for parent in &candidates {
        let _ = std::fs::create_dir_all(parent);
        let probe = parent.join("airlock-safety-probe");
        if !parent.is_dir() || airlock_permissions::is_writable_under(&fs_policy, &probe, &ctx) {
            continue;
        }
        if let Ok(dir) = tempfile::Builder::new()
            .prefix("airlock-safety-")
            .tempdir_in(parent)
        {
            return Some(dir);
        }
    }
    eprintln!(
        "\n*** SKIPPED: no directory outside :workspace's writable roots among {candidates:?}; \
         set AIRLOCK_TEST_OUTSIDE to one ***\n"
    );
    None
}
