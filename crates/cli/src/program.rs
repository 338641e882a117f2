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
    /// A script whose `#!` interpreter is missing (127) or not executable (126): the
    /// kernel refuses to start it, nothing about the sandbox.
    BadInterpreter {
        /// The script.
        script: PathBuf,
        /// The interpreter named on its `#!` line.
        interpreter: PathBuf,
        /// Missing (`true`) or present but not executable.
        missing: bool,
    },
}

impl Unrunnable {
    /// The exit status (127 or 126).
    pub const fn exit_code(&self) -> u8 {
        match self {
            Self::NotFound(_) | Self::BadInterpreter { missing: true, .. } => COMMAND_NOT_FOUND,
            Self::NotExecutable(..) | Self::BadInterpreter { missing: false, .. } => NOT_EXECUTABLE,
        }
    }

    /// The machine-readable status word for `--json`.
    pub const fn status(&self) -> &'static str {
        match self {
            Self::NotFound(_) | Self::BadInterpreter { missing: true, .. } => "command_not_found",
            Self::NotExecutable(..) | Self::BadInterpreter { missing: false, .. } => {
                "not_executable"
            }
        }
    }

    /// The one-line message, without the `airlock: ` prefix.
    pub fn message(&self) -> String {
        match self {
            Self::NotFound(name) => format!("command not found: {name}"),
            Self::NotExecutable(path, why) => {
                format!("cannot execute {}: {why}", path.display())
            }
            Self::BadInterpreter {
                script,
                interpreter,
                missing,
            } => format!(
                "cannot execute {}: bad interpreter {}: {}",
                script.display(),
                interpreter.display(),
                if *missing {
                    "No such file or directory"
                } else {
                    "Permission denied (not an executable file)"
                }
            ),
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
            Some(Ok(())) => check_interpreter(full, cwd),
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
            Some(Ok(())) => return check_interpreter(candidate, cwd),
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

/// How much of a script is read to find its `#!` line (Linux reads at most 256 bytes).
const SHEBANG_BYTES: u64 = 256;

/// `program` unless it is a `#!` script whose interpreter cannot be executed: the kernel
/// would fail the exec with ENOENT / EACCES, which a shell reports as 127 / 126 "bad
/// interpreter". An unreadable file or one without `#!` is left to the exec.
fn check_interpreter(program: PathBuf, cwd: &Path) -> Result<PathBuf, Unrunnable> {
    use std::io::Read as _;
    let mut head = Vec::new();
    let read = std::fs::File::open(&program)
        .and_then(|file| file.take(SHEBANG_BYTES).read_to_end(&mut head));
    if read.is_err() {
        return Ok(program);
    }
    let Some(line) = head.strip_prefix(b"#!") else {
        return Ok(program);
    };
    let line = line.split(|byte| *byte == b'\n').next().unwrap_or_default();
    let Some(name) = line
        .split(|byte| *byte == b' ' || *byte == b'\t')
        .find(|word| !word.is_empty())
    else {
        return Ok(program);
    };
    use std::os::unix::ffi::OsStrExt as _;
    let interpreter = PathBuf::from(OsStr::from_bytes(name));
    let missing = match classify(&cwd.join(&interpreter)) {
        Some(Ok(())) => return Ok(program),
        Some(Err(_)) => false,
        None => true,
    };
    Err(Unrunnable::BadInterpreter {
        script: program,
        interpreter,
        missing,
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

    #[test]
    fn scripts_with_a_bad_interpreter() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        write("missing.sh", "#!/nonexistent/interp -x\necho hi\n");
        write("plain", "not a script\n");
        std::fs::write(dir.path().join("interp"), "").unwrap();
        write("noexec.sh", "#! ./interp\n");
        write("good.sh", "#!/bin/sh\necho hi\n");
        let path = Some(OsStr::new("/usr/bin:/bin"));
        let err = check_program(OsStr::new("./missing.sh"), path, dir.path()).unwrap_err();
        assert_eq!(err.exit_code(), COMMAND_NOT_FOUND);
        assert!(
            err.message()
                .ends_with("bad interpreter /nonexistent/interp: No such file or directory"),
            "{}",
            err.message()
        );
        let err = check_program(OsStr::new("./noexec.sh"), path, dir.path()).unwrap_err();
        assert_eq!(err.exit_code(), NOT_EXECUTABLE);
        assert!(err.message().contains("bad interpreter ./interp"));
        assert!(check_program(OsStr::new("./good.sh"), path, dir.path()).is_ok());
        assert!(check_program(OsStr::new("./plain"), path, dir.path()).is_ok());
    }
}
