//! The walk's listing source when the index answers (see [`super::state`] for when a
//! listing is trusted): a trusted directory's listing comes from memory without a system
//! call; any other directory is `lstat`ed as the plain scan does, opened
//! (`O_PATH | O_NOFOLLOW | O_DIRECTORY`), compared by `fstat`, watched through
//! `/proc/self/fd/N` and listed through the same name, after the watch.

use std::collections::HashMap;
use std::os::fd::{AsFd as _, AsRawFd as _, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use super::state::{Index, LISTING_FLAGS, RootState, Watched};
use super::watch::{Watcher, reliable_fs};
use crate::nested_walk::{self, Listing, ListingSource, Opened, Seen, ctime_of, lstat_dir};
use crate::resolve::ResolveError;
use crate::scan_cache::TAGGED_SCANNED;

/// Forgets `path` and everything below it in `state`; a watch left vouching for nothing
/// is removed.
pub(super) fn forget_subtree(
    state: &mut RootState,
    wds: &mut HashMap<i32, Vec<(u64, PathBuf)>>,
    watcher: &Watcher,
    path: &Path,
) {
    let id = state.id;
    let gone: Vec<(PathBuf, Watched)> = state
        .dirs
        .range(path.to_path_buf()..)
        .take_while(|(p, _)| p.starts_with(path))
        .map(|(p, w)| (p.clone(), *w))
        .collect();
    for (p, dir) in gone {
        state.dirs.remove(&p);
        state.dirty = true;
        state.structural = true;
        if let Some(paths) = wds.get_mut(&dir.wd) {
            paths.retain(|(i, q)| !(*i == id && *q == p));
            if paths.is_empty() {
                wds.remove(&dir.wd);
                watcher.unwatch(dir.wd);
            }
        }
    }
}

/// A directory opened and watched, waiting to be listed.
pub(super) struct Pending {
    dir: PathBuf,
    key: (u64, u64),
    wd: i32,
    fd: OwnedFd,
}

pub(super) struct IndexSource<'a> {
    pub(super) index: &'a mut Index,
    pub(super) state: &'a mut RootState,
    pub(super) pending: Option<Pending>,
    pub(super) complete: bool,
}

impl IndexSource<'_> {
    /// Opens and watches `dir` (whose `lstat` said `key`), or `None` when it cannot be
    /// trusted.
    fn watch(&mut self, dir: &Path, key: (u64, u64)) -> Option<Pending> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(dir, flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        if (stat.st_dev, stat.st_ino) != key {
            return None; // replaced since the lstat
        }
        let reliable = *self
            .index
            .reliable_devs
            .entry(key.0)
            .or_insert_with(|| reliable_fs(fd.as_fd()));
        if !reliable {
            return None;
        }
        if self.index.wds.len() >= self.index.max_watches {
            return None;
        }
        let wd = self.index.watcher.watch(fd.as_fd()).ok()?;
        Some(Pending {
            dir: dir.to_path_buf(),
            key,
            wd,
            fd,
        })
    }
}

impl ListingSource for IndexSource<'_> {
    fn open(&mut self, dir: &Path, parent_dev: Option<u64>) -> Result<Opened, ResolveError> {
        if let Some(watched) = self.state.dirs.get(dir)
            && watched.trusted
            && let Some(entry) = self.state.entries.get(&watched.key)
        {
            return Ok(Opened::Dir(Seen {
                key: watched.key,
                ctime: entry.ctime,
                uid: 0,
                listing: Some(Listing {
                    flags: entry.flags & LISTING_FLAGS,
                    children: entry.children.clone(),
                    known: entry.known.clone(),
                }),
                was_scanned_tagged: entry.flags & TAGGED_SCANNED != 0,
                marker: entry.marker,
                known: entry.known.clone(),
            }));
        }
        // Not trusted (or its entry was not kept): listed afresh, trusted again if watched.
        let meta = match lstat_dir(dir, parent_dev)? {
            Ok(meta) => meta,
            Err(opened) => {
                forget_subtree(self.state, &mut self.index.wds, &self.index.watcher, dir);
                return Ok(opened);
            }
        };
        let key = (meta.dev(), meta.ino());
        if self.state.dirs.get(dir).is_some_and(|w| w.key != key) {
            // Another directory now: nothing known below the old one holds.
            forget_subtree(self.state, &mut self.index.wds, &self.index.watcher, dir);
        }
        // A child is trusted only below a watched parent: the parent's watch vouches that
        // the name still leads to the inode listed (the root is checked on each query).
        let vouched = *dir == self.state.root
            || dir
                .parent()
                .is_some_and(|p| self.state.dirs.contains_key(p));
        self.pending = if vouched { self.watch(dir, key) } else { None };
        if self.pending.is_none() {
            self.complete = false;
        }
        let old = self.state.entries.get(&key);
        Ok(Opened::Dir(Seen {
            key,
            ctime: ctime_of(&meta),
            uid: meta.uid(),
            listing: None,
            was_scanned_tagged: old.is_some_and(|e| e.flags & TAGGED_SCANNED != 0),
            marker: old.map_or((0, 0, 0), |e| e.marker),
            known: old.map(|e| e.known.clone()).unwrap_or_default(),
        }))
    }

    fn list(&mut self, dir: &Path, seen: &Seen) -> Result<Option<Listing>, ResolveError> {
        let Some(pending) = self
            .pending
            .take()
            .filter(|p| p.dir == dir && p.key == seen.key)
        else {
            return nested_walk::list(dir, dir, seen.uid);
        };
        let via = PathBuf::from(format!("/proc/self/fd/{}", pending.fd.as_raw_fd()));
        let listing = nested_walk::list(dir, &via, seen.uid)?;
        let id = self.state.id;
        self.state.dirs.insert(
            pending.dir.clone(),
            Watched {
                key: pending.key,
                wd: pending.wd,
                trusted: listing.is_some(),
            },
        );
        let paths = self.index.wds.entry(pending.wd).or_default();
        if !paths.iter().any(|(i, p)| *i == id && *p == pending.dir) {
            paths.push((id, pending.dir));
        }
        if listing.is_none() {
            self.complete = false;
        }
        Ok(listing)
    }

    fn stale(&self, _ctime: (i64, u32)) -> bool {
        false // the index never writes the disk cache
    }
}
