//! Where a patch really writes (issue 11, red-team finding F6): a path as the patch names it
//! may cross symlinks that a sandboxed command planted (`ws/door -> ~/.airlock/rules`), and a
//! write through them lands wherever they point. Every path a patch touches is resolved here
//! as the kernel resolves it, so the checks judge the place that is really written, and the
//! writer can open exactly that place without following anything.
//!
//! Rule: every component but the last is resolved (each symlink replaced by its target,
//! relative targets against the folder holding the link, `..` in a target taking the parent
//! of what is resolved so far, as the kernel does); the last component is kept as named,
//! because the writer replaces it by `rename` (or removes it) and never follows it. Components
//! below the first missing one are taken as written (the writer creates them as folders).
//!
//! Must not: decide anything (the callers judge the result), or read more than `lstat` and
//! `readlink` of each component.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

/// Most symlinks followed on the way to one path (the kernel's limit, `MAXSYMLINKS`).
pub const MAX_SYMLINK_HOPS: usize = 40;

/// One path of a patch, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedTarget {
    /// The path as the patch names it (absolute, lexically normalised).
    pub path: PathBuf,
    /// Where it is really written: the parent resolved through every symlink, then the last
    /// component as named.
    pub real: PathBuf,
    /// The first symlink crossed on the way, with its text as written (`None` when the path
    /// crosses no symlink: then `real == path`).
    pub link: Option<(PathBuf, PathBuf)>,
}

impl ResolvedTarget {
    /// `door/x` → "through the symlink /ws/door (-> /h/.airlock/rules) it resolves to
    /// /h/.airlock/rules/x", or "" when no symlink is crossed.
    #[must_use]
    pub fn via(&self) -> String {
        match &self.link {
            Some((link, text)) => format!(
                "through the symlink {} (-> {}) it resolves to {}",
                link.display(),
                text.display(),
                self.real.display()
            ),
            None => String::new(),
        }
    }
}

/// Why a path cannot be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ResolveTargetError {
    /// More than [`MAX_SYMLINK_HOPS`] symlinks (a loop, as the kernel's `ELOOP`).
    #[error("{} crosses more than {MAX_SYMLINK_HOPS} symlinks (a loop?)", path.display())]
    TooManyLinks {
        /// The path.
        path: PathBuf,
    },
    /// The path is not absolute or has no last component.
    #[error("{} is not an absolute path to a file", path.display())]
    NotAFilePath {
        /// The path.
        path: PathBuf,
    },
    /// A component could not be inspected.
    #[error("cannot inspect {}: {source}", path.display())]
    Inspect {
        /// The component.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Resolves `path` (absolute) as described in the module docs.
///
/// # Errors
/// [`ResolveTargetError`]: a symlink loop, a relative path or one without a file name, a
/// component that cannot be inspected (other than "does not exist").
pub fn resolve_target(path: &Path) -> Result<ResolvedTarget, ResolveTargetError> {
    let not_a_file = || ResolveTargetError::NotAFilePath {
        path: path.to_path_buf(),
    };
    if !path.is_absolute() {
        return Err(not_a_file());
    }
    let name = match path.components().next_back() {
        Some(Component::Normal(name)) => name.to_owned(),
        _ => return Err(not_a_file()),
    };
    let parent = path.parent().ok_or_else(not_a_file)?;
    let (real_parent, link) = resolve_dir(parent, path)?;
    Ok(ResolvedTarget {
        path: path.to_path_buf(),
        real: real_parent.join(name),
        link,
    })
}

/// `dir` (absolute) with every component resolved through its symlinks, the last one
/// included; components below the first missing one are kept as written.
///
/// # Errors
/// As [`resolve_target`].
pub fn resolve_folder(dir: &Path) -> Result<PathBuf, ResolveTargetError> {
    if !dir.is_absolute() {
        return Err(ResolveTargetError::NotAFilePath {
            path: dir.to_path_buf(),
        });
    }
    resolve_dir(dir, dir).map(|(real, _)| real)
}

/// The real path ([`resolve_target`]) of every path `verified` writes or removes, keyed by
/// the path as the patch names it: what the parent judged, handed to the child so that it
/// writes exactly there (see `helper`).
///
/// # Errors
/// The first path that cannot be resolved.
pub fn real_paths_of(
    verified: &airlock_patch::VerifiedPatch,
) -> Result<BTreeMap<PathBuf, PathBuf>, ResolveTargetError> {
    let mut out = BTreeMap::new();
    let writes = verified.final_writes.iter().map(|write| write.path.clone());
    for path in writes.chain(verified.affected_paths()) {
        if let std::collections::btree_map::Entry::Vacant(entry) = out.entry(path) {
            let real = resolve_target(entry.key())?.real;
            entry.insert(real);
        }
    }
    Ok(out)
}

type Resolved = (PathBuf, Option<(PathBuf, PathBuf)>);

/// `dir` with every symlink replaced by its target; see the module docs.
fn resolve_dir(dir: &Path, whole: &Path) -> Result<Resolved, ResolveTargetError> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut real = PathBuf::from("/");
    push_components(&mut pending, &mut real, dir, true);
    let mut first_link = None;
    let mut hops = 0usize;
    let mut missing = false;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            real.pop();
            continue;
        }
        let next = real.join(&part);
        if !missing {
            match std::fs::symlink_metadata(&next) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(ResolveTargetError::TooManyLinks {
                            path: whole.to_path_buf(),
                        });
                    }
                    let text = std::fs::read_link(&next).map_err(|source| {
                        ResolveTargetError::Inspect {
                            path: next.clone(),
                            source,
                        }
                    })?;
                    if first_link.is_none() {
                        first_link = Some((next.clone(), text.clone()));
                    }
                    // The target's components come before what is still pending.
                    let mut spliced = VecDeque::new();
                    push_components(&mut spliced, &mut real, &text, text.is_absolute());
                    spliced.extend(pending);
                    pending = spliced;
                    continue;
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing = true,
                // `ENOTDIR`: a file on the way; the write fails there, as judged as written.
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => missing = true,
                Err(source) => return Err(ResolveTargetError::Inspect { path: next, source }),
            }
        }
        real = next;
    }
    Ok((real, first_link))
}

