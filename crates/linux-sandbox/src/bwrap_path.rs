//! Finding the system bubblewrap (Debian package `bubblewrap`).

use std::path::{Path, PathBuf};

/// bubblewrap is missing or unusable.
#[derive(Debug, thiserror::Error)]
pub enum BwrapError {
    /// No `bwrap` on `PATH`.
    #[error(
        "bubblewrap (`bwrap`) was not found on PATH, and Airlock never runs a sandboxed command unconfined; install it (Debian/Ubuntu: `apt-get install bubblewrap`) or run `airlock doctor`"
    )]
    NotFound,
}

/// The first regular file named `bwrap` on `path_var` (the `PATH` value).
pub fn find_bwrap_in(path_var: Option<&std::ffi::OsStr>) -> Result<PathBuf, BwrapError> {
    let path_var = path_var.ok_or(BwrapError::NotFound)?;
    std::env::split_paths(path_var)
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| is_executable_file(candidate))
        .ok_or(BwrapError::NotFound)
}

/// [`find_bwrap_in`] for the process `PATH`.
pub fn find_bwrap() -> Result<PathBuf, BwrapError> {
    find_bwrap_in(std::env::var_os("PATH").as_deref())
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
