//! Finding the repositories nested below a writable root (issue 11 item 7 and "Launch
//! speed in real trees"): every `.git` directory, pointer file or symlink at any depth,
//! and every directory that is itself a git directory (a bare repository, or anything
//! git's `is_git_directory` accepts: red-team F10; git uses it from inside it), so that
//! the resolver can keep each one read-only.
//!
//! The walk has no depth limit, does not follow symlinks, does not enter `.git`
//! directories or bare-form git directories, deeper writable roots (scanned as roots of their own) or pseudo
//! filesystems (`statfs` magic, see [`crate::fs_kind`]; checked wherever `st_dev` changes).
//! Two things keep it cheap in big trees:
//! - the [`crate::scan_cache`]: a directory whose identity and change time match the cache
//!   is not listed again (one `lstat` instead of open + `getdents` + close);
//! - a directory tagged with a valid `CACHEDIR.TAG` (Cache Directory Tagging
//!   specification: a regular file whose content starts with the signature
//!   [`CACHEDIR_SIGNATURE`]) is scanned fully the first time it is seen tagged, and only
//!   the repositories found then are kept protected afterwards. A tag is a file the
//!   command can write, so tagging a directory never hides a repository that was already
//!   there; a repository created inside a tagged directory later is not found (like any
//!   build output, it is the cache's). Without a usable cache every tag is a first
//!   sighting, so nothing is pruned.
//! - a `node_modules` directory holding a package manager's own record of what it installed
//!   there ([`PACKAGE_TREE_MARKERS`]: npm's `.package-lock.json`, pnpm's `.modules.yaml`,
//!   Yarn's `.yarn-integrity` / `.yarn-state.yml`) is a tree owned by that tool, by content
//!   like a tagged cache, and is treated exactly like one: scanned fully when first seen so,
//!   its repositories found then stay protected. npm does not write `CACHEDIR.TAG`, and a
//!   JavaScript project's `node_modules` is most of its directories.
//!
//! Fail closed: a directory that cannot be listed (`chmod 000` by the command) stops the
//! launch — except one this user can neither search nor change the mode of (another
//! user's private directory under `/tmp`): no process of this user, sandboxed or not, can
//! reach anything below it, git included. Entries that vanish while the walk runs are
//! skipped; nothing that exists is.

use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::fs_kind::{can_search, effective_uid, pseudo_fs_name};
use crate::resolve::ResolveError;
use crate::scan_cache::{
    self, CacheView, HAS_GIT, HAS_HEAD, HAS_PACKAGE_MARKER, HAS_TAG, LISTING_STALE, OwnedEntry,
    TAGGED_SCANNED,
};

/// First bytes of a valid `CACHEDIR.TAG` (<https://bford.info/cachedir/>).
pub const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// Files a package manager writes inside the `node_modules` tree it manages (npm >= 7,
/// pnpm, Yarn classic, Yarn Berry's `node-modules` linker): their presence as a regular
/// file marks that `node_modules` as the tool's tree.
pub const PACKAGE_TREE_MARKERS: [&str; 4] = [
    ".package-lock.json",
    ".modules.yaml",
    ".yarn-integrity",
    ".yarn-state.yml",
];

/// Whether `dir` is a `node_modules` tree marked as a package manager's (a regular file,
/// not a symlink, named in [`PACKAGE_TREE_MARKERS`]).
fn package_tree(dir: &Path) -> bool {
    dir.file_name().is_some_and(|name| name == "node_modules")
        && PACKAGE_TREE_MARKERS.iter().any(|marker| {
            std::fs::symlink_metadata(dir.join(marker)).is_ok_and(|meta| meta.is_file())
        })
}

/// How one scan runs.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Directories not to enter (deeper writable roots; canonical).
    pub skip: Vec<PathBuf>,
    /// A trusted cache directory (see [`scan_cache::usable_cache_dir`]), or none.
    pub cache_dir: Option<PathBuf>,
    /// Directories changed less than this before the scan are not served from the cache.
    pub recent: Duration,
}

/// What a scan found, with counters for tests and benchmarks.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScanOutcome {
    /// Nested `.git` entries (not `root/.git`) and bare-form git directories (not `root`),
    /// sorted.
    pub found: Vec<PathBuf>,
    /// Directories not entered because they are on a pseudo filesystem.
    pub pseudo: Vec<PathBuf>,
    /// Tagged directories whose subtree was not walked (known repositories kept).
    pub pruned: Vec<PathBuf>,
    /// Directories listed with `getdents`.
    pub listed: usize,
    /// Directories whose listing came from the cache.
    pub cached: usize,
}

