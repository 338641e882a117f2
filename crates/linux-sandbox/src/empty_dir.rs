//! Whether a protected name is an empty directory: one the mount plan covers with a
//! placeholder instead of binding it (see `resolve`).

use std::path::Path;

/// Whether `path` is a directory (not a symlink to one) without entries. Read with one
/// `open` (`O_NOFOLLOW | O_DIRECTORY`: anything else fails) and `getdents64` into a buffer
/// on the stack until an entry other than `.` and `..` or the end: a few system calls and
/// no allocation, where `read_dir` also stats the directory and allocates 32 KiB (this runs
/// for every protected name of every writable root on every launch).
pub(crate) fn is_empty_dir(path: &Path) -> bool {
    use rustix::fs::{Mode, OFlags, RawDir};
    let Ok(dir) = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    // Room for a few entries of the longest name (255 bytes) a file system allows.
    let mut buffer = [std::mem::MaybeUninit::<u8>::uninit(); 2048];
    let mut entries = RawDir::new(&dir, &mut buffer);
    while let Some(entry) = entries.next() {
        match entry {
            Ok(entry) if matches!(entry.file_name().to_bytes(), b"." | b"..") => {}
            // Another entry, or an error reading: not known to be empty.
            _ => return false,
        }
    }
    true
}
