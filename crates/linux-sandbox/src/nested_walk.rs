//! The classification walk shared by the plain nested-repository scan (listings from the
//! disk cache, [`crate::nested_scan`]) and the inotify-driven index
//! ([`crate::nested_index`]): one `visit` decides what a directory is (repository,
//! bare-form git directory, tagged cache, pseudo filesystem) whatever source its listing
//! came from, so both give the same outcome for the same tree and history.
//!
//! A [`ListingSource`] says what a directory is (`lstat`, or a listing it vouches for)
//! and lists it when it has no listing to offer. Everything that depends on file
//! *content* — `is_git_directory` of a directory holding `HEAD`, a `CACHEDIR.TAG`'s
//! signature, a package manager's marker, the repositories kept below a pruned tagged
//! directory — is read afresh by the walk each time and recorded as a [`Check`], so that
//! the index can tell whether the last outcome still holds without walking.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use crate::fs_kind::{can_search, effective_uid, pseudo_fs_name};
use crate::nested_scan::{CACHEDIR_SIGNATURE, PACKAGE_TREE_MARKERS, ScanOutcome};
use crate::resolve::ResolveError;
use crate::scan_cache::{
    HAS_GIT, HAS_HEAD, HAS_PACKAGE_MARKER, HAS_TAG, LISTING_STALE, Marker, OwnedEntry,
    TAGGED_SCANNED,
};

/// What one listing of a directory says (the flags of [`crate::scan_cache`] and the names
/// of the child directories).
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    /// [`HAS_GIT`], [`HAS_TAG`], [`HAS_HEAD`], [`HAS_PACKAGE_MARKER`].
    pub flags: u8,
    /// Child directories (not symlinks, not the special names).
    pub children: Vec<Vec<u8>>,
    /// Filled by the walk: repositories known below a tagged directory.
    pub known: Vec<Vec<u8>>,
}

/// A directory as its source sees it before it is classified.
pub(crate) struct Seen {
    /// `(st_dev, st_ino)`.
    pub key: (u64, u64),
    /// `(st_ctime, st_ctime_nsec)` (as recorded with the listing for a reused one).
    pub ctime: (i64, u32),
    /// Owner, for the "another user's private directory" rule of [`list`].
    pub uid: u32,
    /// A listing the source vouches for (the walk then does not list).
    pub listing: Option<Listing>,
    /// The previous entry for `key` had [`TAGGED_SCANNED`].
    pub was_scanned_tagged: bool,
    /// The marker file the previous entry was scanned under ([`Marker`]).
    pub marker: Marker,
    /// The previous entry's known repositories.
    pub known: Vec<Vec<u8>>,
}

/// What [`ListingSource::open`] found at a path.
pub(crate) enum Opened {
    /// Vanished, or not a directory: nothing to do.
    Skip,
    /// The root of a pseudo filesystem: reported, not entered.
    Pseudo,
    /// A directory.
    Dir(Seen),
}

/// Where the walk gets directories from.
pub(crate) trait ListingSource {
    /// What `dir` is (`parent_dev`: the device of the directory it was found in).
    fn open(&mut self, dir: &Path, parent_dev: Option<u64>) -> Result<Opened, ResolveError>;
    /// Lists `dir`, which [`Self::open`] offered no listing for; `None` when it vanished
    /// or no process of this user can enter it.
    fn list(&mut self, dir: &Path, seen: &Seen) -> Result<Option<Listing>, ResolveError>;
    /// Whether a listing of a directory with this change time must not be reused from the
    /// disk cache ([`LISTING_STALE`]).
    fn stale(&self, ctime: (i64, u32)) -> bool;
}

/// A content-dependent fact the walk read, with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// `is_git_directory` of a directory holding `HEAD` (fail closed: an error is `true`).
    GitDir(PathBuf, bool),
    /// [`valid_tag`].
    Tag(PathBuf, bool),
    /// [`package_tree`].
    Package(PathBuf, bool),
    /// Whether a repository known below a pruned tagged directory still exists.
    Exists(PathBuf, bool),
}

