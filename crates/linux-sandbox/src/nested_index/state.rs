//! The index proper: per root (and skip list), the scan cache's entries held in memory,
//! which directories' listings are *trusted*, and the last outcome.
//!
//! A directory's listing is trusted when the directory was watched before it was listed
//! and no event has touched it since: every later change of its entries is then in the
//! inotify queue (see [`super::watch`]), and the query drains the queue first. How the
//! watch is made to cover exactly the listed inode: the directory is opened
//! (`O_PATH | O_NOFOLLOW | O_DIRECTORY`), its identity taken with `fstat` on that
//! descriptor and compared with the walk's `lstat`, the watch added through
//! `/proc/self/fd/N` (the inode the descriptor holds, whatever the path names now), and
//! the listing read through the same name, after the watch. That the *path* still names
//! that inode later is vouched for by its parent's watch (added before the parent's
//! listing, which named the child): replacing or moving the child is an event there,
//! which untrusts the child's whole subtree. The root has no watched parent: its
//! identity is checked with one `lstat` on every query.
//!
//! What untrusts what: an event naming a directory or one of the names a listing records
//! ([`crate::nested_walk::special_name`]) untrusts the watched directory's listing (it
//! stays watched, still vouching for its other children) and forgets the named child's
//! subtree; an event on the directory itself (attributes, moved, deleted, unmounted,
//! watch removed) forgets its subtree; a queue overflow or a change of the mount table
//! (inotify does not see mounts) forgets everything. Events naming other files are
//! ignored: a listing does not record them. A directory is only trusted below a watched
//! parent.
//!
//! An untrusted directory is listed again by the walk, exactly as the plain scan does. A
//! directory that cannot be watched (not on a [`super::watch::RELIABLE_FS_MAGIC`] file
//! system, no watches left, not readable) is never trusted and keeps the root off the
//! O(1) path, which returns the last outcome when nothing was untrusted since, every
//! content fact ([`Check`]) still holds, and the last walk did not change the
//! tagged-directory state.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use super::source::{IndexSource, forget_subtree};
use super::watch::{Event, Watcher};
use crate::nested_scan::{ScanOptions, ScanOutcome};
use crate::nested_walk::{self, Check, special_name};
use crate::resolve::ResolveError;
use crate::scan_cache::{self, HAS_GIT, HAS_HEAD, HAS_PACKAGE_MARKER, HAS_TAG, OwnedEntry};

/// At most this many roots are indexed; the least recently queried is forgotten first.
pub const MAX_ROOTS: usize = 32;

pub(super) const LISTING_FLAGS: u8 = HAS_GIT | HAS_TAG | HAS_PACKAGE_MARKER | HAS_HEAD;

/// A directory this root's walk watched: its identity when listed, its watch, and
/// whether its listing is still trusted. A directory stays watched (its watch keeps
/// vouching for its children's names) after an event on it untrusts its own listing; it
/// is forgotten with its whole subtree when it may have been moved, replaced or lost.
#[derive(Debug, Clone, Copy)]
pub(super) struct Watched {
    pub key: (u64, u64),
    pub wd: i32,
    pub trusted: bool,
}

pub(super) struct Last {
    out: ScanOutcome,
    checks: Vec<Check>,
    /// Every directory visited was trusted after the walk and the tagged state is stable.
    complete: bool,
}

pub(super) struct RootState {
    pub(super) id: u64,
    pub(super) root: PathBuf,
    pub(super) skip: Vec<PathBuf>,
    pub(super) entries: HashMap<(u64, u64), OwnedEntry>,
    pub(super) dirs: BTreeMap<PathBuf, Watched>,
    /// Something was untrusted since the last walk.
    pub(super) dirty: bool,
    /// Directories forgotten since the last walk (not only listings untrusted).
    pub(super) structural: bool,
    /// Directories whose own listing was untrusted since the last walk.
    pub(super) relist: Vec<PathBuf>,
    pub(super) last: Option<Last>,
    pub(super) used: u64,
}

/// The in-process nested-repository index (module docs).
pub struct Index {
    pub(super) watcher: Watcher,
    pub(super) roots: Vec<RootState>,
    /// Which (root id, path) each watch vouches for.
    pub(super) wds: HashMap<i32, Vec<(u64, PathBuf)>>,
    pub(super) reliable_devs: HashMap<u64, bool>,
    pub(super) clock: u64,
    /// At most this many watches ([`watch_cap`]).
    pub(super) max_watches: usize,
}

/// How many watches the index may hold: half of `fs.inotify.max_user_watches` (the limit
/// is per user; the user's editors and tools need theirs), at most 1,000,000. A directory
/// beyond it is not watched, hence listed on every query.
#[must_use]
pub fn watch_cap() -> usize {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(4096, |limit| (limit / 2).min(1_000_000))
}

