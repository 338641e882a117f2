//! The index against the plain scan: after every step of a random sequence of tree
//! mutations, the index's outcome equals the plain scan's (with a cache of the same
//! history: a tagged directory is pruned from its second sighting on in both).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::nested_scan::{ScanOptions, ScanOutcome, scan_nested_repositories};

struct Pair {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    cache: PathBuf,
    index: Index,
}

fn pair() -> Pair {
    let dir = tempfile::Builder::new()
        .prefix("airlock-index-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("ws");
    std::fs::create_dir_all(&root).unwrap();
    Pair {
        _dir: dir,
        cache: base.join("home/cache"),
        root,
        base,
        index: Index::new().unwrap(),
    }
}

/// The facts compared (the counters differ by design).
fn facts(r: &Result<ScanOutcome, ResolveError>) -> Result<[Vec<PathBuf>; 3], String> {
    match r {
        Ok(o) => Ok([o.found.clone(), o.pseudo.clone(), o.pruned.clone()]),
        Err(e) => Err(e.to_string()),
    }
}

impl Pair {
    /// The reference: the plain scan, listing every directory (nothing is settled within
    /// an hour) but keeping the tagged-directory history in its cache.
    fn reference(&self) -> Result<ScanOutcome, ResolveError> {
        let options = ScanOptions {
            skip: Vec::new(),
            cache_dir: Some(self.cache.clone()),
            recent: Duration::from_secs(3600),
        };
        scan_nested_repositories(&self.root, &options)
    }

    fn query(&mut self) -> Result<ScanOutcome, ResolveError> {
        let options = ScanOptions {
            skip: Vec::new(),
            cache_dir: None,
            recent: Duration::ZERO,
        };
        self.index.query(&self.root, &options)
    }

    /// Index and reference agree; returns the index's outcome.
    fn agree(&mut self, step: &str) -> Option<ScanOutcome> {
        let got = self.query();
        let want = self.reference();
        assert_eq!(facts(&got), facts(&want), "after {step}");
        got.ok()
    }
}

fn repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
}

fn bare(dir: &Path) {
    std::fs::create_dir_all(dir.join("objects")).unwrap();
    std::fs::create_dir_all(dir.join("refs")).unwrap();
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
}

fn dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut at = 0;
    while at < out.len() {
        let dir = out[at].clone();
        at += 1;
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != ".git" {
                    out.push(e.path());
                }
            }
        }
    }
    out.sort();
    out
}

struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % n as u64).unwrap()
    }
}

const TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n";

