//! The nested-repository scan's cache (issue 11 "Launch speed in real trees"): what each
//! directory under a writable root held when the launcher last listed it, keyed by the
//! directory's identity (`st_dev`, `st_ino`) and valid only while its change time
//! (`st_ctime`, nanoseconds) is the same.
//!
//! Why change time: every entry created, removed or renamed in a directory, and every
//! `chmod`/`chown` of it, sets its `ctime` to the current time, and nothing but the kernel
//! clock sets it — a sandboxed command can put `mtime` back with `utimensat`, not `ctime`.
//! Timestamps are only as fine as the kernel's coarse clock, so a directory changed in the
//! last [`RECENT_CHANGE_MARGIN`] is never served from the cache (git's "racy" rule).
//!
//! Where: one file per writable root in `$AIRLOCK_HOME/cache/nested-repos/`, used only
//! when that directory is outside every writable root of the launch, owned by this user
//! and not writable by group or others, and read without following symlinks. A cache the
//! command could have written would let it hide a repository from the next launch. A
//! damaged file is ignored (the scan then reads every directory); the cache never decides
//! more than what a fresh listing would.
//!
//! File format (`v3`, little endian): the magic line, the root path (u32 length + bytes),
//! the entry count (u32), then each entry: `dev` u64, `ino` u64, `ctime` seconds i64,
//! `ctime` nanoseconds u32, flags u8, the marker (the `ino` u64, `ctime` seconds i64 and
//! nanoseconds u32 of the `CACHEDIR.TAG` or package-manager record a tagged directory was
//! scanned under; zeros otherwise), the child directory names (u32 count, then each name
//! as a u16 length and its bytes), and for a tagged directory the repositories known below
//! it (same encoding, relative paths).

use std::collections::HashMap;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A directory changed this recently (relative to the start of the scan) is listed
/// afresh: its `ctime` might not change again when it changes within the same clock tick.
pub const RECENT_CHANGE_MARGIN: Duration = Duration::from_secs(2);

/// v2: listings record [`HAS_HEAD`]; v3: a tagged directory's record names the marker
/// file it was scanned under ([`Marker`]). Older caches are discarded.
const MAGIC: &[u8] = b"airlock nested-repository scan cache v3\n";

/// The identity of the file that made a directory tagged when its subtree was scanned
/// (`CACHEDIR.TAG`, or a package manager's record): `(st_ino, st_ctime, st_ctime_nsec)`,
/// all zero for none. A [`TAGGED_SCANNED`] record holds only while the same file is still
/// there: removing the tag and putting one back (by `rm`, `mv` or `ln`) always makes a file
/// with another inode or change time, so a repository created while the directory was not
/// tagged is never hidden behind a record made before (issue 11, red-team finding on the
/// index daemon's history).
pub type Marker = (u64, i64, u32);

/// The directory holds an entry named `.git` (directory, file or symlink).
pub const HAS_GIT: u8 = 1;
/// The directory holds an entry named `CACHEDIR.TAG` (its signature is checked on use).
pub const HAS_TAG: u8 = 2;
/// The directory was tagged and its whole subtree was scanned once; `known` lists the
/// repositories found then.
pub const TAGGED_SCANNED: u8 = 4;
/// The listing must not be reused (changed too recently); the tagged facts may.
pub const LISTING_STALE: u8 = 8;
/// The directory holds an entry named like a package manager's own record of the tree it
/// installed (see `nested_scan::PACKAGE_TREE_MARKERS`; checked on use).
pub const HAS_PACKAGE_MARKER: u8 = 16;
/// The directory holds an entry named `HEAD` (it may be a bare-form git directory;
/// checked on use with git's own test).
pub const HAS_HEAD: u8 = 32;

/// One directory's cached facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// `(st_ctime, st_ctime_nsec)` when listed.
    pub ctime: (i64, u32),
    /// [`HAS_GIT`], [`HAS_TAG`], [`TAGGED_SCANNED`], [`LISTING_STALE`].
    pub flags: u8,
    /// See [`Marker`].
    pub marker: Marker,
    /// Names of the child directories (not symlinks, not `.git`).
    pub children: Vec<&'a [u8]>,
    /// For a tagged directory: `.git` entries found below it when it was first scanned,
    /// relative to it.
    pub known: Vec<&'a [u8]>,
}

/// A cache file read into memory, indexed by directory identity.
#[derive(Debug, Default)]
pub struct CacheView {
    bytes: Vec<u8>,
    index: HashMap<(u64, u64), usize>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2)?.try_into().ok().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)?.try_into().ok().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)?.try_into().ok().map(u64::from_le_bytes)
    }
    fn names(&mut self) -> Option<Vec<&'a [u8]>> {
        let count = self.u32()? as usize;
        let mut out = Vec::with_capacity(count.min(4096));
        for _ in 0..count {
            let len = self.u16()? as usize;
            out.push(self.take(len)?);
        }
        Some(out)
    }
    fn entry(&mut self) -> Option<((u64, u64), Entry<'a>)> {
        let key = (self.u64()?, self.u64()?);
        let seconds = i64::from_le_bytes(self.take(8)?.try_into().ok()?);
        let nanos = self.u32()?;
        let flags = self.u8()?;
        let marker = (
            self.u64()?,
            i64::from_le_bytes(self.take(8)?.try_into().ok()?),
            self.u32()?,
        );
        let children = self.names()?;
        let known = self.names()?;
        Some((
            key,
            Entry {
                ctime: (seconds, nanos),
                flags,
                marker,
                children,
                known,
            },
        ))
    }
}

