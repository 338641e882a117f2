//! `$HOME` inside a writable root (issue 11): its top-level dot entries and missing startup
//! names are read-only subpaths of every root that holds it; explicit entries lift single
//! paths; `$HOME` outside every root changes nothing.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::HOME_STARTUP_NAMES;
use airlock_permissions::ResolveContext;
use airlock_permissions::WritableRoot;
use airlock_permissions::is_writable_under;
use airlock_protocol::FileSystemAccessMode::Read;
use airlock_protocol::FileSystemAccessMode::Write;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;

struct Layout {
    _dir: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
}

/// `base/home` with `.bashrc`, `.ssh/`, `.config/git/config`, `.cache/`, `notes.txt`, `bin/`.
fn layout() -> Layout {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let home = base.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::fs::write(home.join(".bashrc"), "# mine\n").unwrap();
    std::fs::write(home.join(".config/git/config"), "").unwrap();
    std::fs::write(home.join("notes.txt"), "").unwrap();
    Layout {
        _dir: dir,
        base,
        home,
    }
}

fn policy(entries: Vec<FileSystemSandboxEntry>) -> FileSystemSandboxPolicy {
    let mut all = vec![FileSystemSandboxEntry::special(
        FileSystemSpecialPath::Root,
        Read,
    )];
    all.extend(entries);
    FileSystemSandboxPolicy::restricted(all)
}

fn ctx(cwd: &Path, home: &Path) -> ResolveContext {
    ResolveContext::with_tmpdir(cwd, None).with_user_homes(vec![home.to_path_buf()])
}

fn root_at<'a>(roots: &'a [WritableRoot], path: &Path) -> &'a WritableRoot {
    roots.iter().find(|r| r.root == path).unwrap()
}

#[test]
fn a_home_that_is_the_workspace_keeps_its_dot_entries_read_only() {
    let l = layout();
    let policy = policy(vec![FileSystemSandboxEntry::path(&l.home, Write)]);
    let ctx = ctx(&l.home, &l.home);
    let roots = policy.get_writable_roots(&ctx);
    let root = root_at(&roots, &l.home);
    for existing in [".bashrc", ".ssh", ".config", ".cache"] {
        assert!(
            root.read_only_subpaths.contains(&l.home.join(existing)),
            "{existing}: {:?}",
            root.read_only_subpaths
        );
    }
    // Missing well-known names cannot be created; every one is listed.
    for known in HOME_STARTUP_NAMES {
        assert!(
            root.read_only_subpaths.contains(&l.home.join(known.name)),
            "{}",
            known.name
        );
    }
    // Listed once each, `.git` included (also a protected name of every root).
    let git = l.home.join(".git");
    assert_eq!(
        root.read_only_subpaths
            .iter()
            .filter(|p| **p == git)
            .count(),
        1
    );
    for (path, writable) in [
        (".bashrc", false),
        (".ssh/config", false),
        (".config/git/config", false),
        (".local/bin/x", false),
        (".bash_profile", false),
        ("notes.txt", true),
        ("bin/tool", true),
        ("project/src/main.rs", true),
        // A dot name nobody reads, created later: the rule lists what exists now.
        (".my-new-tool", true),
    ] {
        assert_eq!(
            root.is_path_writable(&l.home.join(path)),
            writable,
            "{path}"
        );
        assert_eq!(
            is_writable_under(&policy, &l.home.join(path), &ctx),
            writable,
            "{path} (is_writable_under)"
        );
    }
}

#[test]
fn a_home_deeper_inside_nested_roots_is_protected_under_each() {
    let l = layout();
    let ws = l.base.clone();
    let policy = policy(vec![
        FileSystemSandboxEntry::path(&l.base, Write),
        FileSystemSandboxEntry::path(&l.home, Write),
    ]);
    let ctx = ctx(&ws, &l.home);
    let roots = policy.get_writable_roots(&ctx);
    for root in [&l.base, &l.home] {
        let root = root_at(&roots, root);
        assert!(
            root.read_only_subpaths.contains(&l.home.join(".bashrc")),
            "{}",
            root.root.display()
        );
        assert!(!root.is_path_writable(&l.home.join(".profile")));
        assert!(root.is_path_writable(&l.home.join("notes.txt")));
    }
    // `$HOME` spelled through a symlink: judged where it resolves to, spelled under the root.
    let link = l.base.join("home-link");
    std::os::unix::fs::symlink(&l.home, &link).unwrap();
    let ctx = ResolveContext::with_tmpdir(&ws, None).with_user_homes(vec![link]);
    let roots = policy.get_writable_roots(&ctx);
    assert!(
        root_at(&roots, &l.base)
            .read_only_subpaths
            .contains(&l.home.join(".ssh"))
    );
}

#[test]
fn a_home_outside_every_root_adds_nothing() {
    let l = layout();
    let ws = l.base.join("ws");
    std::fs::create_dir(&ws).unwrap();
    let policy = policy(vec![FileSystemSandboxEntry::path(&ws, Write)]);
    let with_home = policy.get_writable_roots(&ctx(&ws, &l.home));
    let without = policy.get_writable_roots(&ResolveContext::with_tmpdir(&ws, None));
    assert_eq!(with_home, without);
}

#[test]
fn an_explicit_entry_for_an_exact_path_lifts_it() {
    let l = layout();
    let policy = policy(vec![
        FileSystemSandboxEntry::path(&l.home, Write),
        FileSystemSandboxEntry::path(l.home.join(".cache"), Write),
    ]);
    let roots = policy.get_writable_roots(&ctx(&l.home, &l.home));
    let root = root_at(&roots, &l.home);
    assert!(!root.read_only_subpaths.contains(&l.home.join(".cache")));
    assert!(root.is_path_writable(&l.home.join(".cache/pip/x")));
    assert!(root.read_only_subpaths.contains(&l.home.join(".bashrc")));
}

#[test]
fn a_missing_or_unlistable_home_is_read_only_whole() {
    let l = layout();
    let missing = l.base.join("not-yet");
    let policy = policy(vec![FileSystemSandboxEntry::path(&l.base, Write)]);
    let roots = policy.get_writable_roots(&ctx(&l.base, &missing));
    let root = root_at(&roots, &l.base);
    assert!(root.read_only_subpaths.contains(&missing));
    assert!(!root.is_path_writable(&missing.join(".bashrc")));
    assert!(root.is_path_writable(&l.base.join("other")));
}

#[test]
fn symlinked_dot_entries_protect_their_targets_too() {
    let l = layout();
    std::fs::create_dir(l.home.join("dotfiles")).unwrap();
    std::fs::write(l.home.join("dotfiles/zshrc"), "").unwrap();
    std::os::unix::fs::symlink("dotfiles/zshrc", l.home.join(".zshrc")).unwrap();
    let policy = policy(vec![FileSystemSandboxEntry::path(&l.home, Write)]);
    let roots = policy.get_writable_roots(&ctx(&l.home, &l.home));
    let root = root_at(&roots, &l.home);
    assert!(root.read_only_subpaths.contains(&l.home.join(".zshrc")));
    assert!(
        root.read_only_subpaths
            .contains(&l.home.join("dotfiles/zshrc"))
    );
    assert!(root.is_path_writable(&l.home.join("dotfiles/other")));
}
