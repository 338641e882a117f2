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
        let parent = airlock_permissions::resolution_memo::canonicalize(parent)
            .ok()
            .unwrap_or_else(|| parent.to_path_buf());
        current = airlock_permissions::normalize_lexically(&parent.join(target));
        if !std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink()) {
            break;
        }
    }
    canonical_prefix(&current)
}

pub(crate) use airlock_permissions::resolution_memo::canonical_prefix;
