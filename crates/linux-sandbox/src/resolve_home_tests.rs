//! Unit tests of the `$HOME` part of [`super::resolve_mount_inputs_in`] (issue 11): a home
//! inside a writable root has its dot entries bound read-only, its missing startup names
//! kept by placeholders of the right type, and a symlinked dot entry refused.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use airlock_permissions::{ResolveContext, file_system_sandbox_policy};
use airlock_protocol::{
    FileSystemAccessMode, FileSystemSandboxEntry, FileSystemSandboxPolicy, FileSystemSpecialPath,
    PermissionProfile,
};

use super::{ResolveError, resolve_mount_inputs_in};
use crate::mounts::WritableMount;

/// `:root` read and `ws` write; nothing under `/tmp` (the checkout may lie there).
fn policy(ws: &Path) -> FileSystemSandboxPolicy {
    let profile = PermissionProfile::Managed {
        file_system: airlock_protocol::ManagedFileSystemPermissions::Restricted {
            entries: vec![
                FileSystemSandboxEntry::special(
                    FileSystemSpecialPath::Root,
                    FileSystemAccessMode::Read,
                ),
                FileSystemSandboxEntry::path(ws, FileSystemAccessMode::Write),
            ],
            glob_scan_max_depth: None,
        },
        network: airlock_protocol::NetworkSandboxPolicy::Restricted,
    };
    file_system_sandbox_policy(&profile)
}

fn base() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("airlock-home-")
        .tempdir_in(env!("CARGO_MANIFEST_DIR"))
        .unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

fn mount_of(ws: &Path, home: &Path) -> Result<WritableMount, ResolveError> {
    let ctx = ResolveContext::with_tmpdir(ws, None).with_user_homes(vec![home.to_path_buf()]);
    let inputs = resolve_mount_inputs_in(&policy(ws), &ctx)?;
    Ok(inputs.writable.into_iter().find(|w| w.root == ws).unwrap())
}

#[test]
fn dot_entries_are_bound_and_missing_names_get_typed_placeholders() {
    let (_dir, ws) = base();
    let home = ws.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/known_hosts"), "x").unwrap();
    std::fs::write(home.join(".bashrc"), "# mine\n").unwrap();
    std::fs::write(home.join("notes.txt"), "").unwrap();
    // An empty directory and an empty 0444 file: what a concurrent launch's placeholders
    // look like, so they are mounted over like placeholders.
    std::fs::create_dir(home.join(".config")).unwrap();
    std::fs::write(home.join(".profile"), "").unwrap();
    std::fs::set_permissions(home.join(".profile"), PermissionsExt::from_mode(0o444)).unwrap();
    let mount = mount_of(&ws, &home).unwrap();
    assert!(mount.read_only.contains(&home.join(".bashrc")));
    assert!(mount.read_only.contains(&home.join(".ssh")));
    assert!(!mount.read_only.iter().any(|p| p.ends_with("notes.txt")));
    assert!(mount.placeholders.contains(&home.join(".config")));
    assert!(mount.file_placeholders.contains(&home.join(".profile")));
    // Missing: directories where a directory is expected, files where a file is.
    for dir in [".local", ".cargo", ".git"] {
        assert!(mount.placeholders.contains(&home.join(dir)), "{dir}");
    }
    for file in [".bash_profile", ".zshrc", ".gitconfig", ".npmrc"] {
        assert!(mount.file_placeholders.contains(&home.join(file)), "{file}");
    }
    assert!(
        mount.missing_read_only.is_empty(),
        "{:?}",
        mount.missing_read_only
    );
}

#[test]
fn a_symlinked_dot_entry_is_refused_naming_it_and_the_fix() {
    let (_dir, ws) = base();
    let home = ws.join("home");
    std::fs::create_dir_all(home.join("dotfiles")).unwrap();
    std::fs::write(home.join("dotfiles/bashrc"), "").unwrap();
    symlink("dotfiles/bashrc", home.join(".bashrc")).unwrap();
    let error = mount_of(&ws, &home).unwrap_err();
    assert!(
        matches!(&error, ResolveError::HomeEntryIsSymlink { path, home: h }
            if *path == home.join(".bashrc") && *h == home),
        "{error}"
    );
    let text = error.to_string();
    assert!(text.contains("project directory"), "{text}");
}

#[test]
fn a_missing_home_cannot_be_created_and_one_outside_changes_nothing() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    std::fs::create_dir(&ws).unwrap();
    let mount = mount_of(&ws, &ws.join("users/me")).unwrap();
    assert!(mount.placeholders.contains(&ws.join("users")));
    assert!(
        !mount
            .placeholders
            .iter()
            .any(|p| p.starts_with(ws.join("users/me")))
    );
    let outside = base.join("home");
    std::fs::create_dir(&outside).unwrap();
    let plain = mount_of(&ws, &outside).unwrap();
    assert!(plain.file_placeholders.is_empty());
    assert!(!plain.placeholders.iter().any(|p| p.starts_with(&outside)));
}
