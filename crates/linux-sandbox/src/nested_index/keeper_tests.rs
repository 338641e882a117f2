//! The sweep removes only unused placeholders of the root it was asked about.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::Path;

use super::*;
use crate::placeholders::PlaceholderGuard;

/// The roots asked about are process-wide: one test at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn placeholder(path: &Path) {
    std::fs::DirBuilder::new().mode(0o555).create(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o555)).unwrap();
}

#[test]
fn the_sweep_spares_what_is_not_an_unused_placeholder_of_the_root_asked_about() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("scratch");
    std::fs::create_dir(&root).unwrap();
    placeholder(&root.join(".git")); // unused: removed
    placeholder(&root.join(".codex")); // held by a running launch: kept
    std::fs::create_dir(root.join(".aws")).unwrap(); // the user's own (mode 0755): kept
    placeholder(&root.join(".agents"));
    std::fs::write(root.join(".agents/file"), "x").unwrap(); // not empty: kept
    let held = PlaceholderGuard::acquire(&[root.join(".codex")]).unwrap();
    note_query(&root);
    sweep_all();
    assert!(!root.join(".git").exists());
    assert!(root.join(".codex").is_dir() && root.join(".aws").is_dir());
    assert!(root.join(".agents/file").exists());
    held.release();
}

#[test]
fn a_root_replaced_by_a_symlink_since_it_was_asked_about_is_left_alone() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("t1");
    let victim = base.join("victim");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&victim).unwrap();
    placeholder(&victim.join(".aws"));
    note_query(&root);
    std::fs::rename(&root, base.join("t1.old")).unwrap();
    std::os::unix::fs::symlink(&victim, &root).unwrap();
    sweep_all();
    assert!(
        victim.join(".aws").is_dir(),
        "swept through a symlinked root"
    );
    // Nor a directory put in its place.
    std::fs::remove_file(&root).unwrap();
    std::fs::create_dir(&root).unwrap();
    placeholder(&root.join(".aws"));
    note_query(&base.join("t1.old"));
    std::fs::rename(base.join("t1.old"), base.join("t1.older")).unwrap();
    std::fs::rename(&root, base.join("t1.old")).unwrap();
    sweep_all();
    assert!(base.join("t1.old/.aws").is_dir(), "swept another directory");
}