impl Index {
    /// A new, empty index.
    ///
    /// # Errors
    /// When inotify is not available.
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            watcher: Watcher::new()?,
            roots: Vec::new(),
            wds: HashMap::new(),
            reliable_devs: HashMap::new(),
            clock: 0,
            max_watches: watch_cap(),
        })
    }

    /// Forgets every trusted listing (the next query of each root walks it and lists
    /// every directory), as after a queue overflow.
    pub fn untrust_all(&mut self) {
        for wd in self.wds.keys() {
            self.watcher.unwatch(*wd);
        }
        self.wds.clear();
        self.reliable_devs.clear();
        for state in &mut self.roots {
            state.dirs.clear();
            state.dirty = true;
            state.structural = true;
        }
    }

    /// Untrusts `path`'s listing (and, with `subtree`, forgets it and everything below it)
    /// in root `id`.
    fn untrust(&mut self, id: u64, path: &Path, subtree: bool) {
        let Some(state) = self.roots.iter_mut().find(|s| s.id == id) else {
            return;
        };
        if subtree {
            forget_subtree(state, &mut self.wds, &self.watcher, path);
        } else if let Some(dir) = state.dirs.get_mut(path)
            && dir.trusted
        {
            dir.trusted = false;
            state.dirty = true;
            state.relist.push(path.to_path_buf());
        }
    }

    /// Applies every queued event and the mount table's changes.
    fn sync(&mut self) {
        let mut events = Vec::new();
        self.watcher.drain(|e| events.push(e));
        if self.watcher.mounts_changed() || events.contains(&Event::Overflow) {
            self.untrust_all();
            return;
        }
        for event in events {
            match event {
                Event::Overflow => {}
                Event::Child { wd, name, is_dir } => {
                    if !is_dir && !special_name(&name) {
                        continue; // a file no listing records
                    }
                    let child = std::ffi::OsStr::from_bytes(&name);
                    for (id, path) in self.wds.get(&wd).cloned().unwrap_or_default() {
                        self.untrust(id, &path, false);
                        self.untrust(id, &path.join(child), true);
                    }
                }
                Event::Itself { wd } => {
                    for (id, path) in self.wds.get(&wd).cloned().unwrap_or_default() {
                        self.untrust(id, &path, true);
                    }
                }
            }
        }
    }

    /// The nested repositories below `root`: the same outcome as
    /// [`crate::nested_scan::scan_nested_repositories`] with a cache of the same history
    /// (counters aside: `cached` counts trusted listings; both are 0 on the O(1) path).
    ///
    /// # Errors
    /// As the plain scan: [`ResolveError::Unreadable`].
    pub fn query(
        &mut self,
        root: &Path,
        options: &ScanOptions,
    ) -> Result<ScanOutcome, ResolveError> {
        self.sync();
        self.clock += 1;
        let position = self
            .roots
            .iter()
            .position(|s| s.root == root && s.skip == options.skip);
        let mut state = match position {
            Some(i) => self.roots.swap_remove(i),
            None => self.new_state(root, options),
        };
        state.used = self.clock;
        let result = self.query_state(&mut state);
        self.roots.push(state);
        result
    }

    fn new_state(&mut self, root: &Path, options: &ScanOptions) -> RootState {
        if self.roots.len() >= MAX_ROOTS
            && let Some(oldest) = (0..self.roots.len()).min_by_key(|i| self.roots[*i].used)
        {
            let old = self.roots.swap_remove(oldest);
            let watcher = &self.watcher;
            self.wds.retain(|wd, paths| {
                paths.retain(|(i, _)| *i != old.id);
                if paths.is_empty() {
                    watcher.unwatch(*wd);
                }
                !paths.is_empty()
            });
        }
        // The tagged-directory history starts from the disk cache, like the plain scan's.
        let entries = options
            .cache_dir
            .as_deref()
            .and_then(|dir| scan_cache::load(dir, root))
            .map(|view| view.owned_entries())
            .unwrap_or_default();
        RootState {
            id: self.clock,
            root: root.to_path_buf(),
            skip: options.skip.clone(),
            entries,
            dirs: BTreeMap::new(),
            dirty: true,
            structural: true,
            relist: Vec::new(),
            last: None,
            used: self.clock,
        }
    }

    fn query_state(&mut self, state: &mut RootState) -> Result<ScanOutcome, ResolveError> {
        let root_key = std::fs::symlink_metadata(&state.root)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        // The root has no watched parent: its identity is checked on every query.
        if let Some(dir) = state.dirs.get(&state.root)
            && Some(dir.key) != root_key
        {
            let root = state.root.clone();
            self.untrust_in(state, &root);
        }
        if state.dirty
            && !state.structural
            && state.last.as_ref().is_some_and(|last| last.complete)
            && super::relist::unchanged(
                &self.watcher,
                &mut state.dirs,
                &state.entries,
                &state.relist,
            )
        {
            state.dirty = false;
            state.relist.clear();
        }
        if !state.dirty
            && let Some(last) = &state.last
            && last.complete
            && last.checks.iter().all(Check::holds)
        {
            let mut out = last.out.clone();
            out.listed = 0;
            out.cached = 0;
            return Ok(out);
        }
        state.last = None;
        let mut source = IndexSource {
            index: self,
            state,
            pending: None,
            complete: true,
        };
        let skip = source.state.skip.clone();
        let root = source.state.root.clone();
        let walked = nested_walk::walk(&root, &skip, &mut source);
        let complete = source.complete;
        let result = match walked {
            Ok(result) => result,
            Err(e) => {
                self.untrust_in(state, &root);
                return Err(e);
            }
        };
        state.entries = result.next.into_iter().collect();
        // Directories this walk did not reach (below a tagged directory now pruned, a
        // deeper root, one gone) are forgotten: their watches are not needed any more.
        let unreached: Vec<PathBuf> = state
            .dirs
            .iter()
            .filter(|(_, dir)| !state.entries.contains_key(&dir.key))
            .map(|(path, _)| path.clone())
            .collect();
        for path in unreached {
            forget_subtree(state, &mut self.wds, &self.watcher, &path);
        }
        state.dirty = false;
        state.structural = false;
        state.relist.clear();
        state.last = Some(Last {
            out: result.out.clone(),
            checks: result.checks,
            complete: complete && !result.tag_state_changed,
        });
        Ok(result.out)
    }

    /// Forgets the subtree of `path` in `state` (taken out of `self.roots`).
    fn untrust_in(&mut self, state: &mut RootState, path: &Path) {
        forget_subtree(state, &mut self.wds, &self.watcher, path);
        state.dirty = true;
    }
}