/// One random mutation; returns its description.
fn mutate(p: &Pair, rng: &mut Rng, step: usize) -> String {
    let all = dirs(&p.root);
    let d = all[rng.next(all.len())].clone();
    let name = format!("n{step}");
    let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755));
    let r = |res: std::io::Result<()>| res.map_or_else(|e| format!(" ({e})"), |()| String::new());
    match rng.next(16) {
        0 | 1 => {
            let res = std::fs::create_dir_all(d.join(&name).join("x"));
            format!("mkdir {}/x{}", d.join(&name).display(), r(res))
        }
        2 => {
            repo(&d.join(&name));
            format!("repo {}", d.join(&name).display())
        }
        3 => {
            // Never through a `.git` symlink made by an earlier step (O_NOFOLLOW).
            let res = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(d.join(".git"))
                .and_then(|mut f| std::io::Write::write_all(&mut f, b"gitdir: ./.bare\n"));
            format!(".git file in {}{}", d.display(), r(res))
        }
        4 => {
            let res = std::os::unix::fs::symlink(p.base.join("nowhere"), d.join(".git"));
            format!(".git symlink in {}{}", d.display(), r(res))
        }
        5 => {
            bare(&d.join(&name));
            format!("bare {}", d.join(&name).display())
        }
        6 => {
            // HEAD content changes without a directory event.
            let head = d.join("HEAD");
            let res = std::fs::write(
                &head,
                if step.is_multiple_of(2) {
                    "junk\n"
                } else {
                    "ref: refs/heads/x\n"
                },
            );
            format!("HEAD content in {}{}", d.display(), r(res))
        }
        7 => {
            let res = std::fs::write(
                d.join("CACHEDIR.TAG"),
                if step.is_multiple_of(3) { "nope" } else { TAG },
            );
            format!("tag {}{}", d.display(), r(res))
        }
        8 => {
            let nm = d.join("node_modules");
            let _ = std::fs::create_dir_all(nm.join("pkg"));
            let res = std::fs::write(nm.join(".package-lock.json"), "{}");
            format!("node_modules in {}{}", d.display(), r(res))
        }
        9 if d != p.root => {
            // Rename an ancestor up to two levels above, then recreate the old path.
            let up = if rng.next(2) == 0 {
                d.parent().unwrap()
            } else {
                &d
            };
            if up == p.root || !up.starts_with(&p.root) {
                return "noop".into();
            }
            let moved = p.root.join(format!("moved{step}"));
            let res = std::fs::rename(up, &moved);
            let _ = std::fs::create_dir_all(up);
            repo(up);
            format!(
                "rename {} -> {} and fake repo{}",
                up.display(),
                moved.display(),
                r(res)
            )
        }
        10 if d != p.root => {
            let res = std::fs::remove_dir_all(&d);
            format!("rm -r {}{}", d.display(), r(res))
        }
        11 if d != p.root => {
            // Swap a directory for a symlink to another one.
            let other = all[rng.next(all.len())].clone();
            let aside = p.base.join(format!("aside{step}"));
            let res =
                std::fs::rename(&d, &aside).and_then(|()| std::os::unix::fs::symlink(&other, &d));
            format!(
                "symlink swap {} -> {}{}",
                d.display(),
                other.display(),
                r(res)
            )
        }
        12 => {
            let res = std::fs::write(d.join(format!("file{step}")), "x");
            format!("file in {}{}", d.display(), r(res))
        }
        13 => {
            // Remove a repository's .git (one known below a tagged directory, maybe).
            let res = std::fs::remove_dir_all(d.join(".git"));
            format!("rm .git in {}{}", d.display(), r(res))
        }
        14 if d != p.root => {
            let res = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o000));
            format!("chmod 000 {}{}", d.display(), r(res))
        }
        _ => {
            let res = std::fs::remove_file(d.join("CACHEDIR.TAG"));
            format!("untag {}{}", d.display(), r(res))
        }
    }
}

#[test]
fn random_mutations_agree_with_the_plain_scan() {
    for seed in [
        0x9e37_79b9_7f4a_7c15_u64,
        0xdead_beef_1234_5678,
        0x0123_4567_89ab_cdef,
    ] {
        let mut p = pair();
        let mut rng = Rng(seed);
        p.agree("start");
        for step in 0..120 {
            let what = mutate(&p, &mut rng, step);
            p.agree(&format!("step {step}: {what}"));
            if step.is_multiple_of(17) {
                // A query with nothing changed in between.
                p.agree(&format!("step {step} again"));
            }
        }
    }
}

#[test]
fn nothing_changed_is_answered_without_walking() {
    let mut p = pair();
    repo(&p.root.join("a/b"));
    std::fs::create_dir_all(p.root.join("c/d/e")).unwrap();
    let first = p.agree("start").unwrap();
    assert!(first.listed > 0);
    let second = p.agree("again").unwrap();
    assert_eq!((second.listed, second.cached), (0, 0), "the O(1) path");
    // A file nobody's listing records changes nothing.
    std::fs::write(p.root.join("c/d/notes.txt"), "x").unwrap();
    let third = p.agree("a file").unwrap();
    assert_eq!((third.listed, third.cached), (0, 0));
    // A directory made and removed again (a launch's mount point): the root is listed
    // again on its own, found unchanged, and the last outcome stands.
    std::fs::create_dir(p.root.join(".codex")).unwrap();
    std::fs::remove_dir(p.root.join(".codex")).unwrap();
    let again = p.agree("mkdir + rmdir").unwrap();
    assert_eq!((again.listed, again.cached), (0, 0), "the middle path");
    // A new directory: only it and its parent are listed.
    std::fs::create_dir(p.root.join("c/d/f")).unwrap();
    let fourth = p.agree("mkdir").unwrap();
    assert_eq!(fourth.listed, 2, "{fourth:?}");
    // One in the root: the root stays watched, its other children stay trusted.
    std::fs::create_dir(p.root.join("g")).unwrap();
    let root_change = p.agree("mkdir in the root").unwrap();
    assert_eq!(root_change.listed, 2, "{root_change:?}");
    repo(&p.root.join("c/d/f"));
    let fifth = p.agree("repo").unwrap();
    assert!(fifth.found.contains(&p.root.join("c/d/f/.git")));
}