struct Listing {
    flags: u8,
    children: Vec<Vec<u8>>,
    known: Vec<Vec<u8>>,
}

fn now_ctime() -> (i64, u32) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    (
        i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
        now.subsec_nanos(),
    )
}

fn older_than(ctime: (i64, u32), limit: (i64, u32)) -> bool {
    ctime < limit
}

fn valid_tag(dir: &Path) -> bool {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dir.join("CACHEDIR.TAG"))
    else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = Vec::with_capacity(CACHEDIR_SIGNATURE.len());
    file.take(CACHEDIR_SIGNATURE.len() as u64)
        .read_to_end(&mut head)
        .is_ok()
        && head == CACHEDIR_SIGNATURE
}

fn is_vanished(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

fn list(dir: &Path, meta: &std::fs::Metadata) -> Result<Option<Listing>, ResolveError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if is_vanished(&e) => return Ok(None),
        Err(e)
            if e.kind() == std::io::ErrorKind::PermissionDenied
                && meta.uid() != effective_uid()
                && !can_search(dir) =>
        {
            return Ok(None);
        }
        Err(source) => {
            return Err(ResolveError::Unreadable {
                dir: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut out = Listing {
        flags: 0,
        children: Vec::new(),
        known: Vec::new(),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) if is_vanished(&e) => continue,
            Err(source) => {
                return Err(ResolveError::Unreadable {
                    dir: dir.to_path_buf(),
                    source,
                });
            }
        };
        let Ok(kind) = entry.file_type() else {
            continue; // vanished since the listing
        };
        let name = entry.file_name();
        if name == ".git" {
            if kind.is_dir() || kind.is_file() || kind.is_symlink() {
                out.flags |= HAS_GIT;
            }
        } else if name == "CACHEDIR.TAG" {
            out.flags |= HAS_TAG;
        } else if name == "HEAD" {
            out.flags |= HAS_HEAD;
        } else if PACKAGE_TREE_MARKERS.iter().any(|marker| name == *marker) {
            out.flags |= HAS_PACKAGE_MARKER;
        } else if kind.is_dir() {
            out.children.push(name.as_bytes().to_vec());
        }
    }
    Ok(Some(out))
}

struct Walk<'a> {
    root: &'a Path,
    options: &'a ScanOptions,
    old: Option<CacheView>,
    next: Vec<((u64, u64), OwnedEntry)>,
    dirty: bool,
    limit: (i64, u32),
    out: ScanOutcome,
    /// Tagged directories seen for the first time: (path, index in `next`).
    first_tagged: Vec<(PathBuf, usize)>,
}

