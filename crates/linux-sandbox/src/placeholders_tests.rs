#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use super::*;

/// Issue 11, finding F12 (launch race): a sandbox running meanwhile replaces the
/// directory the launcher just created with a symlink before its mode is set. Here the
/// symlink is in place when the mode is set: `chmod` by path (the code before) made the
/// link's target 0555; through a no-follow descriptor nothing changes.
#[test]
fn setting_the_mode_never_follows_a_symlink() {
    let root = tempfile::tempdir().unwrap();
    let target = root.path().join("victim");
    std::fs::write(&target, "secret").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = root.path().join(".codex");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    set_placeholder_mode(&link).unwrap();
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    let dir = root.path().join(".aws");
    std::fs::create_dir(&dir).unwrap();
    set_placeholder_mode(&dir).unwrap();
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, PLACEHOLDER_MODE);
}

fn guard_for(paths: &[PathBuf]) -> PlaceholderGuard {
    PlaceholderGuard::acquire(paths).unwrap()
}

#[test]
fn placeholders_are_created_removed_and_users_directories_kept() {
    let root = tempfile::tempdir().unwrap();
    let codex = root.path().join(".codex");
    let aws = root.path().join(".aws");
    let paths = vec![codex.clone(), aws.clone()];

    // Missing: created read-only for the run, removed afterwards.
    let guard = guard_for(&paths);
    let mode = std::fs::metadata(&aws).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, PLACEHOLDER_MODE);
    guard.release();
    assert!(!codex.exists() && !aws.exists(), "placeholders left behind");

    // The user's own empty directory: shadowed, never removed.
    std::fs::create_dir(&codex).unwrap();
    guard_for(&paths).release();
    assert!(codex.is_dir(), "the user's empty .codex was removed");
    assert!(!aws.exists());

    // Overlapping launches: the directory stays until the last one ends,
    // whichever ends first.
    let first = guard_for(&paths);
    let second = guard_for(&paths);
    first.release();
    assert!(aws.is_dir(), "removed from under a running launch");
    second.release();
    assert!(!aws.exists());

    // A crashed launch (guard leaked, lock gone with the descriptor) leaves a
    // placeholder the next launch recognises and removes.
    let crashed = guard_for(&paths);
    drop(crashed);
    assert!(aws.is_dir());
    guard_for(&paths).release();
    assert!(!aws.exists());
    assert!(codex.is_dir());

    // Something put into a placeholder meanwhile keeps it.
    let guard = guard_for(&paths);
    std::fs::set_permissions(&aws, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(aws.join("kept"), "x").unwrap();
    std::fs::set_permissions(&aws, std::fs::Permissions::from_mode(PLACEHOLDER_MODE)).unwrap();
    guard.release();
    assert!(aws.join("kept").exists());
}

/// The lock is the directory's own: a holder that found it by another route (as
/// a launch with another lock directory or user would) still keeps it in place.
#[test]
fn any_holder_of_the_directory_lock_prevents_removal() {
    let root = tempfile::tempdir().unwrap();
    let git = root.path().join(".git");
    let guard = guard_for(std::slice::from_ref(&git));
    let other = open_dir(&git).unwrap();
    other.lock_shared().unwrap();
    guard.release();
    assert!(git.is_dir(), "removed while another holder used it");
    drop(other);
    guard_for(std::slice::from_ref(&git)).release();
    assert!(!git.exists());
}

/// A launch waits while a removal holds the lock, then creates the directory
/// again instead of locking the removed one.
#[test]
fn a_launch_racing_a_removal_gets_a_live_directory() {
    let root = tempfile::tempdir().unwrap();
    let aws = root.path().join(".aws");
    let remover = guard_for(std::slice::from_ref(&aws));
    remover.held[0].dir.try_lock().unwrap();
    let path = aws.clone();
    let starter = std::thread::spawn(move || guard_for(std::slice::from_ref(&path)));
    std::thread::sleep(Duration::from_millis(20));
    std::fs::remove_dir(&aws).unwrap();
    drop(remover);
    let started = starter.join().unwrap();
    let live = std::fs::symlink_metadata(&aws).unwrap();
    assert!(same_inode(&started.held[0].dir.metadata().unwrap(), &live));
    started.release();
    assert!(!aws.exists());
}

#[test]
fn symlinks_and_files_are_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let link = root.path().join(".codex");
    std::os::unix::fs::symlink("/nonexistent", &link).unwrap();
    let file = root.path().join(".aws");
    std::fs::write(&file, "").unwrap();
    let guard = guard_for(&[link.clone(), file.clone()]);
    assert!(guard.held.is_empty());
    guard.release();
    assert!(std::fs::symlink_metadata(&link).is_ok() && file.is_file());
}

/// A placeholder removed between its `mkdir` and the `open` that sets its mode (an index
/// sweeping unlocked placeholders did this in a test run): no error, the lock loop starts
/// again and makes a new one.
#[test]
fn a_placeholder_gone_before_its_mode_is_set_is_made_again() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join(".aws");
    assert!(set_placeholder_mode(&path).unwrap().is_none());
    let guard =
        PlaceholderGuard::acquire_kinds([(path.as_path(), PlaceholderKind::Directory)]).unwrap();
    assert!(path.is_dir());
    guard.release();
    assert!(!path.exists());
}
