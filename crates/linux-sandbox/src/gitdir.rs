//! What must stay read-only for one `.git` entry — the top `.git` of each writable root,
//! every nested repository the scan finds, and the repository enclosing a root
//! ([`protect_enclosing`]) — beyond the entry itself: everything git reads that repository
//! from (`gitdir:` target, common directory, symlinked `config`/`hooks`, included config,
//! an outside `core.hooksPath`, other worktrees' `.git` files; found by
//! [`airlock_permissions::git_metadata()`]), wherever it is (spec 04 §Compilation and
//! materialisation, issue 11 item 1). The resolver calls [`protect_git_entry`] once per
//! `.git` it knows of and routes the result to the writable root whose bind covers it.
//!
//! Decisions, all fail closed:
//! - an existing location inside a writable root is bound read-only; one outside every
//!   writable root is read-only already;
//! - a missing location (dangling pointer) inside a writable root gets a read-only
//!   placeholder at its first missing component, so the command cannot create the
//!   repository git would then use; an existing empty directory is covered the same way
//!   (it may be another launch's placeholder that is about to go);
//! - a symlink on the way that the command could re-point, a git or common directory that
//!   contains a writable root (the command could write its config or hooks through that
//!   root) and a pointer that cannot be read stop the launch with an error naming the file.

use std::path::{Path, PathBuf};

use airlock_permissions::{GitMetadataRole, ProtectAt, enclosing_git_entries, git_metadata};

use crate::resolve::{ResolveError, first_symlink, is_empty_dir};

/// Mounts one `.git` entry needs (besides binding the entry itself read-only).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GitProtection {
    /// Existing directories or files to bind read-only (symlinks resolved).
    pub read_only: Vec<PathBuf>,
    /// Paths to cover with an empty read-only placeholder directory (missing, or empty).
    pub placeholders: Vec<PathBuf>,
}