impl Check {
    /// Whether the fact still has the recorded value.
    pub fn holds(&self) -> bool {
        match self {
            Self::GitDir(dir, was) => git_dir(dir) == *was,
            Self::Tag(dir, was) => valid_tag(dir) == *was,
            Self::Package(dir, was) => package_tree(dir) == *was,
            Self::Exists(path, was) => std::fs::symlink_metadata(path).is_ok() == *was,
        }
    }
}

/// What a walk produced.
pub(crate) struct WalkResult {
    /// The outcome (`found` sorted and deduplicated, `pseudo` and `pruned` sorted).
    pub out: ScanOutcome,
    /// The entries of every directory visited, to remember for the next walk.
    pub next: Vec<((u64, u64), OwnedEntry)>,
    /// Something differs from the previous entries (a disk cache must be written).
    pub dirty: bool,
    /// The tagged-directory state changed (first sightings, tags removed, known
    /// repositories gone): the next walk of the same tree may differ from this one.
    pub tag_state_changed: bool,
    /// The content facts read, in order.
    pub checks: Vec<Check>,
}

/// Whether `dir` is a `node_modules` tree marked as a package manager's (a regular file,
/// not a symlink, named in [`PACKAGE_TREE_MARKERS`]).
pub(crate) fn package_tree(dir: &Path) -> bool {
    dir.file_name().is_some_and(|name| name == "node_modules")
        && PACKAGE_TREE_MARKERS.iter().any(|marker| {
            std::fs::symlink_metadata(dir.join(marker)).is_ok_and(|meta| meta.is_file())
        })
}

/// The identity of the files that can make `dir` tagged ([`Marker`]): an FNV-1a hash of
/// the name, inode and change time of each of `CACHEDIR.TAG` and the
/// [`PACKAGE_TREE_MARKERS`] that is a regular file, and how many there are; zeros when
/// there is none. Any of them removed, added or replaced gives another identity (a record
/// made under one marker cannot come back by removing another one added since).
fn marker_of(dir: &Path) -> Marker {
    use std::os::unix::fs::MetadataExt as _;
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = FNV_OFFSET;
    let mut count: i64 = 0;
    for name in std::iter::once("CACHEDIR.TAG").chain(PACKAGE_TREE_MARKERS) {
        let Some(meta) = std::fs::symlink_metadata(dir.join(name))
            .ok()
            .filter(std::fs::Metadata::is_file)
        else {
            continue;
        };
        count += 1;
        let fields = [
            name.as_bytes(),
            &meta.ino().to_le_bytes(),
            &meta.ctime().to_le_bytes(),
            &meta.ctime_nsec().to_le_bytes(),
        ];
        for byte in fields.iter().flat_map(|f| f.iter()) {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME);
        }
    }
    if count == 0 {
        (0, 0, 0)
    } else {
        (hash, count, 0)
    }
}

/// Whether `dir` holds a valid `CACHEDIR.TAG` (a regular file starting with
/// [`CACHEDIR_SIGNATURE`]).
pub(crate) fn valid_tag(dir: &Path) -> bool {
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

/// git's own test; one whose `HEAD` cannot be judged without blocking (a FIFO) counts
/// (fail closed).
fn git_dir(dir: &Path) -> bool {
    airlock_permissions::is_git_directory(dir, &airlock_permissions::GitDirEnv::default())
        .unwrap_or(true)
}

/// An error that means "gone since it was seen" (skipped, never a failure).
pub(crate) fn is_vanished(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// `lstat` of `dir` classified for the walk: `None` for [`Opened::Skip`] and
/// [`Opened::Pseudo`] (returned in the `Err` side of the inner result).
pub(crate) fn lstat_dir(
    dir: &Path,
    parent_dev: Option<u64>,
) -> Result<Result<std::fs::Metadata, Opened>, ResolveError> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if is_vanished(&e) => return Ok(Err(Opened::Skip)),
        Err(source) => {
            return Err(ResolveError::Unreadable {
                dir: dir.to_path_buf(),
                source,
            });
        }
    };
    if !meta.is_dir() {
        return Ok(Err(Opened::Skip)); // replaced by a non-directory: not followed
    }
    if parent_dev != Some(meta.dev()) && pseudo_fs_name(dir).is_some() {
        return Ok(Err(Opened::Pseudo));
    }
    Ok(Ok(meta))
}

