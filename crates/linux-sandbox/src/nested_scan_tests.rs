//! The nested-repository scan on real trees: depth, pseudo filesystems, `CACHEDIR.TAG`
//! pruning and cache invalidation.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use super::*;
use crate::fs_kind::{effective_uid, pseudo_fs_name};

/// Short enough for tests; [`settle`] waits it out so that the first scan caches.
const RECENT: Duration = Duration::from_millis(50);

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::Builder::new()
        .prefix("airlock-scan-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("ws");
    std::fs::create_dir_all(&root).unwrap();
    Tree {
        _dir: dir,
        root,
        cache: base.join("home/cache"),
    }
}

fn repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
}

fn options(cache: Option<&Path>) -> ScanOptions {
    ScanOptions {
        skip: Vec::new(),
        cache_dir: cache.map(Path::to_path_buf),
        recent: RECENT,
    }
}

fn scan(t: &Tree, cached: bool) -> ScanOutcome {
    let cache = cached.then_some(t.cache.as_path());
    scan_nested_repositories(&t.root, &options(cache)).unwrap()
}

/// Lets every directory made so far become older than [`RECENT`] (cacheable).
fn settle() {
    std::thread::sleep(RECENT * 3);
}

fn deep(root: &Path, levels: usize) -> PathBuf {
    (0..levels).fold(root.to_path_buf(), |p, i| p.join(format!("d{i}")))
}

#[test]
fn a_repository_ten_levels_down_is_found() {
    let t = tree();
    let lib = deep(&t.root, 10);
    repo(&lib);
    repo(&t.root); // the root's own `.git` is not a nested one
    let got = scan(&t, false);
    assert_eq!(got.found, [lib.join(".git")]);
}

#[test]
fn pseudo_filesystems_are_not_entered() {
    let got = scan_nested_repositories(Path::new("/proc"), &options(None)).unwrap();
    assert_eq!(got.pseudo, [PathBuf::from("/proc")]);
    assert_eq!(got.listed, 0);
    // /dev is an ordinary tmpfs or devtmpfs; /dev/pts below it is devpts.
    let pts = Path::new("/dev/pts");
    if pseudo_fs_name(pts) == Some("devpts") {
        let got = scan_nested_repositories(Path::new("/dev"), &options(None)).unwrap();
        assert!(got.pseudo.iter().any(|p| p == pts), "{got:?}");
        assert!(got.listed > 0);
    }
}

#[test]
fn only_a_correctly_signed_cachedir_tag_prunes_and_never_what_was_there() {
    let t = tree();
    let tagged = t.root.join("target");
    let forged = t.root.join("not-a-cache");
    repo(&tagged.join("old"));
    repo(&forged.join("old"));
    std::fs::write(
        tagged.join("CACHEDIR.TAG"),
        [CACHEDIR_SIGNATURE, b"\n# made by a test\n"].concat(),
    )
    .unwrap();
    std::fs::write(
        forged.join("CACHEDIR.TAG"),
        "Signature: 00000000000000000000000000000000\n",
    )
    .unwrap();
    settle();
    // First sighting: everything is found, the tagged tree is remembered.
    let first = scan(&t, true);
    assert_eq!(
        first.found,
        [forged.join("old/.git"), tagged.join("old/.git")]
    );
    assert!(first.pruned.is_empty());
    repo(&tagged.join("new"));
    repo(&forged.join("new"));
    let second = scan(&t, true);
    assert_eq!(second.pruned, std::slice::from_ref(&tagged));
    assert_eq!(
        second.found,
        [
            forged.join("new/.git"),
            forged.join("old/.git"),
            tagged.join("old/.git")
        ],
        "the tagged tree's new repository is the cache's; its old one stays protected"
    );
    // Without a cache nothing is pruned.
    let uncached = scan(&t, false);
    assert!(uncached.found.contains(&tagged.join("new/.git")));
    assert!(uncached.pruned.is_empty());
}

#[test]
fn a_tag_planted_over_a_repository_does_not_hide_it() {
    let t = tree();
    let vendor = t.root.join("vendor");
    repo(&vendor.join("lib"));
    settle();
    assert_eq!(scan(&t, true).found, [vendor.join("lib/.git")]);
    // The sandbox tags `vendor/`: the repository below stays found, launch after launch.
    std::fs::write(vendor.join("CACHEDIR.TAG"), CACHEDIR_SIGNATURE).unwrap();
    assert_eq!(scan(&t, true).found, [vendor.join("lib/.git")]);
    let again = scan(&t, true);
    assert_eq!(again.pruned, std::slice::from_ref(&vendor));
    assert_eq!(again.found, [vendor.join("lib/.git")]);
}

#[test]
fn the_cache_is_used_and_sees_a_new_repository() {
    let t = tree();
    let leaf = deep(&t.root, 8);
    std::fs::create_dir_all(&leaf).unwrap();
    settle();
    let first = scan(&t, true);
    assert!(first.found.is_empty());
    assert_eq!(first.listed, 9);
    let second = scan(&t, true);
    assert_eq!(
        (second.listed, second.cached),
        (0, 9),
        "served from the cache"
    );
    repo(&leaf);
    let third = scan(&t, true);
    assert_eq!(third.found, [leaf.join(".git")]);
    assert_eq!(
        third.listed, 1,
        "only the changed directory is listed again"
    );
}

