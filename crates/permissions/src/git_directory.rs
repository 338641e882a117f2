//! git's own test of whether a directory is a git directory (`is_git_directory` in git's
//! `setup.c`, git 2.47), which decides what its discovery takes at every level of the walk
//! up: a `.git` directory, or the directory itself as a bare repository (what `git init
//! --bare` makes, but any directory passing the test will do; `safe.bareRepository`
//! defaults to `all`). Red-team F10: a sandboxed command makes `ws/planted` pass the test,
//! and `git -C planted log` uses it.
//!
//! The test, as git does it:
//! - `HEAD` is a valid head: a symlink whose target starts with `refs/`, or a file whose
//!   first 255 bytes are `ref:` + blanks + `refs/…`, or start with a hexadecimal object
//!   name (40 digits; SHA-256 names start the same way);
//! - the common directory (`GIT_COMMON_DIR`, else the `commondir` file, relative to the
//!   directory, else the directory itself) holds `objects` (or `GIT_OBJECT_DIRECTORY` is
//!   given) and `refs`, each searchable (`access(X_OK)`: a directory, or an executable
//!   file).
//!
//! Files are read with [`crate::read_untrusted`]: a `HEAD` or `commondir` that is a FIFO
//! or a device is an error (git itself would block on it), never a hang.

use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use crate::git_metadata::{MAX_GIT_FILE_BYTES, parse_commondir};
use crate::untrusted_file::{Follow, Limit, UntrustedFileError, UntrustedProblem, read_untrusted};

/// The environment variables that change git's test: `GIT_COMMON_DIR` and
/// `GIT_OBJECT_DIRECTORY` (absolute, or relative to the working directory: the caller
/// resolves them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitDirEnv {
    /// `GIT_COMMON_DIR`.
    pub common_dir: Option<PathBuf>,
    /// `GIT_OBJECT_DIRECTORY`.
    pub object_directory: Option<PathBuf>,
}

/// How many bytes of `HEAD` git looks at.
const HEAD_PREFIX: u64 = 255;

/// Whether git takes `dir` for a git directory (see the module docs).
///
/// # Errors
/// [`UntrustedFileError`] when `HEAD` or `commondir` is a FIFO, a device or a socket, or
/// `commondir` is unreadable, oversized or empty: git would block on it or stop.
pub fn is_git_directory(dir: &Path, env: &GitDirEnv) -> Result<bool, UntrustedFileError> {
    if !valid_head(&dir.join("HEAD"))? {
        return Ok(false);
    }
    let common = common_dir(dir, env)?;
    let objects = env
        .object_directory
        .clone()
        .unwrap_or_else(|| common.join("objects"));
    Ok(searchable(&objects) && searchable(&common.join("refs")))
}

/// The common directory of the git directory `dir`: `GIT_COMMON_DIR`, else what its
/// `commondir` file names (relative to `dir`, symlinks resolved where they exist), else
/// `dir`.
///
/// # Errors
/// As [`is_git_directory`].
pub fn common_dir(dir: &Path, env: &GitDirEnv) -> Result<PathBuf, UntrustedFileError> {
    if let Some(common) = &env.common_dir {
        return Ok(common.clone());
    }
    let file = dir.join("commondir");
    let Some(bytes) = read_untrusted(&file, Follow::Yes, Limit::Whole(MAX_GIT_FILE_BYTES))? else {
        return Ok(dir.to_path_buf());
    };
    let written = parse_commondir(&bytes).map_err(|why| UntrustedFileError {
        path: file.clone(),
        why,
        problem: UntrustedProblem::TooLarge,
    })?;
    if written.is_empty() {
        return Err(UntrustedFileError {
            path: file,
            why: "is empty (git stops on it)".to_owned(),
            problem: UntrustedProblem::Unreadable,
        });
    }
    let joined = dir.join(written);
    Ok(crate::resolution_memo::canonicalize(&joined).unwrap_or(joined))
}

/// git's `validate_headref`.
fn valid_head(head: &Path) -> Result<bool, UntrustedFileError> {
    let Ok(meta) = std::fs::symlink_metadata(head) else {
        return Ok(false);
    };
    if meta.file_type().is_symlink() {
        return Ok(std::fs::read_link(head)
            .is_ok_and(|target| target.as_os_str().as_bytes().starts_with(b"refs/")));
    }
    // git opens anything else and reads it; a directory fails to read (not a head).
    if meta.is_dir() {
        return Ok(false);
    }
    let Some(bytes) = read_untrusted(head, Follow::No, Limit::Prefix(HEAD_PREFIX))? else {
        return Ok(false);
    };
    if let Some(rest) = bytes.strip_prefix(b"ref:") {
        let start = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
            .unwrap_or(rest.len());
        if rest[start..].starts_with(b"refs/") {
            return Ok(true);
        }
    }
    Ok(bytes.len() >= 40 && bytes[..40].iter().all(u8::is_ascii_hexdigit))
}

/// `access(path, X_OK) == 0`.
fn searchable(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::EXEC_OK).is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn the_test_is_gits() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let env = GitDirEnv::default();
        assert!(!is_git_directory(d, &env).unwrap());
        std::fs::create_dir_all(d.join("objects")).unwrap();
        std::fs::create_dir_all(d.join("refs")).unwrap();
        for (head, valid) in [
            ("ref: refs/heads/main\n", true),
            ("ref:\t refs/x", true),
            ("0123456789abcdef0123456789ABCDEF01234567\n", true),
            ("ref: heads/main\n", false),
            ("0123456789\n", false),
            ("", false),
        ] {
            std::fs::write(d.join("HEAD"), head).unwrap();
            assert_eq!(is_git_directory(d, &env).unwrap(), valid, "{head:?}");
        }
        std::fs::remove_file(d.join("HEAD")).unwrap();
        std::os::unix::fs::symlink("refs/heads/none", d.join("HEAD")).unwrap();
        assert!(
            is_git_directory(d, &env).unwrap(),
            "a dangling refs/ symlink"
        );
        // `objects` may be an executable file, or come from the environment.
        std::fs::remove_dir(d.join("objects")).unwrap();
        assert!(!is_git_directory(d, &env).unwrap());
        let with_objects = GitDirEnv {
            object_directory: Some(d.join("refs")),
            ..GitDirEnv::default()
        };
        assert!(is_git_directory(d, &with_objects).unwrap());
        // A commondir elsewhere supplies objects and refs.
        let main = d.join("main");
        std::fs::create_dir_all(main.join("objects")).unwrap();
        std::fs::create_dir_all(main.join("refs")).unwrap();
        std::fs::write(d.join("commondir"), "main\n").unwrap();
        assert!(is_git_directory(d, &env).unwrap());
        assert_eq!(common_dir(d, &env).unwrap(), main.canonicalize().unwrap());
    }

    #[test]
    fn a_fifo_head_or_commondir_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let fifo = |path: &Path| crate::untrusted_file::tests::mkfifo(path);
        fifo(&d.join("HEAD"));
        let error = is_git_directory(d, &GitDirEnv::default()).unwrap_err();
        assert!(error.to_string().contains("FIFO"), "{error}");
        std::fs::remove_file(d.join("HEAD")).unwrap();
        std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        fifo(&d.join("commondir"));
        assert!(is_git_directory(d, &GitDirEnv::default()).is_err());
    }
}