/// The change time of `meta` as the cache records it.
pub(crate) fn ctime_of(meta: &std::fs::Metadata) -> (i64, u32) {
    (meta.ctime(), u32::try_from(meta.ctime_nsec()).unwrap_or(0))
}

/// Lists `dir` by reading `read_from` (the same directory: `dir` itself, or a
/// `/proc/self/fd` name of a descriptor open on it); errors name `dir`. `uid` is the
/// directory's owner.
pub(crate) fn list(
    dir: &Path,
    read_from: &Path,
    uid: u32,
) -> Result<Option<Listing>, ResolveError> {
    let entries = match std::fs::read_dir(read_from) {
        Ok(entries) => entries,
        Err(e) if is_vanished(&e) => return Ok(None),
        Err(e)
            if e.kind() == std::io::ErrorKind::PermissionDenied
                && uid != effective_uid()
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

/// Whether a name in a directory matters to its listing when it is not a directory: the
/// names [`list`] records as flags.
pub(crate) fn special_name(name: &[u8]) -> bool {
    name == b".git"
        || name == b"CACHEDIR.TAG"
        || name == b"HEAD"
        || PACKAGE_TREE_MARKERS.iter().any(|m| name == m.as_bytes())
}

struct Walk<'a, S> {
    root: &'a Path,
    skip: &'a [PathBuf],
    source: &'a mut S,
    result: WalkResult,
    /// Tagged directories seen for the first time: (path, index in `next`).
    first_tagged: Vec<(PathBuf, usize)>,
}

impl<S: ListingSource> Walk<'_, S> {
    fn record(&mut self, check: Check) -> bool {
        let value = match &check {
            Check::GitDir(_, v) | Check::Tag(_, v) | Check::Package(_, v) | Check::Exists(_, v) => {
                *v
            }
        };
        self.result.checks.push(check);
        value
    }

    /// Visits `dir`; pushes the child directories to walk next (with `dir`'s device).
    fn visit(
        &mut self,
        dir: &Path,
        parent_dev: Option<u64>,
        stack: &mut Vec<(PathBuf, Option<u64>)>,
    ) -> Result<(), ResolveError> {
        let seen = match self.source.open(dir, parent_dev)? {
            Opened::Skip => return Ok(()),
            Opened::Pseudo => {
                self.result.out.pseudo.push(dir.to_path_buf());
                return Ok(());
            }
            Opened::Dir(seen) => seen,
        };
        let was_scanned_tagged = seen.was_scanned_tagged;
        let mut listing = if let Some(listing) = seen.listing.clone() {
            self.result.out.cached += 1;
            listing
        } else {
            self.result.dirty = true;
            self.result.out.listed += 1;
            let Some(mut listing) = self.source.list(dir, &seen)? else {
                return Ok(());
            };
            listing.known.clone_from(&seen.known);
            listing
        };
        if listing.flags & HAS_GIT != 0 && dir != self.root {
            self.result.out.found.push(dir.join(".git"));
        }
        // A bare-form git directory is a repository like a `.git` (its content checked
        // each time: `HEAD` may change without the directory changing).
        let bare_form = listing.flags & HAS_HEAD != 0
            && dir != self.root
            && self.record(Check::GitDir(dir.to_path_buf(), git_dir(dir)));
        if bare_form {
            self.result.out.found.push(dir.to_path_buf());
        }
        let mut flags = listing.flags;
        if self.source.stale(seen.ctime) {
            flags |= LISTING_STALE;
        }
        let tagged = (flags & HAS_TAG != 0
            && self.record(Check::Tag(dir.to_path_buf(), valid_tag(dir))))
            || (flags & HAS_PACKAGE_MARKER != 0
                && self.record(Check::Package(dir.to_path_buf(), package_tree(dir))));
        // A walk that skips a deeper writable root inside this directory does not see the
        // repositories there, and the disk cache is shared by walks with other skip lists:
        // no record is made or used then (walked as untagged). Red-team finding: a record
        // made from `$TMPDIR/proj`'s launch hid `$TMPDIR/proj/.git` from the next one.
        let tagged = tagged && !self.skip.iter().any(|s| s != dir && s.starts_with(dir));
        let marker = if tagged { marker_of(dir) } else { (0, 0, 0) };
        // A record made under another marker file (the tag was removed, and maybe put back,
        // since) says nothing about what was created meanwhile: scanned again.
        let record_holds = was_scanned_tagged && marker != (0, 0, 0) && seen.marker == marker;
        let mut descend = !bare_form;
        if tagged && record_holds {
            // Seen tagged before and scanned then: keep what was found, walk no further.
            let before = listing.known.len();
            let known = std::mem::take(&mut listing.known);
            for rel in known {
                let path = dir.join(OsStr::from_bytes(&rel));
                let exists = std::fs::symlink_metadata(&path).is_ok();
                self.record(Check::Exists(path.clone(), exists));
                if exists {
                    self.result.out.found.push(path);
                    listing.known.push(rel);
                }
            }
            let changed = before != listing.known.len();
            self.result.dirty |= changed;
            self.result.tag_state_changed |= changed;
            self.result.out.pruned.push(dir.to_path_buf());
            flags |= TAGGED_SCANNED;
            descend = false;
        } else if tagged {
            self.first_tagged
                .push((dir.to_path_buf(), self.result.next.len()));
            flags |= TAGGED_SCANNED;
            self.result.dirty = true;
            self.result.tag_state_changed = true;
        } else {
            self.result.dirty |= was_scanned_tagged;
            self.result.tag_state_changed |= was_scanned_tagged;
            listing.known.clear();
        }
        if descend {
            for name in &listing.children {
                let child = dir.join(OsStr::from_bytes(name));
                if !self.skip.contains(&child) {
                    stack.push((child, Some(seen.key.0)));
                }
            }
        }
        self.result.next.push((
            seen.key,
            OwnedEntry {
                ctime: seen.ctime,
                flags,
                marker,
                children: listing.children,
                known: listing.known,
            },
        ));
        Ok(())
    }
}