#[test]
fn the_cache_sees_renamed_and_moved_in_directories() {
    let t = tree();
    let a = t.root.join("a/b");
    std::fs::create_dir_all(a.join("c/d")).unwrap();
    let outside = t.root.parent().unwrap().join("outside");
    repo(&outside.join("lib"));
    settle();
    assert!(scan(&t, true).found.is_empty());
    // A repository moved in from outside the root.
    std::fs::rename(outside.join("lib"), a.join("c/d/lib")).unwrap();
    assert_eq!(scan(&t, true).found, [a.join("c/d/lib/.git")]);
    // A directory renamed inside the root: found under its new name only.
    std::fs::rename(a.join("c"), a.join("e")).unwrap();
    assert_eq!(scan(&t, true).found, [a.join("e/d/lib/.git")]);
}

#[test]
fn resetting_mtime_does_not_hide_a_new_repository() {
    let t = tree();
    let dir = deep(&t.root, 3);
    std::fs::create_dir_all(&dir).unwrap();
    settle();
    let before = std::fs::metadata(&dir).unwrap().modified().unwrap();
    assert!(scan(&t, true).found.is_empty());
    repo(&dir);
    // What a sandboxed command can do: put the directory's mtime back (utimensat).
    let handle = std::fs::File::open(&dir).unwrap();
    handle
        .set_times(std::fs::FileTimes::new().set_modified(before))
        .unwrap();
    assert_eq!(std::fs::metadata(&dir).unwrap().modified().unwrap(), before);
    assert_eq!(scan(&t, true).found, [dir.join(".git")]);
}

#[test]
fn skipped_roots_vanished_entries_and_unreadable_directories() {
    let t = tree();
    repo(&t.root.join("inner/lib"));
    let mut opts = options(None);
    opts.skip = vec![t.root.join("inner")];
    assert!(
        scan_nested_repositories(&t.root, &opts)
            .unwrap()
            .found
            .is_empty()
    );
    // A root that is gone is nothing to scan.
    let gone = t.root.join("gone");
    assert!(
        scan_nested_repositories(&gone, &options(None))
            .unwrap()
            .found
            .is_empty()
    );
    // A directory of this user that cannot be listed fails closed (it may hide a repository).
    use std::os::unix::fs::PermissionsExt as _;
    let locked = t.root.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let result = scan_nested_repositories(&t.root, &options(None));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if effective_uid() != 0 {
        let error = result.unwrap_err().to_string();
        assert!(error.contains("cannot inspect"), "{error}");
    }
}

#[test]
fn a_package_managers_node_modules_is_pruned_like_a_tagged_cache() {
    let t = tree();
    let npm = t.root.join("node_modules");
    let plain = t.root.join("web/node_modules");
    let linked = t.root.join("app/node_modules");
    let misnamed = t.root.join("vendor");
    for dir in [&npm, &plain, &linked, &misnamed] {
        repo(&dir.join("old"));
    }
    std::fs::write(npm.join(".package-lock.json"), "{}").unwrap();
    std::fs::write(misnamed.join(".package-lock.json"), "{}").unwrap();
    // A marker that is a symlink does not count (it could point at anything).
    std::os::unix::fs::symlink(npm.join(".package-lock.json"), linked.join(".modules.yaml"))
        .unwrap();
    settle();
    let first = scan(&t, true);
    assert!(first.pruned.is_empty(), "first sighting walks everything");
    for dir in [&npm, &plain, &linked, &misnamed] {
        repo(&dir.join("new"));
    }
    let second = scan(&t, true);
    assert_eq!(second.pruned, std::slice::from_ref(&npm));
    let mut expected: Vec<PathBuf> = [&plain, &linked, &misnamed]
        .iter()
        .flat_map(|dir| [dir.join("new/.git"), dir.join("old/.git")])
        .collect();
    expected.push(npm.join("old/.git"));
    expected.sort();
    assert_eq!(
        second.found, expected,
        "only the marked node_modules is pruned; its old repository stays protected"
    );
    // Removing the marker ends the pruning: the new repository is found again.
    std::fs::remove_file(npm.join(".package-lock.json")).unwrap();
    assert!(scan(&t, true).found.contains(&npm.join("new/.git")));
}

