//! Finding the program of a command before anything runs, so a typo or a file without the
//! execute bit exits as shells do (issue 17 item 6): 127 "command not found", 126 "not
//! executable", on every path (`exec` sandboxed or not, `sandbox`). Without this, a missing
//! program inside bubblewrap looks like a sandbox denial (`bwrap: execvp ...: Permission
//! denied`, exit 1) and may even be offered for a retry without the sandbox.
//!
//! The lookup sees the host, not the sandbox: it only ever refuses early; whatever it
//! finds still runs through policy, approval and confinement.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::path::PathBuf;

/// Exit status when the program does not exist (as shells report it); nothing ran.
pub const COMMAND_NOT_FOUND: u8 = 127;

/// Exit status when the program exists but cannot be executed (as shells report it).
pub const NOT_EXECUTABLE: u8 = 126;

/// Why a program cannot be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unrunnable {
    /// Nothing of that name (on `PATH`, or at the given path).
    NotFound(String),
    /// The file exists but is a directory or lacks the execute bit.
    NotExecutable(PathBuf, &'static str),
}

impl Unrunnable {
    /// The exit status (127 or 126).
    pub const fn exit_code(&self) -> u8 {
        match self {
            Self::NotFound(_) => COMMAND_NOT_FOUND,
            Self::NotExecutable(..) => NOT_EXECUTABLE,
        }
    }

    /// The machine-readable status word for `--json`.
    pub const fn status(&self) -> &'static str {
        match self {
            Self::NotFound(_) => "command_not_found",
            Self::NotExecutable(..) => "not_executable",
        }
    }

    /// The one-line message, without the `airlock: ` prefix.
    pub fn message(&self) -> String {
        match self {
            Self::NotFound(name) => format!("command not found: {name}"),
            Self::NotExecutable(path, why) => {
                format!("cannot execute {}: {why}", path.display())
            }
        }
    }
}

/// Checks that `program` can be started: itself (against `cwd`) when it contains a `/`,
/// else the first file of that name on `path_var` (`/usr/bin:/bin` when unset) that is
/// executable; a name found only as non-executable files is "not executable".
///
/// # Errors
/// [`Unrunnable`] saying why it cannot be started.
pub fn check_program(
    program: &OsStr,
    path_var: Option<&OsStr>,
    cwd: &Path,
) -> Result<PathBuf, Unrunnable> {
    let name = program.to_string_lossy().into_owned();
    if program.as_encoded_bytes().contains(&b'/') {
        let full = airlock_permissions::normalize_lexically(&cwd.join(program));
        return match classify(&full) {
            Some(Ok(())) => Ok(full),
            Some(Err(why)) => Err(Unrunnable::NotExecutable(full, why)),
            None => Err(Unrunnable::NotFound(name)),
        };
    }
    if program.is_empty() {
        return Err(Unrunnable::NotFound(name));
    }
    let search = path_var.map_or_else(|| OsStr::new("/usr/bin:/bin").to_owned(), OsStr::to_owned);
    let mut unusable = None;
    for dir in std::env::split_paths(&search) {
        let candidate = cwd.join(dir).join(program);
        match classify(&candidate) {
            Some(Ok(())) => return Ok(candidate),
            Some(Err(why)) => {
                unusable.get_or_insert((candidate, why));
            }
            None => {}
        }
    }
    Err(match unusable {
        Some((path, why)) => Unrunnable::NotExecutable(path, why),
        None => Unrunnable::NotFound(name),
    })
}

/// `None` when nothing is there; `Some(Err(why))` for a directory or a file without any
/// execute bit.
fn classify(path: &Path) -> Option<Result<(), &'static str>> {
    let meta = std::fs::metadata(path).ok()?;
    Some(if meta.is_dir() {
        Err("it is a directory")
    } else if meta.permissions().mode() & 0o111 == 0 {
        Err("permission denied (the file is not executable)")
    } else {
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn found_missing_and_not_executable() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain.sh");
        std::fs::write(&script, "echo hi\n").unwrap();
        let path = OsStr::new("/usr/bin:/bin");
        assert!(check_program(OsStr::new("sh"), Some(path), dir.path()).is_ok());
        assert_eq!(
            check_program(OsStr::new("no-such-program-x"), Some(path), dir.path()),
            Err(Unrunnable::NotFound("no-such-program-x".to_owned()))
        );
        let err = check_program(OsStr::new("./plain.sh"), Some(path), dir.path()).unwrap_err();
        assert_eq!(err.exit_code(), NOT_EXECUTABLE);
        let err = check_program(OsStr::new("./"), Some(path), dir.path()).unwrap_err();
        assert!(err.message().contains("directory"));
        // On PATH only as a non-executable file: 126, like bash.
        let dirs = std::env::join_paths([dir.path()]).unwrap();
        let err = check_program(OsStr::new("plain.sh"), Some(&dirs), dir.path()).unwrap_err();
        assert_eq!(err.exit_code(), NOT_EXECUTABLE);
    }
}
