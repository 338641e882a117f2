//! Unit tests of the issue 11 item 7 parts of [`super::resolve_mount_inputs`]: deny entries
//! on dangling symlinks, and the warnings of a launch.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use airlock_permissions::{
    FileSystemPolicyQueries, ResolveContext, built_in_profile, file_system_sandbox_policy,
    materialize_project_roots_with_workspace_roots,
};
use airlock_protocol::{
    FileSystemAccessMode, FileSystemPath, FileSystemSandboxEntry, FileSystemSandboxPolicy,
    FileSystemSpecialPath,
};

use super::{launch_warnings, resolve_mount_inputs};
use crate::dangling::dangling_target;

/// `:workspace` at `ws` without `/tmp` (the checkout may lie under it) plus `extra`.
fn policy(ws: &Path, extra: &[(&Path, FileSystemAccessMode)]) -> FileSystemSandboxPolicy {
    let profile = built_in_profile(":workspace").unwrap();
    let mut policy = file_system_sandbox_policy(&materialize_project_roots_with_workspace_roots(
        &profile,
        &[ws.to_path_buf()],
    ));
    policy.entries.retain(|e| {
        !matches!(
            &e.path,
            FileSystemPath::Special {
                value: FileSystemSpecialPath::SlashTmp | FileSystemSpecialPath::Tmpdir
            }
        )
    });
    for (path, access) in extra {
        policy.entries.push(FileSystemSandboxEntry {
            path: FileSystemPath::Path {
                path: path.to_path_buf(),
            },
            access: *access,
            missing_path_behavior: None,
        });
    }
    policy
}

fn base() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("airlock-resolve-")
        .tempdir_in(env!("CARGO_MANIFEST_DIR"))
        .unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

#[test]
fn dangling_deny_symlinks_mask_their_target_or_warn() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let inside = ws.join("secret-link");
    symlink("sub/secret", &inside).unwrap();
    let outside = base.join("cfg-link");
    symlink(base.join("nothere/x"), &outside).unwrap();
    let deny = FileSystemAccessMode::Deny;
    let inputs =
        resolve_mount_inputs(&policy(&ws, &[(&inside, deny), (&outside, deny)]), &ws).unwrap();
    let masked: Vec<&Path> = inputs.deny.iter().map(|d| d.path.as_path()).collect();
    // The first missing component of the target inside the workspace, `sub`, gets a
    // read-only placeholder: it cannot be made.
    let ws_mount = inputs.writable.iter().find(|w| w.root == ws).unwrap();
    assert!(
        ws_mount.placeholders.contains(&ws.join("sub")),
        "{ws_mount:?}"
    );
    assert!(!masked.contains(&outside.as_path()), "{masked:?}");
    assert!(
        inputs.warnings.iter().any(|w| w.contains(&format!(
            "deny entry {} is a symlink to the missing {}",
            outside.display(),
            base.join("nothere/x").display()
        ))),
        "{:?}",
        inputs.warnings
    );
}

#[test]
fn dangling_targets_follow_chains_and_relative_links() {
    let (_dir, base) = base();
    std::fs::create_dir(base.join("d")).unwrap();
    symlink("../e/f", base.join("d/one")).unwrap();
    std::fs::create_dir(base.join("e")).unwrap();
    symlink("/nonexistent-airlock/x", base.join("e/f")).unwrap();
    assert_eq!(
        dangling_target(&base.join("d/one")),
        PathBuf::from("/nonexistent-airlock/x")
    );
    symlink("missing", base.join("d/two")).unwrap();
    assert_eq!(dangling_target(&base.join("d/two")), base.join("d/missing"));
}

#[test]
fn refused_roots_become_launch_warnings() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let link = ws.join("vendor");
    symlink(".git", &link).unwrap();
    let policy = policy(&ws, &[(&link, FileSystemAccessMode::Write)]);
    let ctx = ResolveContext::with_tmpdir(&ws, None);
    let (_, refused) = policy.get_writable_roots_judged(&ctx);
    let warnings = launch_warnings(&policy, &ctx, &refused);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(&format!(
            "writable root {} is kept read-only",
            link.display()
        )),
        "{warnings:?}"
    );
    let inputs = resolve_mount_inputs(&policy, &ws).unwrap();
    assert!(!inputs.writable.iter().any(|w| w.root == ws.join(".git")));
}

#[test]
fn only_a_real_directory_without_entries_is_empty() {
    use super::is_empty_dir;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("empty")).unwrap();
    assert!(is_empty_dir(&root.join("empty")));
    std::fs::create_dir(root.join("with-file")).unwrap();
    std::fs::write(root.join("with-file/f"), "").unwrap();
    assert!(!is_empty_dir(&root.join("with-file")));
    std::fs::create_dir_all(root.join("with-dirs/a")).unwrap();
    std::fs::create_dir_all(root.join("with-dirs/b")).unwrap();
    assert!(
        !is_empty_dir(&root.join("with-dirs")),
        "with subdirectories"
    );
    std::fs::create_dir_all(root.join("with-one-dir/a")).unwrap();
    assert!(!is_empty_dir(&root.join("with-one-dir")));
    symlink(root.join("empty"), root.join("link")).unwrap();
    assert!(
        !is_empty_dir(&root.join("link")),
        "a symlink is not a directory here"
    );
    assert!(!is_empty_dir(&root.join("missing")));
}
