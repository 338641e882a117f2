//! Lexical path normalisation (reference §A6: drop `.`, pop on `..`, no symlink resolution).

use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

/// `path` joined to `cwd` when relative, with `.` dropped and `..` popping the previous
/// component (never above the root). The filesystem is not consulted.
#[must_use]
pub fn normalize_lexically(cwd: &Path, path: &Path) -> PathBuf {
    let joined = cwd.join(path);
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
