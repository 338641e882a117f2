//! One source of truth (issue "Must show", spec README invariant 13): the writable roots, the
//! read-only carve-outs and the denied reads *in the text* equal what enforcement uses for the same
//! profile and cwd — both the `airlock-permissions` queries every backend starts from and the
//! Linux backend's resolved mount inputs (`airlock_linux_sandbox::resolve::resolve_mount_inputs`).
//! The text is parsed back, so a section written separately from the profile would fail here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use airlock_execpolicy::Policy;
use airlock_instructions::ApprovalFeatures;
use airlock_instructions::ApprovalPromptContext;
use airlock_instructions::PermissionsInstructions;
use airlock_linux_sandbox::resolve::resolve_mount_inputs_in;
use airlock_permissions::BUILT_IN_IDS;
use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ResolveContext;
use airlock_permissions::file_system_sandbox_policy;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use pretty_assertions::assert_eq;

/// What the text says, parsed back.
#[derive(Debug, Default)]
struct Described {
    roots: BTreeSet<PathBuf>,
    protected_names: Vec<String>,
    read_only: BTreeSet<PathBuf>,
    denied_paths: BTreeSet<PathBuf>,
    denied_globs: BTreeSet<String>,
}

/// The backticked items of `line`.
fn backticked(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn parse(body: &str) -> Described {
    let mut described = Described::default();
    for line in body.lines() {
        if line.starts_with("The writable root is ") || line.starts_with("The writable roots are ")
        {
            described.roots = backticked(line).into_iter().map(PathBuf::from).collect();
        } else if line.starts_with("Directly under every writable root, ") {
            described.protected_names = backticked(line);
        } else if line.starts_with("These paths inside the writable roots stay read-only: ") {
            described
                .read_only
                .extend(backticked(line).into_iter().map(PathBuf::from));
        } else if line.starts_with("In the home directory ") {
            // Every existing dot entry of the home, except the ones named: read back from
            // the directory itself, not from the permissions crate.
            let items = backticked(line);
            let home = PathBuf::from(&items[0]);
            let except = &items[1..];
            for entry in std::fs::read_dir(&home).unwrap() {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && !except.contains(&name) {
                    described.read_only.insert(home.join(name));
                }
            }
        } else if line.starts_with("These startup names in the home directory ") {
            let items = backticked(line);
            let home = PathBuf::from(&items[0]);
            described
                .read_only
                .extend(items[1..].iter().map(|name| home.join(name)));
        } else if let Some(rest) = line.strip_prefix("- path ") {
            described
                .denied_paths
                .insert(PathBuf::from(rest.trim_matches('`')));
        } else if let Some(rest) = line.strip_prefix("- glob ") {
            described
                .denied_globs
                .insert(rest.trim_matches('`').to_owned());
        }
    }
    described
}

fn canonical(path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok()
}

/// Checks the text for `profile` in `cwd` against the queries and the Linux mount inputs.
fn assert_text_matches_enforcement(
    profile: &PermissionProfile,
    cwd: &Path,
    expected_globs: &[PathBuf],
) {
    let instructions = PermissionsInstructions::from_permission_profile(
        profile,
        AskForApproval::OnRequest,
        ApprovalPromptContext::new(ApprovalsReviewer::User, None),
        &Policy::empty(),
        cwd,
        false,
        false,
    );
    assert_instructions_match(
        &instructions,
        profile,
        &ResolveContext::new(cwd),
        expected_globs,
    );
}

/// [`assert_text_matches_enforcement`] for the `instructions` made with `ctx`.
fn assert_instructions_match(
    instructions: &PermissionsInstructions,
    profile: &PermissionProfile,
    ctx: &ResolveContext,
    expected_globs: &[PathBuf],
) {
    let cwd = ctx.cwd.as_path();
    let described = parse(&instructions.body());
    let policy = file_system_sandbox_policy(profile);
    let ctx = ctx.clone();

    // 1. The queries every backend starts from.
    let writable = if policy.has_full_disk_write_access() {
        Vec::new()
    } else {
        policy.get_writable_roots(&ctx)
    };
    let query_roots: BTreeSet<PathBuf> = writable.iter().map(|root| root.root.clone()).collect();
    assert_eq!(described.roots, query_roots, "writable roots");
    let mut text_read_only = described.read_only.clone();
    for root in &described.roots {
        for name in &described.protected_names {
            text_read_only.insert(root.join(name));
        }
    }
    let query_read_only: BTreeSet<PathBuf> = writable
        .iter()
        .flat_map(|root| root.read_only_subpaths.iter().cloned())
        .collect();
    assert_eq!(text_read_only, query_read_only, "read-only carve-outs");
    let query_denied: BTreeSet<PathBuf> = policy.get_unreadable_roots(&ctx).into_iter().collect();
    assert_eq!(described.denied_paths, query_denied, "denied paths");
    let query_globs: BTreeSet<String> = policy
        .get_unreadable_globs_with_cwd(cwd)
        .into_iter()
        .collect();
    assert_eq!(described.denied_globs, query_globs, "denied globs");

    // 2. What the Linux backend actually mounts (restricted policies only; the others get no
    //    filesystem sandbox and the text says so).
    if policy.kind != FileSystemSandboxKind::Restricted {
        assert!(described.roots.is_empty() && described.denied_paths.is_empty());
        assert!(
            instructions
                .body()
                .contains("`sandbox_mode` is `danger-full-access`")
        );
        return;
    }
    let inputs = resolve_mount_inputs_in(&policy, &ctx).unwrap();
    if policy.has_full_disk_write_access() {
        return;
    }
    let mounted_roots: BTreeSet<PathBuf> = inputs
        .writable
        .iter()
        .map(|mount| mount.root.clone())
        .collect();
    let described_roots: BTreeSet<PathBuf> = described
        .roots
        .iter()
        .filter_map(|root| canonical(root))
        .collect();
    assert_eq!(mounted_roots, described_roots, "mounted writable roots");
    let described_read_only: BTreeSet<PathBuf> = text_read_only
        .iter()
        .map(|path| canonical(path).unwrap_or_else(|| path.clone()))
        .collect();
    for mount in &inputs.writable {
        for path in mount
            .read_only
            .iter()
            .chain(&mount.placeholders)
            .chain(&mount.file_placeholders)
            .chain(&mount.missing_read_only)
        {
            // Repositories the launch found under a writable root (`/tmp` holds whatever
            // this machine put there) are protected on top of the profile's carve-outs.
            if inputs.vanishable.contains(path) {
                continue;
            }
            assert!(
                described_read_only.contains(path),
                "{} is read-only in the sandbox but not in the text",
                path.display()
            );
        }
    }
    let masked: BTreeSet<PathBuf> = inputs.deny.iter().map(|mask| mask.path.clone()).collect();
    let mut described_masks: BTreeSet<PathBuf> = described
        .denied_paths
        .iter()
        .filter_map(|path| canonical(path))
        .collect();
    described_masks.extend(expected_globs.iter().filter_map(|path| canonical(path)));
    assert_eq!(masked, described_masks, "masked paths");
}

struct Workspace {
    _dir: tempfile::TempDir,
    base: PathBuf,
    cwd: PathBuf,
}

fn workspace() -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let cwd = base.join("ws");
    for sub in ["ws/docs", "ws/secret", "ws/sub", "extra"] {
        std::fs::create_dir_all(base.join(sub)).unwrap();
    }
    for file in ["ws/a.env", "ws/sub/b.env", "ws/readme.md", "ws/secret/key"] {
        std::fs::write(base.join(file), "x").unwrap();
    }
    Workspace {
        _dir: dir,
        base,
        cwd,
    }
}

