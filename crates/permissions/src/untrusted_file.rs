//! Reading a file a sandboxed command could have written, without letting it stall or
//! flood the reader (issue 11, red-team F11).
//!
//! Airlock reads repository metadata (`.git` pointer files, `commondir`, `HEAD`, config
//! files and what they include, the index) before every launch and before every
//! unsandboxed `git`. A confined run can leave a FIFO there (an `open` for reading blocks
//! until a writer appears, which is never), a symlink to `/dev/zero` (reads never end) or a
//! huge file. One planted entry would then hang every later `airlock exec`, `airlock
//! sandbox` or `airlock serve` thread. So every such read goes through [`read_untrusted`]:
//! - the open never blocks: `O_NONBLOCK` (a FIFO opens at once), `O_NOCTTY` (a terminal
//!   does not become the controlling one), `O_CLOEXEC`, and `O_NOFOLLOW` when the caller
//!   says the last component must not be a symlink ([`Follow::No`]);
//! - the opened file is judged by `fstat`, not by the path: only a regular file is read —
//!   plus `/dev/null` (character device 1:3), read as empty, since `GIT_CONFIG_GLOBAL=/dev/null`
//!   is git's own way of saying "no configuration";
//! - the read stops after the caller's limit ([`Limit`]).
//!
//! Anything else is an [`UntrustedFileError`] naming the file and what it is, which callers
//! treat as unsafe (kept in the sandbox, or protected as it is). Must not: read more than the
//! limit plus one byte, or block in `open` or `read` on anything but a slow regular file.

use std::io::Read as _;
use std::os::unix::fs::FileTypeExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::path::PathBuf;

/// Whether the last component of the path may be a symlink (git follows symlinks for every
/// file it reads; Airlock follows them where git does, and judges the target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Follow a symlink, as git does.
    Yes,
    /// Refuse a symlink (`O_NOFOLLOW`).
    No,
}

/// How much of the file is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The whole file, which must not be longer than this many bytes.
    Whole(u64),
    /// At most this many bytes from the start (git reads only a prefix of `HEAD`).
    Prefix(u64),
}

/// Why a file a sandboxed command could have written was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} {why}", path.display())]
pub struct UntrustedFileError {
    /// The file.
    pub path: PathBuf,
    /// What it is or what failed ("is a FIFO, not a regular file", "is larger than …").
    pub why: String,
    /// Which kind of problem.
    pub problem: UntrustedProblem,
}

/// The kinds of [`UntrustedFileError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UntrustedProblem {
    /// Not a regular file (FIFO, socket, device, directory, refused symlink).
    NotRegular,
    /// Longer than a [`Limit::Whole`] limit.
    TooLarge,
    /// `open`, `fstat` or `read` failed.
    Unreadable,
}

/// The device number of `/dev/null` (major 1, minor 3 on Linux).
const DEV_NULL_RDEV: u64 = (1 << 8) | 3;

/// The content of `path` (see the module docs); `Ok(None)` when it does not exist (or a
/// parent is missing or not a directory).
///
/// # Errors
/// [`UntrustedFileError`] when the path is not a regular file (a FIFO, a socket, a device
/// other than `/dev/null`, a directory, a symlink under [`Follow::No`]), is longer than a
/// [`Limit::Whole`] limit, or cannot be opened or read.
pub fn read_untrusted(
    path: &Path,
    follow: Follow,
    limit: Limit,
) -> Result<Option<Vec<u8>>, UntrustedFileError> {
    let fail = |problem: UntrustedProblem, why: String| UntrustedFileError {
        path: path.to_path_buf(),
        why,
        problem,
    };
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    if follow == Follow::No {
        flags |= libc::O_NOFOLLOW;
    }
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
    {
        Ok(file) => file,
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(error) if error.raw_os_error() == Some(libc::ELOOP) && follow == Follow::No => {
            return Err(fail(
                UntrustedProblem::NotRegular,
                "is a symlink, which is not followed here".to_owned(),
            ));
        }
        Err(error) => {
            return Err(fail(
                UntrustedProblem::Unreadable,
                format!("cannot be opened ({error})"),
            ));
        }
    };
    let meta = file.metadata().map_err(|error| {
        fail(
            UntrustedProblem::Unreadable,
            format!("cannot be inspected ({error})"),
        )
    })?;
    let kind = meta.file_type();
    if kind.is_char_device() && meta.rdev() == DEV_NULL_RDEV {
        return Ok(Some(Vec::new()));
    }
    if !kind.is_file() {
        return Err(fail(
            UntrustedProblem::NotRegular,
            format!("is {}, not a regular file", describe(&meta)),
        ));
    }
    let (bound, whole) = match limit {
        Limit::Whole(max) => (max, true),
        Limit::Prefix(max) => (max, false),
    };
    let too_large = || {
        fail(
            UntrustedProblem::TooLarge,
            format!("is larger than {bound} bytes"),
        )
    };
    if whole && meta.len() > bound {
        return Err(too_large());
    }
    // Sized from the file (at most the bound) so that it is read in one call, not grown in
    // small steps.
    let expected = meta.len().min(bound).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    file.take(bound.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| {
            fail(
                UntrustedProblem::Unreadable,
                format!("cannot be read ({error})"),
            )
        })?;
    if bytes.len() as u64 > bound {
        if whole {
            return Err(too_large());
        }
        bytes.truncate(usize::try_from(bound).unwrap_or(usize::MAX));
    }
    Ok(Some(bytes))
}

/// What kind of file `meta` describes, with an article ("a FIFO").
fn describe(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symlink"
    } else {
        "a special file"
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
pub(crate) mod tests {
    use super::*;

    /// Makes a FIFO at `path`.
    pub(crate) fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    #[test]
    fn fifos_devices_and_huge_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let whole = Limit::Whole(1 << 20);
        let error = read_untrusted(&fifo, Follow::Yes, whole).unwrap_err();
        assert!(error.to_string().contains("is a FIFO"), "{error}");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let error = read_untrusted(&zero, Follow::Yes, whole).unwrap_err();
        assert!(error.to_string().contains("character device"), "{error}");
        let error = read_untrusted(&zero, Follow::No, whole).unwrap_err();
        assert!(error.to_string().contains("symlink"), "{error}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 4096]).unwrap();
        let error = read_untrusted(&big, Follow::Yes, Limit::Whole(100)).unwrap_err();
        assert!(error.to_string().contains("larger than 100"), "{error}");
        assert_eq!(
            read_untrusted(&big, Follow::Yes, Limit::Prefix(3)).unwrap(),
            Some(b"xxx".to_vec())
        );
        assert!(read_untrusted(dir.path(), Follow::Yes, whole).is_err());
    }

    #[test]
    fn regular_files_dev_null_and_missing_paths_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        std::fs::write(&file, "[core]\n").unwrap();
        let whole = Limit::Whole(1 << 20);
        assert_eq!(
            read_untrusted(&file, Follow::No, whole).unwrap(),
            Some(b"[core]\n".to_vec())
        );
        assert_eq!(
            read_untrusted(Path::new("/dev/null"), Follow::Yes, whole).unwrap(),
            Some(Vec::new())
        );
        let link = dir.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        assert_eq!(
            read_untrusted(&link, Follow::Yes, whole).unwrap(),
            Some(Vec::new())
        );
        assert_eq!(
            read_untrusted(&dir.path().join("missing"), Follow::Yes, whole).unwrap(),
            None
        );
        assert_eq!(
            read_untrusted(&file.join("below-a-file"), Follow::Yes, whole).unwrap(),
            None
        );
    }
}
