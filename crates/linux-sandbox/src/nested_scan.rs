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
//!   build output, it is the cache's). The record of that first scan names the tag file
//!   it was made under ([`crate::scan_cache::Marker`]) and holds only while that very file
//!   is there: a tag removed and put back is a first sighting again, so a repository made
//!   while the directory was untagged is found even when no scan saw the untagged period
//!   (the index daemon answered those launches). Without a usable cache every tag is a
//!   first sighting, so nothing is pruned.
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

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::nested_walk::{self, Listing, ListingSource, Opened, Seen, ctime_of, lstat_dir};
use crate::resolve::ResolveError;
use crate::scan_cache::{
    self, CacheView, HAS_GIT, HAS_HEAD, HAS_PACKAGE_MARKER, HAS_TAG, LISTING_STALE, TAGGED_SCANNED,
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
    /// Directories not entered because they are on a pseudo filesystem, sorted.
    pub pseudo: Vec<PathBuf>,
    /// Tagged directories whose subtree was not walked (known repositories kept), sorted.
    pub pruned: Vec<PathBuf>,
    /// Directories listed with `getdents`.
    pub listed: usize,
    /// Directories whose listing came from the cache.
    pub cached: usize,
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

/// The change time before which a directory counts as settled: `recent` before now.
pub(crate) fn settled_limit(recent: Duration) -> (i64, u32) {
    let started = now_ctime();
    let limit_nanos = i128::from(started.0) * 1_000_000_000 + i128::from(started.1)
        - i128::try_from(recent.as_nanos()).unwrap_or(i128::MAX / 4);
    (
        i64::try_from(limit_nanos.div_euclid(1_000_000_000)).unwrap_or(i64::MIN),
        u32::try_from(limit_nanos.rem_euclid(1_000_000_000)).unwrap_or(0),
    )
}

/// Listings from the disk cache: reused while the directory's identity and change time
/// match and it was not changed too recently.
struct DiskSource {
    old: Option<CacheView>,
    limit: (i64, u32),
}

impl ListingSource for DiskSource {
    fn open(&mut self, dir: &Path, parent_dev: Option<u64>) -> Result<Opened, ResolveError> {
        use std::os::unix::fs::MetadataExt as _;
        let meta = match lstat_dir(dir, parent_dev)? {
            Ok(meta) => meta,
            Err(opened) => return Ok(opened),
        };
        let key = (meta.dev(), meta.ino());
        let ctime = ctime_of(&meta);
        let cached = self.old.as_ref().and_then(|view| view.get(key));
        let listing = cached
            .as_ref()
            .filter(|e| e.ctime == ctime && e.flags & LISTING_STALE == 0)
            .map(|e| Listing {
                flags: e.flags & (HAS_GIT | HAS_TAG | HAS_PACKAGE_MARKER | HAS_HEAD),
                children: e.children.iter().map(|c| c.to_vec()).collect(),
                known: e.known.iter().map(|c| c.to_vec()).collect(),
            });
        Ok(Opened::Dir(Seen {
            key,
            ctime,
            uid: meta.uid(),
            was_scanned_tagged: cached
                .as_ref()
                .is_some_and(|e| e.flags & TAGGED_SCANNED != 0),
            marker: cached.as_ref().map_or((0, 0, 0), |e| e.marker),
            known: cached
                .as_ref()
                .map(|e| e.known.iter().map(|c| c.to_vec()).collect())
                .unwrap_or_default(),
            listing,
        }))
    }

    fn list(&mut self, dir: &Path, seen: &Seen) -> Result<Option<Listing>, ResolveError> {
        nested_walk::list(dir, dir, seen.uid)
    }

    fn stale(&self, ctime: (i64, u32)) -> bool {
        ctime >= self.limit
    }
}

/// Finds the repositories nested below `root` (module docs), without the index.
///
/// # Errors
/// [`ResolveError::Unreadable`] for a directory under `root` that cannot be listed.
pub fn scan_nested_repositories(
    root: &Path,
    options: &ScanOptions,
) -> Result<ScanOutcome, ResolveError> {
    let old = options
        .cache_dir
        .as_deref()
        .and_then(|dir| scan_cache::load(dir, root));
    let old_len = old.as_ref().map_or(0, CacheView::len);
    let mut source = DiskSource {
        old,
        limit: settled_limit(options.recent),
    };
    let result = nested_walk::walk(root, &options.skip, &mut source)?;
    if let Some(dir) = options.cache_dir.as_deref()
        && (result.dirty || result.next.len() != old_len)
        && let Some(bytes) = scan_cache::encode(root, result.next.iter().map(|(k, e)| (*k, e)))
    {
        scan_cache::store(dir, root, &bytes);
    }
    Ok(result.out)
}

#[cfg(test)]
#[path = "nested_scan_tests.rs"]
mod tests;
