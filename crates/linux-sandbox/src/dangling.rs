//! Where a dangling symlink points, for deny entries on links whose target does not exist
//! yet (issue 11 item 7): the mount plan masks that target inside a writable root.

use std::path::{Path, PathBuf};

/// Where a dangling symlink points: its target joined onto the link's (resolved) parent,
/// following further links as far as they exist (at most 40, as the kernel does).
pub(crate) fn dangling_target(link: &Path) -> PathBuf {
    let mut current = link.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        let parent = current.parent().unwrap_or(Path::new("/"));
        let parent = std::fs::canonicalize(parent)
            .ok()
            .unwrap_or_else(|| parent.to_path_buf());
        current = airlock_permissions::normalize_lexically(&parent.join(target));
        if !std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink()) {
            break;
        }
    }
    canonical_prefix(&current)
}

/// `path` with its longest existing prefix canonicalised and the rest appended.
pub(crate) fn canonical_prefix(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(current) {
            let mut out = real;
            for part in missing.iter().rev() {
                out.push(part);
            }
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