impl CacheView {
    /// Parses a cache file for `root`; `None` when it is damaged or for another root.
    #[must_use]
    pub fn parse(bytes: Vec<u8>, root: &Path) -> Option<Self> {
        use std::os::unix::ffi::OsStrExt as _;
        let mut index = HashMap::new();
        {
            let mut r = Reader {
                bytes: &bytes,
                at: 0,
            };
            if r.take(MAGIC.len())? != MAGIC {
                return None;
            }
            let len = r.u32()? as usize;
            if r.take(len)? != root.as_os_str().as_bytes() {
                return None;
            }
            let count = r.u32()?;
            for _ in 0..count {
                let at = r.at;
                let (key, _) = r.entry()?;
                index.insert(key, at);
            }
            if r.at != bytes.len() {
                return None;
            }
        }
        Some(Self { bytes, index })
    }

    /// The cached facts of the directory `key`, whatever its `ctime`.
    #[must_use]
    pub fn get(&self, key: (u64, u64)) -> Option<Entry<'_>> {
        let at = *self.index.get(&key)?;
        let mut r = Reader {
            bytes: &self.bytes,
            at,
        };
        r.entry().map(|(_, entry)| entry)
    }

    /// Every entry, owned (the nested-repository index starts from them).
    #[must_use]
    pub fn owned_entries(&self) -> HashMap<(u64, u64), OwnedEntry> {
        self.index
            .keys()
            .filter_map(|key| {
                let e = self.get(*key)?;
                Some((
                    *key,
                    OwnedEntry {
                        ctime: e.ctime,
                        flags: e.flags,
                        marker: e.marker,
                        children: e.children.iter().map(|c| c.to_vec()).collect(),
                        known: e.known.iter().map(|c| c.to_vec()).collect(),
                    },
                ))
            })
            .collect()
    }

    /// Number of directories in the cache.
    #[must_use]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the cache holds no directory.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

/// Encodes entries for `root`; `None` when a name is too long for the format.
#[must_use]
pub fn encode<'a, I>(root: &Path, entries: I) -> Option<Vec<u8>>
where
    I: IntoIterator<Item = ((u64, u64), &'a OwnedEntry)>,
{
    use std::os::unix::ffi::OsStrExt as _;
    fn names(out: &mut Vec<u8>, names: &[Vec<u8>]) -> Option<()> {
        out.extend_from_slice(&u32::try_from(names.len()).ok()?.to_le_bytes());
        for name in names {
            out.extend_from_slice(&u16::try_from(name.len()).ok()?.to_le_bytes());
            out.extend_from_slice(name);
        }
        Some(())
    }
    let root = root.as_os_str().as_bytes();
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&u32::try_from(root.len()).ok()?.to_le_bytes());
    out.extend_from_slice(root);
    let count_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut count: u32 = 0;
    for ((dev, ino), entry) in entries {
        out.extend_from_slice(&dev.to_le_bytes());
        out.extend_from_slice(&ino.to_le_bytes());
        out.extend_from_slice(&entry.ctime.0.to_le_bytes());
        out.extend_from_slice(&entry.ctime.1.to_le_bytes());
        out.push(entry.flags);
        out.extend_from_slice(&entry.marker.0.to_le_bytes());
        out.extend_from_slice(&entry.marker.1.to_le_bytes());
        out.extend_from_slice(&entry.marker.2.to_le_bytes());
        names(&mut out, &entry.children)?;
        names(&mut out, &entry.known)?;
        count = count.checked_add(1)?;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    Some(out)
}

/// [`Entry`] with owned names, as the scan builds the next cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedEntry {
    /// See [`Entry::ctime`].
    pub ctime: (i64, u32),
    /// See [`Entry::flags`].
    pub flags: u8,
    /// See [`Entry::marker`].
    pub marker: Marker,
    /// See [`Entry::children`].
    pub children: Vec<Vec<u8>>,
    /// See [`Entry::known`].
    pub known: Vec<Vec<u8>>,
}

/// Where the cache files live for this process: `$AIRLOCK_HOME/cache/nested-repos`, or
/// none when the Airlock home is not an existing directory (a launch never creates it).
#[must_use]
pub fn default_cache_dir() -> Option<PathBuf> {
    let home = airlock_permissions::ConfigEnv::from_process().airlock_home;
    std::fs::metadata(&home)
        .is_ok_and(|m| m.is_dir())
        .then(|| home.join("cache").join("nested-repos"))
}