#[test]
fn built_in_profiles_describe_what_is_enforced() {
    let ws = workspace();
    for id in BUILT_IN_IDS {
        assert_text_matches_enforcement(&common::built_in(id, &ws.cwd), &ws.cwd, &[]);
    }
}

#[test]
fn a_custom_profile_with_carve_outs_and_denies_describes_what_is_enforced() {
    let ws = workspace();
    let entries = vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
        FileSystemSandboxEntry::path(&ws.cwd, FileSystemAccessMode::Write),
        FileSystemSandboxEntry::path(ws.base.join("extra"), FileSystemAccessMode::Write),
        FileSystemSandboxEntry::path(ws.cwd.join("docs"), FileSystemAccessMode::Read),
        FileSystemSandboxEntry::path(ws.cwd.join("secret"), FileSystemAccessMode::Deny),
        FileSystemSandboxEntry::deny_glob("**/*.env"),
    ];
    let profile = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries,
            glob_scan_max_depth: None,
        },
        network: NetworkSandboxPolicy::Restricted,
    };
    let expected_globs = [ws.cwd.join("a.env"), ws.cwd.join("sub/b.env")];
    assert_text_matches_enforcement(&profile, &ws.cwd, &expected_globs);

    // And the text really lists them (a vacuous parse would also "agree").
    let instructions = PermissionsInstructions::from_permission_profile(
        &profile,
        AskForApproval::Never,
        ApprovalPromptContext::default(),
        &Policy::empty(),
        &ws.cwd,
        false,
        false,
    );
    let body = instructions.body();
    let described = parse(&body);
    assert_eq!(described.roots.len(), 2);
    assert!(described.read_only.contains(&ws.cwd.join("docs")));
    assert!(described.denied_paths.contains(&ws.cwd.join("secret")));
    assert_eq!(
        described.denied_globs,
        BTreeSet::from([format!("{}/**/*.env", ws.cwd.display())])
    );
    assert!(body.contains("every command keeps the filesystem sandbox"));
}

