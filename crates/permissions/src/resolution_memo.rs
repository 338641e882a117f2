//! Path canonicalisation for the mount plan, with a per-launch memo.
//!
//! A launch resolves the same prefixes (`/tmp`, the workspace, `$HOME`) hundreds of times
//! while it judges writable roots, protected metadata and deny entries: `realpath(3)`
//! costs one `readlink` per component and call (~500 per launch in a two-level
//! workspace, the largest share of Airlock's own launch time after the kernel's). While a
//! [`ResolutionMemo`] is alive on the thread, [`canonicalize`] remembers what each
//! `readlink` of a *canonical parent + one name* answered, so every prefix is asked once
//! per launch.
//!
//! Why this cannot widen anything: the memo lives only for one plan, which is a snapshot of
//! the file system at one moment anyway (a confined command running meanwhile can change
//! a link between two plain `realpath` calls as well; the bind mounts and pinned parents,
//! not the resolution, are what hold). Within a memo every question about a path gets the
//! same answer, so the plan is computed from one consistent view. Nothing Airlock creates
//! itself (placeholders) is made while a memo is alive: callers end it before.
//!
//! Without a memo [`canonicalize`] resolves exactly as `realpath(3)` does: component by
//! component, `..` after resolving the prefix, at most [`MAX_LINKS`] symbolic links, and the
//! same errors (`ENOENT`, `ENOTDIR`, `EACCES`, `ELOOP`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Most symbolic links followed in one resolution (Linux's `MAXSYMLINKS`).
pub const MAX_LINKS: usize = 40;

/// What one `readlink` of a path whose parent is canonical answered.
#[derive(Clone)]
enum LinkState {
    /// Exists and is not a symbolic link (`EINVAL`).
    Plain,
    /// A symbolic link to this target.
    Link(PathBuf),
    /// The error (`ENOENT`, `ENOTDIR`, `EACCES`, ...), by its number.
    Error(i32),
}

thread_local! {
    static MEMO: RefCell<Option<HashMap<PathBuf, LinkState>>> = const { RefCell::new(None) };
    /// Which memo is alive (a new number for each outermost one), for other per-launch
    /// memos that must end with it ([`memo_id`]).
    static MEMO_ID: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    static NEXT_ID: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The identity of the [`ResolutionMemo`] alive on this thread, if any: a memo of other
/// facts read while planning one launch (the git metadata of a `.git` entry) is valid
/// while this stays the same, and stands for the same single view of the file system.
#[must_use]
pub fn memo_id() -> Option<u64> {
    MEMO_ID.with(std::cell::Cell::get)
}

/// A per-thread cache of facts read while one [`ResolutionMemo`] is alive: the memo's
/// number ([`memo_id`]) and the answers by key. Declare one with `thread_local!` and
/// `const { RefCell::new(None) }`, and read through it with [`remember`].
pub type MemoCache<K, V> = RefCell<Option<(u64, HashMap<K, V>)>>;

/// The answer `compute` gives for `key`, computed once per [`ResolutionMemo`]: while a
/// memo is alive, a successful answer is kept in `cache` and given again for the same key
/// (the plan's single view of the file system); without one, `compute` runs every time.
/// Errors are never kept.
///
/// # Errors
/// `compute`'s.
pub fn remember<K, V, E>(
    cache: &'static std::thread::LocalKey<MemoCache<K, V>>,
    key: &K,
    compute: impl FnOnce() -> Result<V, E>,
) -> Result<V, E>
where
    K: Eq + std::hash::Hash + Clone,
    V: Clone,
{
    let Some(id) = memo_id() else {
        return compute();
    };
    let known = cache.with(|cache| match &*cache.borrow() {
        Some((at, known)) if *at == id => known.get(key).cloned(),
        _ => None,
    });
    if let Some(known) = known {
        return Ok(known);
    }
    let answer = compute()?;
    cache.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.as_ref().is_none_or(|(at, _)| *at != id) {
            *cache = Some((id, HashMap::new()));
        }
        if let Some((_, known)) = cache.as_mut() {
            known.insert(key.clone(), answer.clone());
        }
    });
    Ok(answer)
}

/// Whether `path` is a directory (symlinks followed, as [`Path::is_dir`]), read once per
/// [`ResolutionMemo`]: special paths such as `/tmp` are resolved for every entry each time
/// a policy is queried.
#[must_use]
pub fn is_dir(path: &Path) -> bool {
    thread_local! {
        static DIRS: MemoCache<PathBuf, bool> = const { RefCell::new(None) };
    }
    remember(&DIRS, &path.to_path_buf(), || {
        Ok::<_, std::convert::Infallible>(path.is_dir())
    })
    .unwrap_or_else(|never| match never {})
}