impl Walk<'_> {
    /// Visits `dir`; pushes the child directories to walk next (with `dir`'s device).
    fn visit(
        &mut self,
        dir: &Path,
        parent_dev: Option<u64>,
        stack: &mut Vec<(PathBuf, Option<u64>)>,
    ) -> Result<(), ResolveError> {
        let meta = match std::fs::symlink_metadata(dir) {
            Ok(meta) => meta,
            Err(e) if is_vanished(&e) => return Ok(()),
            Err(source) => {
                return Err(ResolveError::Unreadable {
                    dir: dir.to_path_buf(),
                    source,
                });
            }
        };
        if !meta.is_dir() {
            return Ok(()); // replaced by a non-directory: not followed
        }
        if parent_dev != Some(meta.dev()) && pseudo_fs_name(dir).is_some() {
            self.out.pseudo.push(dir.to_path_buf());
            return Ok(());
        }
        let key = (meta.dev(), meta.ino());
        let ctime = (meta.ctime(), u32::try_from(meta.ctime_nsec()).unwrap_or(0));
        let cached = self.old.as_ref().and_then(|view| view.get(key));
        let was_scanned_tagged = cached
            .as_ref()
            .is_some_and(|e| e.flags & TAGGED_SCANNED != 0);
        let hit = cached
            .as_ref()
            .filter(|e| e.ctime == ctime && e.flags & LISTING_STALE == 0)
            .map(|e| Listing {
                flags: e.flags & (HAS_GIT | HAS_TAG | HAS_PACKAGE_MARKER | HAS_HEAD),
                children: e.children.iter().map(|c| c.to_vec()).collect(),
                known: e.known.iter().map(|c| c.to_vec()).collect(),
            });
        let mut listing = match hit {
            Some(listing) => {
                self.out.cached += 1;
                listing
            }
            None => {
                self.dirty = true;
                self.out.listed += 1;
                let Some(mut listing) = list(dir, &meta)? else {
                    return Ok(());
                };
                listing.known = cached
                    .as_ref()
                    .map(|e| e.known.iter().map(|c| c.to_vec()).collect())
                    .unwrap_or_default();
                listing
            }
        };
        drop(cached);
        if listing.flags & HAS_GIT != 0 && dir != self.root {
            self.out.found.push(dir.join(".git"));
        }
        // A bare-form git directory is a repository like a `.git` (its content checked
        // each time: `HEAD` may change without the directory changing); one whose `HEAD`
        // cannot be judged without blocking (a FIFO) is kept too (fail closed).
        let bare_form = listing.flags & HAS_HEAD != 0
            && dir != self.root
            && airlock_permissions::is_git_directory(
                dir,
                &airlock_permissions::GitDirEnv::default(),
            )
            .unwrap_or(true);
        if bare_form {
            self.out.found.push(dir.to_path_buf());
        }
        let mut flags = listing.flags;
        if !older_than(ctime, self.limit) {
            flags |= LISTING_STALE;
        }
        let tagged = (flags & HAS_TAG != 0 && valid_tag(dir))
            || (flags & HAS_PACKAGE_MARKER != 0 && package_tree(dir));
        let mut descend = !bare_form;
        if tagged && was_scanned_tagged {
            // Seen tagged before and scanned then: keep what was found, walk no further.
            let before = listing.known.len();
            listing.known.retain(|rel| {
                std::fs::symlink_metadata(dir.join(std::ffi::OsStr::from_bytes(rel))).is_ok()
            });
            self.dirty |= before != listing.known.len();
            for rel in &listing.known {
                self.out
                    .found
                    .push(dir.join(std::ffi::OsStr::from_bytes(rel)));
            }
            self.out.pruned.push(dir.to_path_buf());
            flags |= TAGGED_SCANNED;
            descend = false;
        } else if tagged {
            self.first_tagged.push((dir.to_path_buf(), self.next.len()));
            flags |= TAGGED_SCANNED;
            self.dirty = true;
        } else {
            self.dirty |= was_scanned_tagged;
            listing.known.clear();
        }
        if descend {
            for name in &listing.children {
                let child = dir.join(std::ffi::OsStr::from_bytes(name));
                if !self.options.skip.contains(&child) {
                    stack.push((child, Some(meta.dev())));
                }
            }
        }
        self.next.push((
            key,
            OwnedEntry {
                ctime,
                flags,
                children: listing.children,
                known: listing.known,
            },
        ));
        Ok(())
    }
}

/// Finds the repositories nested below `root` (module docs).
///
/// # Errors
/// [`ResolveError::Unreadable`] for a directory under `root` that cannot be listed.
pub fn scan_nested_repositories(
    root: &Path,
    options: &ScanOptions,
) -> Result<ScanOutcome, ResolveError> {
    let started = now_ctime();
    let recent = options.recent;
    let limit_nanos = i128::from(started.0) * 1_000_000_000 + i128::from(started.1)
        - i128::try_from(recent.as_nanos()).unwrap_or(i128::MAX / 4);
    let limit = (
        i64::try_from(limit_nanos.div_euclid(1_000_000_000)).unwrap_or(i64::MIN),
        u32::try_from(limit_nanos.rem_euclid(1_000_000_000)).unwrap_or(0),
    );
    let old = options
        .cache_dir
        .as_deref()
        .and_then(|dir| scan_cache::load(dir, root));
    let old_len = old.as_ref().map_or(0, CacheView::len);
    let mut walk = Walk {
        root,
        options,
        old,
        next: Vec::new(),
        dirty: false,
        limit,
        out: ScanOutcome::default(),
        first_tagged: Vec::new(),
    };
    let mut stack: Vec<(PathBuf, Option<u64>)> = vec![(root.to_path_buf(), None)];
    while let Some((dir, parent_dev)) = stack.pop() {
        walk.visit(&dir, parent_dev, &mut stack)?;
    }
    let Walk {
        mut next,
        dirty,
        mut out,
        first_tagged,
        ..
    } = walk;
    for (dir, index) in first_tagged {
        next[index].1.known = out
            .found
            .iter()
            .filter_map(|f| f.strip_prefix(&dir).ok())
            .map(|rel| rel.as_os_str().as_bytes().to_vec())
            .collect();
    }
    if let Some(dir) = options.cache_dir.as_deref()
        && (dirty || next.len() != old_len)
        && let Some(bytes) = scan_cache::encode(root, next.iter().map(|(k, e)| (*k, e)))
    {
        scan_cache::store(dir, root, &bytes);
    }
    out.found.sort();
    out.found.dedup();
    Ok(out)
}

#[cfg(test)]
#[path = "nested_scan_tests.rs"]
mod tests;