#[test]
fn a_profile_that_cannot_write_the_cwd_says_so() {
    let ws = workspace();
    let profile = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries: vec![
                FileSystemSandboxEntry::special(
                    FileSystemSpecialPath::Root,
                    FileSystemAccessMode::Read,
                ),
                FileSystemSandboxEntry::path(ws.base.join("extra"), FileSystemAccessMode::Write),
            ],
            glob_scan_max_depth: None,
        },
        network: NetworkSandboxPolicy::Enabled,
    };
    assert_text_matches_enforcement(&profile, &ws.cwd, &[]);
    let instructions = PermissionsInstructions::from_permission_profile(
        &profile,
        AskForApproval::OnRequest,
        ApprovalPromptContext::default(),
        &Policy::empty(),
        &ws.cwd,
        false,
        false,
    );
    assert!(instructions.body().contains(&format!(
        "The current directory `{}` is not writable.",
        ws.cwd.display()
    )));
    assert!(!instructions.projection().cwd_writable);
}

/// Issue 11: a `$HOME` that is the workspace. The text summarises its startup entries; read
/// back (the dot entries from the directory itself), they are exactly the carve-outs the
/// queries list and cover everything the Linux backend mounts read-only.
#[test]
fn a_home_inside_the_workspace_describes_what_is_enforced() {
    let ws = workspace();
    let home = ws.cwd.clone();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    std::fs::write(home.join(".bashrc"), "").unwrap();
    let entries = vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
        FileSystemSandboxEntry::path(&ws.cwd, FileSystemAccessMode::Write),
        // Lifted by an exact entry: the text names it as an exception.
        FileSystemSandboxEntry::path(home.join(".cache"), FileSystemAccessMode::Write),
    ];
    let profile = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries,
            glob_scan_max_depth: None,
        },
        network: NetworkSandboxPolicy::Restricted,
    };
    let ctx = ResolveContext::with_tmpdir(&ws.cwd, None).with_user_homes(vec![home.clone()]);
    let instructions = PermissionsInstructions::from_permission_profile_in(
        &profile,
        AskForApproval::OnRequest,
        ApprovalPromptContext::new(ApprovalsReviewer::User, None),
        Vec::<Vec<String>>::new(),
        &ctx,
        ApprovalFeatures::default(),
    );
    let body = instructions.body();
    assert!(
        body.contains(
            "every existing entry whose name starts with `.` stays read-only, except `.cache`."
        ),
        "{body}"
    );
    assert!(body.contains("`.bash_profile`"), "{body}");
    assert!(
        !body.contains("`.bashrc`"),
        "summarised, not listed: {body}"
    );
    assert_instructions_match(&instructions, &profile, &ctx, &[]);
}