/// At most this many cache files are kept (one per writable root scanned); the least
/// recently written go first.
pub const MAX_CACHE_FILES: usize = 256;

fn prune_old_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let modified = e.metadata().ok()?.modified().ok()?;
            Some((modified, e.path()))
        })
        .collect();
    if files.len() <= MAX_CACHE_FILES {
        return;
    }
    files.sort();
    let excess = files.len() - MAX_CACHE_FILES;
    for (_, path) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

/// The cache directory `dir` if a launch with these writable roots (canonical) may trust
/// it: it resolves outside every writable root (judged on its nearest existing ancestor
/// when it does not exist yet). The directory and files are checked again when used.
#[must_use]
pub fn usable_cache_dir(dir: &Path, writable_roots: &[PathBuf]) -> Option<PathBuf> {
    if !dir.is_absolute() {
        return None;
    }
    let existing = dir.ancestors().find(|a| a.exists())?;
    let resolved = airlock_permissions::resolution_memo::canonicalize(existing).ok()?;
    let rest = dir.strip_prefix(existing).ok()?;
    let full = resolved.join(rest);
    if writable_roots.iter().any(|r| full.starts_with(r)) {
        return None;
    }
    Some(full)
}

fn trusted(meta: &std::fs::Metadata) -> bool {
    meta.uid() == crate::fs_kind::effective_uid() && meta.mode() & 0o022 == 0
}

/// The cache file of `root` in `dir`.
fn file_for(dir: &Path, root: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    // FNV-1a: stable across builds (the std hasher is not); the file repeats the root.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in root.as_os_str().as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    dir.join(format!("{hash:016x}"))
}

/// Reads the cache of `root` from `dir`; `None` when absent, untrusted or damaged.
#[must_use]
pub fn load(dir: &Path, root: &Path) -> Option<CacheView> {
    use std::io::Read as _;
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && trusted(&m)) {
        return None;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file_for(dir, root))
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || !trusted(&meta) {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).ok()?;
    CacheView::parse(bytes, root)
}

/// Writes `bytes` as the cache of `root` in `dir` (created private if missing, below an
/// existing Airlock home), replacing the previous file atomically, and keeps at most
/// [`MAX_CACHE_FILES`]. Failures are ignored: the cache only saves time.
pub fn store(dir: &Path, root: &Path, bytes: &[u8]) {
    use std::os::unix::fs::DirBuilderExt as _;
    if !dir.exists() {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && trusted(&m)) {
        return;
    }
    let target = file_for(dir, root);
    let temp = dir.join(format!(
        ".tmp-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&temp)
        .and_then(|mut file| file.write_all(bytes));
    if written.is_err() || std::fs::rename(&temp, &target).is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    prune_old_files(dir);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let entry = OwnedEntry {
            ctime: (1_700_000_000, 42),
            flags: HAS_GIT | HAS_TAG,
            marker: (77, -3, 999_999_999),
            children: vec![b"a".to_vec(), b"node_modules".to_vec()],
            known: vec![b"x/y/.git".to_vec()],
        };
        let root = Path::new("/srv/ws");
        let bytes = encode(root, [((7, 9), &entry)]).unwrap();
        let view = CacheView::parse(bytes.clone(), root).unwrap();
        let got = view.get((7, 9)).unwrap();
        assert_eq!(got.ctime, entry.ctime);
        assert_eq!(got.flags, entry.flags);
        assert_eq!(got.marker, entry.marker);
        assert_eq!(got.children, [b"a".as_slice(), b"node_modules".as_slice()]);
        assert_eq!(got.known, [b"x/y/.git".as_slice()]);
        assert!(view.get((7, 10)).is_none());
        assert!(CacheView::parse(bytes.clone(), Path::new("/srv/other")).is_none());
        assert!(CacheView::parse(bytes[..bytes.len() - 1].to_vec(), root).is_none());
    }

    #[test]
    fn a_cache_inside_a_writable_root_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let cache = base.join("home/.airlock/cache/nested-repos");
        assert_eq!(
            usable_cache_dir(&cache, &[PathBuf::from("/nonexistent-root")]),
            Some(cache.clone())
        );
        assert_eq!(usable_cache_dir(&cache, std::slice::from_ref(&base)), None);
        let root = Path::new("/srv/ws");
        store(&cache, root, b"not a cache");
        assert!(load(&cache, root).is_none());
        let entry = OwnedEntry {
            ctime: (1, 2),
            flags: 0,
            marker: (0, 0, 0),
            children: Vec::new(),
            known: Vec::new(),
        };
        store(&cache, root, &encode(root, [((1, 1), &entry)]).unwrap());
        assert_eq!(load(&cache, root).unwrap().len(), 1);
        // Group-writable: not trusted.
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o770)).unwrap();
        assert!(load(&cache, root).is_none());
    }
}