/// Queues the components of `path`; an absolute one restarts `real` at `/` when `restart`.
fn push_components(queue: &mut VecDeque<OsString>, real: &mut PathBuf, path: &Path, restart: bool) {
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => {
                if restart {
                    *real = PathBuf::from("/");
                }
            }
            Component::CurDir => {}
            Component::ParentDir => queue.push_back(OsString::from("..")),
            Component::Normal(part) => queue.push_back(part.to_owned()),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::symlink;

    fn base() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap();
        (dir, path)
    }

    #[test]
    fn a_path_without_links_resolves_to_itself() {
        let (_dir, base) = base();
        std::fs::create_dir(base.join("ws")).unwrap();
        let path = base.join("ws/new/deeper/file.txt");
        let got = resolve_target(&path).unwrap();
        assert_eq!(got.real, path);
        assert_eq!(got.link, None);
        assert_eq!(got.via(), "");
    }

    #[test]
    fn folders_are_followed_and_the_last_name_is_not() {
        let (_dir, base) = base();
        std::fs::create_dir_all(base.join("home/.airlock/rules")).unwrap();
        std::fs::create_dir(base.join("ws")).unwrap();
        symlink(base.join("home/.airlock/rules"), base.join("ws/door")).unwrap();
        // Relative, with `..`, through a second link.
        symlink("../home/.airlock", base.join("ws/up")).unwrap();
        symlink("up/rules", base.join("ws/chain")).unwrap();
        symlink(
            base.join("home/.airlock/rules/x"),
            base.join("ws/file-link"),
        )
        .unwrap();
        let got = resolve_target(&base.join("ws/door/planted.rules")).unwrap();
        assert_eq!(got.real, base.join("home/.airlock/rules/planted.rules"));
        assert_eq!(
            got.link,
            Some((base.join("ws/door"), base.join("home/.airlock/rules")))
        );
        assert!(got.via().contains("(-> "), "{}", got.via());
        let got = resolve_target(&base.join("ws/chain/a/b.rules")).unwrap();
        assert_eq!(got.real, base.join("home/.airlock/rules/a/b.rules"));
        assert_eq!(got.link.unwrap().0, base.join("ws/chain"));
        // The last component is replaced, never followed.
        let got = resolve_target(&base.join("ws/file-link")).unwrap();
        assert_eq!(got.real, base.join("ws/file-link"));
        assert_eq!(got.link, None);
    }

    #[test]
    fn dangling_links_resolve_to_what_they_name_and_loops_fail() {
        let (_dir, base) = base();
        std::fs::create_dir(base.join("ws")).unwrap();
        symlink(base.join("gone/rules"), base.join("ws/dangling")).unwrap();
        let got = resolve_target(&base.join("ws/dangling/x")).unwrap();
        assert_eq!(got.real, base.join("gone/rules/x"));
        symlink("loop-b", base.join("ws/loop-a")).unwrap();
        symlink("loop-a", base.join("ws/loop-b")).unwrap();
        assert!(matches!(
            resolve_target(&base.join("ws/loop-a/x")),
            Err(ResolveTargetError::TooManyLinks { .. })
        ));
        assert!(resolve_target(Path::new("rel/x")).is_err());
        assert!(resolve_target(Path::new("/")).is_err());
    }
}