#[test]
fn a_parent_renamed_two_levels_up_and_recreated_is_seen() {
    let mut p = pair();
    let inner = p.root.join("a/b/c");
    std::fs::create_dir_all(&inner).unwrap();
    p.agree("start");
    p.agree("again");
    std::fs::rename(p.root.join("a"), p.base.join("outside")).unwrap();
    repo(&inner);
    let got = p.agree("rename and recreate").unwrap();
    assert_eq!(got.found, [inner.join(".git")]);
}

#[test]
fn a_queue_overflow_and_untrusting_everything_fall_back_to_listing() {
    let mut p = pair();
    std::fs::create_dir_all(p.root.join("busy")).unwrap();
    p.agree("start");
    // More events than the queue holds (fs.inotify.max_queued_events, 16384 by default).
    let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16384);
    for i in 0..=limit / 2 + 10 {
        std::fs::create_dir(p.root.join(format!("busy/d{i}"))).unwrap();
        std::fs::remove_dir(p.root.join(format!("busy/d{i}"))).unwrap();
    }
    repo(&p.root.join("busy/late"));
    let got = p.agree("overflow").unwrap();
    assert!(got.found.contains(&p.root.join("busy/late/.git")));
    p.index.untrust_all();
    repo(&p.root.join("later"));
    let got = p.agree("untrusted").unwrap();
    assert!(got.listed > 0 && got.found.contains(&p.root.join("later/.git")));
}

#[test]
fn a_bind_mount_over_a_subdirectory_is_seen() {
    if crate::fs_kind::effective_uid() != 0 {
        return; // mounting needs root
    }
    let mut p = pair();
    let target = p.root.join("sub");
    std::fs::create_dir_all(&target).unwrap();
    let source = p.base.join("elsewhere");
    repo(&source.join("inner"));
    p.agree("start");
    p.agree("again");
    let mounted = std::process::Command::new("mount")
        .arg("--bind")
        .arg(&source)
        .arg(&target)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        return; // no mount permission in this container
    }
    /// Undoes the mount even when an assertion fails.
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let mount = Unmount(target.clone());
    let got = p.agree("bind mount");
    assert!(got.unwrap().found.contains(&target.join("inner/.git")));
    drop(mount);
    p.agree("unmounted");
}

#[test]
fn a_daemon_started_mid_launch_inherits_no_descriptor_of_it() {
    let dir = tempfile::tempdir().unwrap();
    // Stands in for `airlock __nested-index SOCKET`: lists its descriptors into SOCKET.
    let exe = dir.path().join("fake-daemon");
    std::fs::write(
        &exe,
        "#!/bin/sh\nls /proc/self/fd > \"$2.tmp\" && mv \"$2.tmp\" \"$2\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let listing = dir.path().join("fds");
    // What a launch holds inheritable while its plan runs (an early bubblewrap's pipe).
    let (reader, _writer) = std::io::pipe().unwrap();
    crate::fds::make_inheritable(&reader).unwrap();
    client::spawn_daemon(&exe, &listing);
    let mut waited = 0;
    while !listing.exists() && waited < 500 {
        std::thread::sleep(Duration::from_millis(10));
        waited += 1;
    }
    let fds = std::fs::read_to_string(&listing).unwrap();
    let fds: Vec<&str> = fds.split_whitespace().collect();
    // 0-2, and the one `ls` opened to list /proc/self/fd.
    assert!(fds.len() <= 4, "the daemon inherited descriptors: {fds:?}");
    drop(reader);
}