/// Walks `root` (not entering `skip`) with listings from `source` (module docs).
///
/// # Errors
/// [`ResolveError::Unreadable`] for a directory under `root` that cannot be listed.
pub(crate) fn walk<S: ListingSource>(
    root: &Path,
    skip: &[PathBuf],
    source: &mut S,
) -> Result<WalkResult, ResolveError> {
    let mut walk = Walk {
        root,
        skip,
        source,
        result: WalkResult {
            out: ScanOutcome::default(),
            next: Vec::new(),
            dirty: false,
            tag_state_changed: false,
            checks: Vec::new(),
        },
        first_tagged: Vec::new(),
    };
    let mut stack: Vec<(PathBuf, Option<u64>)> = vec![(root.to_path_buf(), None)];
    while let Some((dir, parent_dev)) = stack.pop() {
        walk.visit(&dir, parent_dev, &mut stack)?;
    }
    let Walk {
        mut result,
        first_tagged,
        ..
    } = walk;
    for (dir, index) in first_tagged {
        result.next[index].1.known = result
            .out
            .found
            .iter()
            .filter_map(|f| f.strip_prefix(&dir).ok())
            .map(|rel| rel.as_os_str().as_bytes().to_vec())
            .collect();
    }
    result.out.found.sort();
    result.out.found.dedup();
    result.out.pseudo.sort();
    result.out.pruned.sort();
    Ok(result)
}
