#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::{ResolutionMemo, canonicalize, is_dir};

/// A tree with every kind of component realpath(3) meets: relative and absolute links,
/// chains, `..` through links, a loop, a file used as a directory, a dangling link.
fn layout() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(base.join("a/b/c")).unwrap();
    std::fs::write(base.join("a/file"), "x").unwrap();
    symlink("b", base.join("a/rel")).unwrap();
    symlink(base.join("a/b/c"), base.join("abs")).unwrap();
    symlink("../a/rel/c", base.join("a/b/up")).unwrap();
    symlink("chain2", base.join("chain1")).unwrap();
    symlink("abs/..", base.join("chain2")).unwrap();
    symlink("loop2", base.join("loop1")).unwrap();
    symlink("loop1", base.join("loop2")).unwrap();
    symlink("missing/x", base.join("dangling")).unwrap();
    symlink("a/file", base.join("filelink")).unwrap();
    (dir, base)
}

fn cases(base: &Path) -> Vec<PathBuf> {
    [
        "",
        "a",
        "a/",
        "a/.",
        "a/b/../b/c",
        "a/rel",
        "a/rel/c",
        "a/rel/..",
        "abs",
        "abs/..",
        "abs/../..",
        "a/b/up",
        "a/b/up/..",
        "chain1",
        "chain1/c",
        "loop1",
        "loop1/x",
        "dangling",
        "dangling/y",
        "a/file",
        "a/file/",
        "a/file/..",
        "a/file/x",
        "filelink",
        "filelink/",
        "filelink/..",
        "missing",
        "missing/..",
        "a/./b/./c/",
        "../..",
    ]
    .iter()
    .map(|case| base.join(case))
    .chain([
        PathBuf::from("/"),
        PathBuf::from("/.."),
        PathBuf::from("/proc/self/cwd"),
    ])
    .collect()
}

fn same_as_std(path: &Path) {
    let want = std::fs::canonicalize(path).map_err(|e| e.raw_os_error());
    let got = canonicalize(path).map_err(|e| e.raw_os_error());
    assert_eq!(got, want, "{}", path.display());
}

#[test]
fn resolves_as_realpath_does_without_a_memo() {
    let (_dir, base) = layout();
    for path in cases(&base) {
        same_as_std(&path);
    }
}

#[test]
fn resolves_as_realpath_does_with_a_memo() {
    let (_dir, base) = layout();
    let _memo = ResolutionMemo::begin();
    for _ in 0..2 {
        for path in cases(&base) {
            same_as_std(&path);
        }
    }
}

#[test]
fn relative_paths_resolve_against_the_working_directory() {
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(
        canonicalize(Path::new(".")).unwrap(),
        std::fs::canonicalize(&cwd).unwrap()
    );
}

#[test]
fn the_memo_keeps_one_answer_per_launch_and_ends_with_its_owner() {
    let (_dir, base) = layout();
    let link = base.join("moving");
    symlink("a", &link).unwrap();
    {
        let outer = ResolutionMemo::begin();
        assert_eq!(canonicalize(&link).unwrap(), base.join("a"));
        std::fs::remove_file(&link).unwrap();
        symlink("a/b", &link).unwrap();
        {
            let _inner = ResolutionMemo::begin();
            // Within one memo the plan sees one consistent view.
            assert_eq!(canonicalize(&link).unwrap(), base.join("a"));
        }
        // An inner memo ending does not end the outer one.
        assert_eq!(canonicalize(&link).unwrap(), base.join("a"));
        drop(outer);
    }
    // Without a memo every call asks the file system.
    assert_eq!(canonicalize(&link).unwrap(), base.join("a/b"));
}

/// `is_dir` answers as `Path::is_dir`, once per path within a memo.
#[test]
fn is_dir_is_asked_once_per_memo() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    assert!(is_dir(&sub));
    {
        let _memo = ResolutionMemo::begin();
        assert!(is_dir(&sub));
        std::fs::remove_dir(&sub).unwrap();
        assert!(is_dir(&sub));
        assert!(!is_dir(&dir.path().join("missing")));
    }
    assert!(!is_dir(&sub));
    std::fs::write(&sub, "").unwrap();
    let _memo = ResolutionMemo::begin();
    assert!(!is_dir(&sub));
}