/// While alive, [`canonicalize`] on this thread remembers its answers (module docs). The
/// outermost memo of a thread owns them; an inner one started while another is alive
/// shares it and ends nothing. Hold it only in synchronous code (never across an `await`:
/// another task on the same thread would see it).
#[must_use = "the memo ends when this is dropped"]
pub struct ResolutionMemo {
    owner: bool,
}

impl ResolutionMemo {
    /// Starts a memo on this thread (or joins the one already alive).
    pub fn begin() -> Self {
        let owner = MEMO.with(|memo| {
            let mut memo = memo.borrow_mut();
            if memo.is_some() {
                false
            } else {
                *memo = Some(HashMap::new());
                let id = NEXT_ID.with(|next| {
                    let id = next.get();
                    next.set(id.wrapping_add(1));
                    id
                });
                MEMO_ID.with(|current| current.set(Some(id)));
                true
            }
        });
        Self { owner }
    }
}

impl Drop for ResolutionMemo {
    fn drop(&mut self) {
        if self.owner {
            MEMO.with(|memo| *memo.borrow_mut() = None);
            MEMO_ID.with(|current| current.set(None));
        }
    }
}

fn read_link_state(path: &Path) -> LinkState {
    match std::fs::read_link(path) {
        Ok(target) => LinkState::Link(target),
        Err(e) => match e.raw_os_error() {
            Some(libc::EINVAL) => LinkState::Plain,
            Some(code) => LinkState::Error(code),
            None => LinkState::Error(libc::EIO),
        },
    }
}

fn link_state(path: &Path) -> LinkState {
    MEMO.with(|memo| {
        if let Some(known) = memo.borrow().as_ref().and_then(|m| m.get(path)) {
            return known.clone();
        }
        let state = read_link_state(path);
        if let Some(memo) = memo.borrow_mut().as_mut() {
            memo.insert(path.to_path_buf(), state.clone());
        }
        state
    })
}

/// `path` with every symbolic link resolved, `.` and `..` removed: the answer of
/// `realpath(3)` (and [`std::fs::canonicalize`]), remembered while a [`ResolutionMemo`] is
/// alive. A relative `path` is resolved against the working directory.
///
/// # Errors
/// As `realpath(3)`: `ENOENT` when a component is missing (an empty path too), `ENOTDIR`
/// when a non-final component is not a directory, `EACCES` when one cannot be searched,
/// `ELOOP` past [`MAX_LINKS`] links.
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    if path.as_os_str().is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    let absolute;
    let path = if path.is_absolute() {
        path
    } else {
        absolute = std::env::current_dir()?.join(path);
        absolute.as_path()
    };
    // Components still to resolve, the next one last.
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, path);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        match link_state(&candidate) {
            // As realpath(3): `x/..` needs `x` to be a directory.
            LinkState::Plain if pending.last().is_some_and(|next| next == "..") => {
                require_directory(&candidate)?;
                out = candidate;
            }
            LinkState::Plain => out = candidate,
            LinkState::Error(code) => return Err(io::Error::from_raw_os_error(code)),
            LinkState::Link(target) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
        }
    }
    // As realpath(3): a trailing slash needs a directory.
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        require_directory(&out)?;
    }
    Ok(out)
}

fn require_directory(path: &Path) -> io::Result<()> {
    if std::fs::metadata(path)?.is_dir() {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(libc::ENOTDIR))
    }
}

/// `path` with its longest existing prefix canonicalised and the missing rest appended
/// lexically (`/ws/link/new/file` -> `/real/new/file`); `path` itself when nothing of it
/// resolves. Callers that want `..` removed first normalise `path` lexically.
#[must_use]
pub fn canonical_prefix(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        if let Ok(mut out) = canonicalize(current) {
            out.extend(missing.iter().rev());
            return out;
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                current = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The first symbolic link on the way from `/` to `path` (a lexical prefix of it, which
/// a confined command could have made), if any.
#[must_use]
pub fn first_symlink(path: &Path) -> Option<PathBuf> {
    let mut current = PathBuf::new();
    for component in path.components() {
        current.push(component);
        if matches!(component, Component::Normal(_))
            && matches!(link_state(&current), LinkState::Link(_))
        {
            return Some(current);
        }
    }
    None
}

/// Pushes `path`'s components onto `pending` so that the first is popped first (`.` and
/// the root dropped, `..` kept for the walk to apply after resolving its prefix).
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    let start = pending.len();
    for component in path.components() {
        match component {
            Component::Normal(name) => pending.push(name.to_os_string()),
            Component::ParentDir => pending.push(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    pending[start..].reverse();
}

#[cfg(test)]
#[path = "resolution_memo_tests.rs"]
mod tests;