#[test]
fn bare_form_git_directories_are_found_and_not_entered() {
    let t = tree();
    // What `git init --bare` makes, and a hand-made one with a `HEAD` symlink.
    let bare = t.root.join("a/backup.git");
    std::fs::create_dir_all(bare.join("objects/pack")).unwrap();
    std::fs::create_dir_all(bare.join("refs/heads")).unwrap();
    std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    repo(&bare.join("objects/pack/inside"));
    let linked = t.root.join("b/planted");
    std::fs::create_dir_all(linked.join("objects")).unwrap();
    std::fs::create_dir_all(linked.join("refs")).unwrap();
    std::os::unix::fs::symlink("refs/heads/none", linked.join("HEAD")).unwrap();
    // A file named HEAD alone is no repository.
    std::fs::create_dir_all(t.root.join("c")).unwrap();
    std::fs::write(t.root.join("c/HEAD"), "ref: refs/heads/main\n").unwrap();
    // The root itself is not reported.
    std::fs::create_dir_all(t.root.join("objects")).unwrap();
    std::fs::create_dir_all(t.root.join("refs")).unwrap();
    std::fs::write(t.root.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let expected = vec![bare.clone(), linked.clone()];
    assert_eq!(scan(&t, false).found, expected);
    // From the cache too; a directory completed into a git directory later is found.
    settle();
    assert_eq!(scan(&t, true).found, expected);
    settle();
    let again = scan(&t, true);
    assert_eq!(again.found, expected);
    std::fs::create_dir_all(t.root.join("c/objects")).unwrap();
    std::fs::create_dir_all(t.root.join("c/refs")).unwrap();
    let mut with_c = expected.clone();
    with_c.push(t.root.join("c"));
    assert_eq!(scan(&t, true).found, with_c);
}

/// A tagged directory's record holds only under the tag file it was made under: a tag
/// removed and put back (by `rm`, `mv` away and back, or a hard link) with no scan seeing
/// the untagged period (the index daemon answered those launches) never hides a repository
/// created meanwhile.
#[test]
fn a_tag_removed_and_put_back_unseen_does_not_hide_what_was_made_meanwhile() {
    let tag = [CACHEDIR_SIGNATURE, b"\n# made by a test\n"].concat();
    type Put = fn(&Path, &[u8], &Path);
    let ways: [(&str, Put); 3] = [
        ("rm and write", |dir, tag, _| {
            std::fs::remove_file(dir.join("CACHEDIR.TAG")).unwrap();
            std::fs::write(dir.join("CACHEDIR.TAG"), tag).unwrap();
        }),
        ("mv away and back", |dir, _, away| {
            std::fs::rename(dir.join("CACHEDIR.TAG"), away.join("tag")).unwrap();
            std::fs::rename(away.join("tag"), dir.join("CACHEDIR.TAG")).unwrap();
        }),
        ("hard link away and back", |dir, _, away| {
            std::fs::hard_link(dir.join("CACHEDIR.TAG"), away.join("tag")).unwrap();
            std::fs::remove_file(dir.join("CACHEDIR.TAG")).unwrap();
            std::fs::hard_link(away.join("tag"), dir.join("CACHEDIR.TAG")).unwrap();
        }),
    ];
    for (how, put_back) in ways {
        let t = tree();
        let away = t.root.parent().unwrap().join("away");
        std::fs::create_dir_all(&away).unwrap();
        let tagged = t.root.join("vendor");
        std::fs::create_dir_all(&tagged).unwrap();
        std::fs::write(tagged.join("CACHEDIR.TAG"), &tag).unwrap();
        settle();
        let first = scan(&t, true);
        assert!(first.found.is_empty(), "{how}: {first:?}");
        // Untagged meanwhile (seen by no scan that writes the cache), a repository made.
        put_back(&tagged, &tag, &away);
        repo(&tagged.join("lib"));
        settle();
        let later = scan(&t, true);
        assert_eq!(later.found, [tagged.join("lib/.git")], "{how}");
        // The new record holds under the tag now there: later repositories are the
        // cache's (the documented gap), the one found stays protected.
        repo(&tagged.join("after"));
        let again = scan(&t, true);
        assert_eq!(again.pruned, std::slice::from_ref(&tagged), "{how}");
        assert_eq!(again.found, [tagged.join("lib/.git")], "{how}");
    }
}

/// A tagged directory holding a deeper writable root (skipped by this walk) is walked as
/// untagged: a record made without seeing that root's repositories would hide them from a
/// later walk whose skip list differs (red-team finding: `$TMPDIR` tagged by the sandbox
/// while the workspace was `$TMPDIR/proj`).
#[test]
fn a_tagged_directory_around_a_skipped_root_makes_no_record() {
    let tag = [CACHEDIR_SIGNATURE, b"\n# made by a test\n"].concat();
    for tagged_rel in ["", "d"] {
        let t = tree();
        let tagged = t.root.join(tagged_rel);
        let proj = tagged.join("proj");
        repo(&proj);
        std::fs::write(tagged.join("CACHEDIR.TAG"), &tag).unwrap();
        settle();
        let skipping = ScanOptions {
            skip: vec![proj.clone()],
            ..options(Some(&t.cache))
        };
        let first = scan_nested_repositories(&t.root, &skipping).unwrap();
        assert!(
            first.found.is_empty() && first.pruned.is_empty(),
            "{first:?}"
        );
        // The next launch has another workspace: `proj` is not skipped any more.
        let later = scan(&t, true);
        assert_eq!(later.found, [proj.join(".git")], "tagged {tagged_rel:?}");
        let again = scan(&t, true);
        assert_eq!(again.found, [proj.join(".git")], "tagged {tagged_rel:?}");
    }
}
