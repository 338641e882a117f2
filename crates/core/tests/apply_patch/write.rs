//! `write_atomically` and the child's `apply_request` on real files: all or nothing.

use std::fs;
use std::path::Path;

use airlock_core::apply_patch::HelperRequest;
use airlock_core::apply_patch::HostFiles;
use airlock_core::apply_patch::apply_request;
use airlock_core::apply_patch::real_paths_of;
use airlock_core::apply_patch::write_atomically;
use airlock_patch::FinalWrite;
use airlock_patch::verify_patch;
use pretty_assertions::assert_eq;

fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("airlock-patch-write-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// Every entry under `dir` (names), sorted: proves no temporary file or folder was left.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = walk(dir)
        .into_iter()
        .map(|path| path.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    names.sort();
    names
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.is_symlink() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn a_failing_second_file_leaves_the_first_untouched() {
    let ws = workspace();
    let root = ws.path();
    fs::write(root.join("first.txt"), "one\n").unwrap();
    // The second target is a directory: it cannot be replaced by a file.
    fs::create_dir(root.join("second")).unwrap();
    let writes = vec![
        FinalWrite {
            path: root.join("first.txt"),
            content: Some("ONE\n".to_owned()),
        },
        FinalWrite {
            path: root.join("new/deeper/file.txt"),
            content: Some("n\n".to_owned()),
        },
        FinalWrite {
            path: root.join("second"),
            content: Some("two\n".to_owned()),
        },
    ];
    let before = listing(root);
    let error = write_atomically(&writes).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot write {}: path is a directory; nothing was changed",
            root.join("second").display()
        )
    );
    assert_eq!(fs::read_to_string(root.join("first.txt")).unwrap(), "one\n");
    // No temporary file and no created folder is left behind.
    assert_eq!(listing(root), before);
}

#[test]
fn a_patch_whose_second_file_fails_changes_nothing() {
    let ws = workspace();
    let root = ws.path();
    fs::write(root.join("a.txt"), "a\n").unwrap();
    fs::create_dir(root.join("b.txt")).unwrap();
    // Verification passes (b.txt is "added"), but b.txt is a directory when writing.
    let patch =
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: b.txt\n+b\n*** End Patch";
    let verified = verify_patch(patch, root, &HostFiles).unwrap();
    let outcome = apply_request(&HelperRequest {
        cwd: root.to_path_buf(),
        patch: patch.to_owned(),
        changes: verified.changes.clone(),
        real_paths: real_paths_of(&verified).unwrap(),
    });
    assert_eq!(outcome.exit_code, 1);
    assert!(
        outcome
            .stderr
            .contains("path is a directory; nothing was changed"),
        "{}",
        outcome.stderr
    );
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    assert_eq!(listing(root), ["a.txt", "b.txt"]);
}

#[test]
fn replaces_links_instead_of_writing_through_them() {
    let ws = workspace();
    let root = ws.path();
    fs::create_dir(root.join("outside")).unwrap();
    fs::write(root.join("outside/target"), "secret\n").unwrap();
    fs::hard_link(root.join("outside/target"), root.join("hard")).unwrap();
    std::os::unix::fs::symlink(root.join("outside/target"), root.join("soft")).unwrap();
    let writes = ["hard", "soft"].map(|name| FinalWrite {
        path: root.join(name),
        content: Some(format!("{name} edited\n")),
    });
    write_atomically(&writes).unwrap();
    assert_eq!(
        fs::read_to_string(root.join("outside/target")).unwrap(),
        "secret\n"
    );
    assert_eq!(
        fs::read_to_string(root.join("hard")).unwrap(),
        "hard edited\n"
    );
    assert!(!root.join("soft").is_symlink());
}

#[test]
fn keeps_permission_bits_and_removes_deleted_files() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = workspace();
    let root = ws.path();
    fs::write(root.join("run.sh"), "echo\n").unwrap();
    fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o750)).unwrap();
    fs::write(root.join("gone"), "x\n").unwrap();
    write_atomically(&[
        FinalWrite {
            path: root.join("gone"),
            content: None,
        },
        FinalWrite {
            path: root.join("run.sh"),
            content: Some("echo hi\n".to_owned()),
        },
    ])
    .unwrap();
    let mode = fs::metadata(root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
    assert_eq!(listing(root), ["run.sh"]);
}

#[test]
fn the_child_refuses_files_changed_since_verification() {
    let ws = workspace();
    let root = ws.path();
    fs::write(root.join("a.txt"), "a\nb\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** End Patch";
    let verified = verify_patch(patch, root, &HostFiles).unwrap();
    fs::write(root.join("a.txt"), "a\nb\nc\n").unwrap();
    let outcome = apply_request(&HelperRequest {
        cwd: root.to_path_buf(),
        patch: patch.to_owned(),
        real_paths: real_paths_of(&verified).unwrap(),
        changes: verified.changes,
    });
    assert_eq!(outcome.exit_code, 1);
    assert!(
        outcome
            .stderr
            .contains("the files changed after the patch was verified")
    );
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "a\nb\nc\n");
}

/// Issue 11, finding F6: a folder on the way swapped for a symlink after the parent checked
/// the patch (here between the check and the child's write) is never written through; the
/// child names the path, where it now leads and what was approved.
#[test]
fn the_child_refuses_a_folder_swapped_for_a_symlink_after_the_check() {
    let ws = workspace();
    let root = ws.path();
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::create_dir_all(root.join("outside")).unwrap();
    let patch = "*** Begin Patch\n*** Add File: sub/planted.rules\n+x\n*** End Patch";
    let verified = verify_patch(patch, root, &HostFiles).unwrap();
    let real_paths = real_paths_of(&verified).unwrap();
    fs::rename(root.join("sub"), root.join("sub.old")).unwrap();
    std::os::unix::fs::symlink(root.join("outside"), root.join("sub")).unwrap();
    let outcome = apply_request(&HelperRequest {
        cwd: root.to_path_buf(),
        patch: patch.to_owned(),
        changes: verified.changes,
        real_paths,
    });
    assert_eq!(outcome.exit_code, 1);
    assert!(
        outcome
            .stderr
            .contains("a symlink on the way changed after the check"),
        "{}",
        outcome.stderr
    );
    assert_eq!(listing(&root.join("outside")), Vec::<String>::new());
    assert_eq!(listing(&root.join("sub.old")), Vec::<String>::new());
}

/// A request that does not say where a path leads is not written at all (fail closed).
#[test]
fn the_child_refuses_paths_the_parent_did_not_check() {
    let ws = workspace();
    let root = ws.path();
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch";
    let verified = verify_patch(patch, root, &HostFiles).unwrap();
    let outcome = apply_request(&HelperRequest {
        cwd: root.to_path_buf(),
        patch: patch.to_owned(),
        changes: verified.changes,
        real_paths: std::collections::BTreeMap::new(),
    });
    assert_eq!(outcome.exit_code, 1);
    assert!(
        outcome.stderr.contains("was not checked"),
        "{}",
        outcome.stderr
    );
    assert!(!root.join("new.txt").exists());
}