/// Whether this process may create entries in `dir`. The sandboxed command runs as the same
/// user with fewer rights, so a directory the launcher cannot write needs no placeholder —
/// and creating one there would fail the launch (another user's directory under `/tmp`).
#[cfg(unix)]
#[allow(unsafe_code)]
fn launcher_can_write(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

/// Without a way to ask, assume it can (a placeholder too many, never one too few).
#[cfg(not(unix))]
fn launcher_can_write(_dir: &Path) -> bool {
    true
}

/// The protection of `dot_git` (a `.git` directory, pointer file, or symlink to either; its
/// parent without symlinks) given the writable roots (canonical).
///
/// # Errors
/// [`ResolveError::Git`], [`ResolveError::ReadOnlyCrossesSymlink`] or
/// [`ResolveError::GitDirContainsWritableRoot`], see the module docs.
pub(crate) fn protect_git_entry(
    dot_git: &Path,
    writable_roots: &[PathBuf],
) -> Result<GitProtection, ResolveError> {
    let in_writable = |p: &Path| writable_roots.iter().any(|r| p.starts_with(r));
    let mut out = GitProtection::default();
    let metadata = git_metadata(dot_git)?;
    for location in &metadata.paths {
        if let Some(link) = first_symlink(&location.lexical)
            && in_writable(link.parent().unwrap_or(Path::new("/")))
        {
            return Err(ResolveError::ReadOnlyCrossesSymlink {
                path: location.lexical.clone(),
                symlink: link,
            });
        }
        match &location.protect {
            ProtectAt::Existing(path) => {
                // Only a git or common directory holds `config` and `hooks/` at fixed
                // places a writable root inside it could reach; any other location that
                // contains a deeper root is bound read-only before that root's bind.
                let holds_repository = matches!(
                    location.role,
                    GitMetadataRole::GitDir | GitMetadataRole::CommonDir
                );
                if holds_repository
                    && let Some(root) = writable_roots.iter().find(|r| r.starts_with(path))
                {
                    return Err(ResolveError::GitDirContainsWritableRoot {
                        dot_git: dot_git.to_path_buf(),
                        git_dir: path.clone(),
                        root: root.clone(),
                    });
                }
                if !in_writable(path) {
                    continue;
                }
                if is_empty_dir(path) {
                    out.placeholders.push(path.clone());
                } else {
                    out.read_only.push(path.clone());
                }
            }
            ProtectAt::Missing(path) => {
                if path
                    .parent()
                    .is_some_and(|dir| in_writable(dir) && launcher_can_write(dir))
                {
                    out.placeholders.push(path.clone());
                }
            }
        }
    }
    Ok(out)
}

/// The repository git finds above `root` (its discovery walks up from a directory without
/// `.git`): a sandboxed command must not change it either, nor create one that a later
/// `git` run in the workspace would find. Walking up from `root`'s parent (see
/// [`enclosing_git_entries`]): the first `.git` git would use ends the walk — it is bound
/// read-only when inside a writable root and returned (its git locations are protected
/// like any other); on the way, inside writable roots, every missing `.git` gets a
/// placeholder so it cannot be created and every `.git` directory git passes over stays as
/// it is.
///
/// # Errors
/// [`ResolveError::ReadOnlyCrossesSymlink`] for a `.git` symlink inside a writable root (the
/// command could re-point it).
pub(crate) fn protect_enclosing(
    root: &Path,
    writable_roots: &[PathBuf],
) -> Result<(GitProtection, Option<PathBuf>), ResolveError> {
    let in_writable = |p: &Path| writable_roots.iter().any(|r| p.starts_with(r));
    let found = enclosing_git_entries(root, writable_roots);
    let mut out = GitProtection {
        read_only: Vec::new(),
        placeholders: found
            .missing
            .into_iter()
            .filter(|p| p.parent().is_some_and(launcher_can_write))
            .collect(),
    };
    // Directories git walks past must stay as they are (filled in, git would use them).
    for skipped in found.skipped {
        if is_empty_dir(&skipped) {
            out.placeholders.push(skipped);
        } else {
            out.read_only.push(skipped);
        }
    }
    let Some(dot_git) = found.existing else {
        return Ok((out, None));
    };
    if in_writable(&dot_git) {
        if std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ResolveError::ReadOnlyCrossesSymlink {
                symlink: dot_git.clone(),
                path: dot_git,
            });
        }
        if is_empty_dir(&dot_git) {
            out.placeholders.push(dot_git.clone());
        } else {
            out.read_only.push(dot_git.clone());
        }
    }
    Ok((out, Some(dot_git)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
mod tests {
    use super::*;

    fn base() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        (dir, base)
    }

    #[test]
    fn targets_inside_writable_roots_are_bound_or_covered() {
        let (_dir, base) = base();
        let ws = base.join("ws");
        let main = base.join("elsewhere/main.git");
        std::fs::create_dir_all(main.join("worktrees/wt")).unwrap();
        std::fs::write(main.join("worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::write(main.join("worktrees/wt/HEAD"), "ref: x\n").unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let pointer = format!("gitdir: {}\n", main.join("worktrees/wt").display());
        std::fs::write(ws.join(".git"), pointer).unwrap();
        // Only the workspace writable: the main repository is read-only already.
        let got = protect_git_entry(&ws.join(".git"), std::slice::from_ref(&ws)).unwrap();
        assert_eq!(got, GitProtection::default());
        // The main repository in another writable root: both directories bound.
        let roots = [ws.clone(), base.join("elsewhere")];
        let got = protect_git_entry(&ws.join(".git"), &roots).unwrap();
        assert_eq!(got.read_only, vec![main.join("worktrees/wt"), main.clone()]);
        // Dangling pointer: the first missing component gets a placeholder.
        std::fs::write(ws.join(".git"), "gitdir: ./.bare\n").unwrap();
        let got = protect_git_entry(&ws.join(".git"), &roots).unwrap();
        assert_eq!(got.placeholders, vec![ws.join(".bare")]);
    }

    #[test]
    fn symlinks_and_git_dirs_holding_roots_are_refused() {
        let (_dir, base) = base();
        let ws = base.join("ws");
        std::fs::create_dir_all(base.join("real.git")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink(base.join("real.git"), ws.join("link")).unwrap();
        std::fs::write(ws.join(".git"), "gitdir: link\n").unwrap();
        let roots = [ws.clone()];
        let error = protect_git_entry(&ws.join(".git"), &roots).unwrap_err();
        assert!(matches!(error, ResolveError::ReadOnlyCrossesSymlink { .. }));
        std::fs::write(ws.join(".git"), "gitdir: ..\n").unwrap();
        let error = protect_git_entry(&ws.join(".git"), &roots).unwrap_err();
        assert!(error.to_string().contains("contains the writable root"));
    }

    #[test]
    fn the_enclosing_repository_is_found_and_missing_ones_are_covered() {
        let (_dir, base) = base();
        let ws = base.join("super/a/ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(base.join("super/.git/hooks")).unwrap();
        std::fs::write(base.join("super/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        // Nothing writable above the workspace: nothing to mount, the repository is reported.
        let (got, found) = protect_enclosing(&ws, std::slice::from_ref(&ws)).unwrap();
        assert_eq!(got, GitProtection::default());
        assert_eq!(found, Some(base.join("super/.git")));
        // Writable above: `super/a/.git` must not appear, `super/.git` stays as it is.
        let (got, found) = protect_enclosing(&ws, &[ws.clone(), base.clone()]).unwrap();
        assert_eq!(got.placeholders, vec![base.join("super/a/.git")]);
        assert_eq!(got.read_only, vec![base.join("super/.git")]);
        assert_eq!(found, Some(base.join("super/.git")));
    }
}
