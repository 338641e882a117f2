//! The index's middle path: when every change since the last walk only untrusted some
//! directories' own listings (no directory moved, replaced or forgotten, the last walk
//! complete), those directories are listed again one by one; if each listing records the
//! same facts as before (the flags and the set of child directories: the walk's outcome
//! depends on nothing else of a listing), they are trusted again and the last outcome
//! still holds. A workspace root where every launch creates and removes the mount points
//! of missing protected names is the common case. Any difference, or anything that cannot
//! be checked the way the walk would, sends the query to a full walk.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd as _, AsRawFd as _};
use std::path::PathBuf;

use super::state::{LISTING_FLAGS, Watched};
use super::watch::Watcher;
use crate::nested_walk;
use crate::scan_cache::OwnedEntry;

/// Lists each of `relist` again (watched, untrusted) and compares it with its entry;
/// trusts them again and returns `true` when every one is unchanged.
pub(super) fn unchanged(
    watcher: &Watcher,
    dirs: &mut BTreeMap<PathBuf, Watched>,
    entries: &HashMap<(u64, u64), OwnedEntry>,
    relist: &[PathBuf],
) -> bool {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC;
    for dir in relist {
        let Some(watched) = dirs.get(dir).copied() else {
            return false;
        };
        let Some(entry) = entries.get(&watched.key) else {
            return false;
        };
        let Ok(fd) = rustix::fs::open(dir, flags, Mode::empty()) else {
            return false;
        };
        // The same inode, still under the same watch (added before this listing).
        let same = rustix::fs::fstat(&fd).is_ok_and(|st| (st.st_dev, st.st_ino) == watched.key)
            && watcher.watch(fd.as_fd()).is_ok_and(|wd| wd == watched.wd);
        if !same {
            return false;
        }
        let via = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        let Ok(Some(listing)) = nested_walk::list(dir, &via, crate::fs_kind::effective_uid())
        else {
            return false;
        };
        let mut now = listing.children;
        let mut before = entry.children.clone();
        now.sort();
        before.sort();
        if listing.flags != entry.flags & LISTING_FLAGS || now != before {
            return false;
        }
    }
    for dir in relist {
        if let Some(watched) = dirs.get_mut(dir) {
            watched.trusted = true;
        }
    }
    true
}
