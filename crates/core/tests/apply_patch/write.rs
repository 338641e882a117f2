//! `write_atomically` and the child's `apply_request` on real files: all or nothing.

use std::fs;
use std::path::Path;

use airlock_core::apply_patch::HelperRequest;
use airlock_core::apply_patch::HostFiles;
use airlock_core::apply_patch::apply_request;
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
