//! Path spelling for Seatbelt parameters (reference `seatbelt.md` §3: roots and exclusions are
//! canonicalised, so `/var/...` is written as `/private/var/...`, the path the kernel checks).

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::absolutize;
use airlock_permissions::normalize_lexically;

/// How many dangling symlinks are followed before giving up (the kernel's own `ELOOP` bound).
const MAX_DANGLING_LINKS: usize = 40;

/// `path` with its longest existing ancestor resolved through symlinks and the missing rest
/// appended unchanged.
///
/// Codex canonicalises a path only when it exists. Airlock also resolves the existing prefix
/// of a missing path (a `.codex` not yet created under `/var/folders/...`): otherwise the
/// exclusion would keep the `/var` spelling while its root uses `/private/var`, and Seatbelt,
/// which matches resolved paths, would never apply it. A dangling symlink is followed to the
/// path it would create, since that is where a write through it lands.
pub(crate) fn canonicalize_for_seatbelt(path: &Path) -> PathBuf {
    resolve(&normalize_lexically(path), MAX_DANGLING_LINKS)
}

fn resolve(path: &Path, links_left: usize) -> PathBuf {
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let mut current = path;
    loop {
        if let Ok(resolved) = std::fs::canonicalize(current) {
            return append(resolved, &missing);
        }
        if links_left > 0
            && let Ok(target) = std::fs::read_link(current)
        {
            let base = current.parent().unwrap_or(Path::new("/"));
            let followed = resolve(&absolutize(&target, base), links_left - 1);
            return append(followed, &missing);
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                current = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The spellings under which Seatbelt may see a protected path: the path itself with only its
/// parent resolved (what `unlink`, `rename` and `symlink` act on), then, when different, the
/// fully resolved target (what reads and writes through a symlink act on). Excluding only the
/// target would let a sandboxed process remove a protecting symlink and recreate the name.
pub(crate) fn exclusion_spellings(path: &Path) -> Vec<PathBuf> {
    let path = normalize_lexically(path);
    let location = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => canonicalize_for_seatbelt(parent).join(name),
        _ => path.clone(),
    };
    let target = canonicalize_for_seatbelt(&path);
    if target == location {
        vec![location]
    } else {
        vec![location, target]
    }
}

/// `base` joined with the collected missing names (collected innermost first).
fn append(base: PathBuf, missing: &[&std::ffi::OsStr]) -> PathBuf {
    missing.iter().rev().fold(base, |acc, name| acc.join(name))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn missing_paths_keep_their_spelling() {
        assert_eq!(
            canonicalize_for_seatbelt(Path::new("/nonexistent-airlock/a/../b/.codex")),
            PathBuf::from("/nonexistent-airlock/b/.codex")
        );
    }

    #[test]
    fn existing_prefix_is_resolved() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let real = dir.path().join("real");
        std::fs::create_dir(&real)?;
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link)?;
        let canonical_real = std::fs::canonicalize(&real)?;
        assert_eq!(
            canonicalize_for_seatbelt(&link.join("missing/.git")),
            canonical_real.join("missing/.git")
        );
        Ok(())
    }

    #[test]
    fn exclusions_cover_the_link_and_its_target() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let canonical_dir = std::fs::canonicalize(dir.path())?;
        std::fs::create_dir(dir.path().join("real"))?;
        std::os::unix::fs::symlink("real", dir.path().join(".git"))?;
        assert_eq!(
            exclusion_spellings(&dir.path().join(".git")),
            vec![canonical_dir.join(".git"), canonical_dir.join("real")]
        );
        assert_eq!(
            exclusion_spellings(&dir.path().join(".codex")),
            vec![canonical_dir.join(".codex")]
        );
        Ok(())
    }

    #[test]
    fn dangling_symlink_is_followed_to_its_target() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let canonical_dir = std::fs::canonicalize(dir.path())?;
        std::os::unix::fs::symlink("elsewhere/cfg", dir.path().join(".codex"))?;
        assert_eq!(
            canonicalize_for_seatbelt(&dir.path().join(".codex")),
            canonical_dir.join("elsewhere/cfg")
        );
        Ok(())
    }
}
