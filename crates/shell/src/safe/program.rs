//! Which program paths are trustworthy enough for the known-safe list
//! (spec 03 edge case 10).

use std::collections::BTreeSet;
use std::path::{Component, Path};

/// Directories whose programs are assumed to be the system's own (spec 03 edge case 10).
pub const TRUSTED_PROGRAM_DIRS: &[&str] =
    &["/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin"];

/// Whether `program` names a program the known-safe list may vouch for: a bare name
/// (resolved through `PATH`), a file directly inside one of [`TRUSTED_PROGRAM_DIRS`], or
/// a path registered with `host_executable` (given in `host_executables`).
/// `./git` and `/tmp/ls` are not trustworthy (spec 03 edge case 10); neither is a path
/// containing `..`.
pub fn is_trusted_program_path(program: &str, host_executables: &BTreeSet<String>) -> bool {
    if !program.contains('/') {
        return true;
    }
    if host_executables.contains(program) {
        return true;
    }
    let path = Path::new(program);
    if path
        .components()
        .any(|component| component == Component::ParentDir)
    {
        return false;
    }
    let has_name = path.file_name().is_some();
    has_name
        && path.parent().is_some_and(|parent| {
            TRUSTED_PROGRAM_DIRS
                .iter()
                .any(|dir| parent == Path::new(dir))
        })
}
