//! Choosing the bubblewrap executable (Debian package `bubblewrap`) — never from `PATH`.
//!
//! The sandbox is only as trustworthy as the `bwrap` it runs: if a confined command can
//! replace that file (or any directory on its way), every later run is unconfined. So
//! the executable is an absolute path, either `[sandbox] bwrap_path` from `config.toml`
//! or the first of [`DEFAULT_BWRAP_PATHS`] that exists, and it is refused when the file
//! or any ancestor directory (before and after resolving symlinks):
//! - lies inside a writable root of the effective profile (the sandbox could write it);
//! - is not owned by root (its owner, e.g. the launching user, can replace it);
//! - is writable by group or others.
//!
//! `PATH` is ignored on purpose: it routinely holds directories the sandbox can write
//! (`~/.local/bin`, `node_modules/.bin`, a workspace's `bin/`).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use airlock_permissions::{FileSystemPolicyQueries, ResolveContext};
use airlock_protocol::FileSystemSandboxPolicy;

/// Where the system bubblewrap is looked for when `[sandbox] bwrap_path` is not set, in
/// order (Debian/Ubuntu install `/usr/bin/bwrap`).
pub const DEFAULT_BWRAP_PATHS: [&str; 3] = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];

/// bubblewrap is missing or cannot be trusted. Nothing runs when this is returned.
#[derive(Debug, thiserror::Error)]
pub enum BwrapError {
    /// None of the default locations holds a `bwrap`.
    #[error(
        "bubblewrap (`bwrap`) was not found at {}, and Airlock never runs a sandboxed command unconfined (PATH is not searched); install it (Debian/Ubuntu: `apt-get install bubblewrap`), or set `[sandbox] bwrap_path` in config.toml to a root-owned absolute path, and run `airlock doctor`",
        DEFAULT_BWRAP_PATHS.join(", ")
    )]
    NotFound,
    /// The configured path is relative.
    #[error(
        "`[sandbox] bwrap_path` = {0:?} is not an absolute path; set it to an absolute path such as /usr/bin/bwrap (PATH is never searched)"
    )]
    NotAbsolute(PathBuf),
    /// The configured path is not an executable file.
    #[error(
        "`[sandbox] bwrap_path` = {} is not an executable file; install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap` puts it at /usr/bin/bwrap) or point the key at it",
        .0.display()
    )]
    NotExecutable(PathBuf),
    /// The file or a directory on its way could be replaced by someone other than root.
    #[error(
        "refusing bubblewrap at {}: {reason}; a replaced `bwrap` would run every later command unconfined. Use a root-owned copy outside the writable roots (e.g. /usr/bin/bwrap from `apt-get install bubblewrap`) or set `[sandbox] bwrap_path`",
        .path.display()
    )]
    Untrusted {
        /// The bubblewrap path that was refused.
        path: PathBuf,
        /// Which file or directory makes it replaceable, and why.
        reason: String,
    },
}

/// Where the chosen bubblewrap came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BwrapSource {
    /// `[sandbox] bwrap_path` in the configuration.
    Configured,
    /// The first existing entry of [`DEFAULT_BWRAP_PATHS`].
    Default,
}

/// The bubblewrap executable to run and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwrapChoice {
    /// Absolute path of the executable (as configured or found, not symlink-resolved).
    pub path: PathBuf,
    /// Configured or default.
    pub source: BwrapSource,
}

impl BwrapChoice {
    /// One sentence for `airlock doctor`: which file and why it is trusted.
    #[must_use]
    pub fn explanation(&self) -> String {
        let origin = match self.source {
            BwrapSource::Configured => "configured by `[sandbox] bwrap_path`".to_owned(),
            BwrapSource::Default => format!(
                "first existing default location ({}); PATH is never searched",
                DEFAULT_BWRAP_PATHS.join(", ")
            ),
        };
        format!(
            "{}: {origin}; the file and every directory above it are root-owned and not writable by group or others",
            self.path.display()
        )
    }
}

/// Chooses bubblewrap: `configured` (must be absolute) or the first existing default
/// location, then checks it cannot be replaced (module docs). `writable_roots` are the
/// effective profile's writable roots (absolute); pass none when no profile applies.
///
/// # Errors
/// [`BwrapError`] naming the path and the fix.
pub fn choose_bwrap(
    configured: Option<&Path>,
    writable_roots: &[PathBuf],
) -> Result<BwrapChoice, BwrapError> {
    let choice = match configured {
        Some(path) => {
            if !path.is_absolute() {
                return Err(BwrapError::NotAbsolute(path.to_path_buf()));
            }
            if !is_executable_file(path) {
                return Err(BwrapError::NotExecutable(path.to_path_buf()));
            }
            BwrapChoice {
                path: path.to_path_buf(),
                source: BwrapSource::Configured,
            }
        }
        None => DEFAULT_BWRAP_PATHS
            .iter()
            .map(PathBuf::from)
            .find(|candidate| is_executable_file(candidate))
            .map(|path| BwrapChoice {
                path,
                source: BwrapSource::Default,
            })
            .ok_or(BwrapError::NotFound)?,
    };
    check_trusted(&choice.path, writable_roots)?;
    Ok(choice)
}

/// Refuses `path` when it, its symlink target, or any ancestor directory of either is
/// inside a writable root, not root-owned, or group/other-writable.
fn check_trusted(path: &Path, writable_roots: &[PathBuf]) -> Result<(), BwrapError> {
    let untrusted = |reason: String| BwrapError::Untrusted {
        path: path.to_path_buf(),
        reason,
    };
    let resolved = airlock_permissions::resolution_memo::canonicalize(path)
        .map_err(|error| untrusted(format!("it cannot be resolved ({error})")))?;
    for spelled in [path, resolved.as_path()] {
        for component in spelled.ancestors() {
            if let Some(root) = writable_roots
                .iter()
                .find(|root| component.starts_with(root))
            {
                return Err(untrusted(format!(
                    "{} is inside the writable root {}",
                    component.display(),
                    root.display()
                )));
            }
            // The entry itself, not what a symlink points to: a user-owned symlink in a
            // root-owned directory could be repointed.
            let meta = std::fs::symlink_metadata(component).map_err(|error| {
                untrusted(format!(
                    "{} cannot be inspected ({error})",
                    component.display()
                ))
            })?;
            if meta.uid() != 0 {
                return Err(untrusted(format!(
                    "{} is owned by uid {}, not root",
                    component.display(),
                    meta.uid()
                )));
            }
            if !meta.file_type().is_symlink() && meta.mode() & 0o022 != 0 {
                return Err(untrusted(format!(
                    "{} is writable by group or others (mode {:o})",
                    component.display(),
                    meta.mode() & 0o7777
                )));
            }
        }
    }
    Ok(())
}

/// The profile's writable roots, each also with symlinks resolved where it exists: the
/// `writable_roots` argument of [`choose_bwrap`].
///
/// A writable `/` (`":root" = "write"`, kept under bubblewrap only for its deny entries)
/// is left out: such a profile offers no boundary a trusted `bwrap` could keep — the
/// command may replace any program the host runs later (`git`, the shell, Airlock itself)
/// and every start-up file — so refusing `/usr/bin/bwrap` for it would only stop the deny
/// entries from being enforced. The ownership and mode checks still apply.
pub fn writable_roots(policy: &FileSystemSandboxPolicy, cwd: &Path) -> Vec<PathBuf> {
    policy
        .get_writable_roots(&ResolveContext::new(cwd))
        .into_iter()
        .flat_map(|root| {
            let resolved = airlock_permissions::resolution_memo::canonicalize(&root.root).ok();
            std::iter::once(root.root).chain(resolved)
        })
        .filter(|root| root.parent().is_some())
        .collect()
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn fake_bwrap(dir: &Path) -> PathBuf {
        let path = dir.join("bwrap");
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn relative_configured_path_is_refused() {
        let error = choose_bwrap(Some(Path::new("bin/bwrap")), &[]).unwrap_err();
        assert!(matches!(error, BwrapError::NotAbsolute(_)), "{error}");
        assert!(error.to_string().contains("absolute"));
    }

    #[test]
    fn missing_configured_path_is_refused() {
        let error = choose_bwrap(Some(Path::new("/nonexistent/bwrap")), &[]).unwrap_err();
        assert!(matches!(error, BwrapError::NotExecutable(_)), "{error}");
    }

    #[test]
    fn world_writable_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let fake = fake_bwrap(dir.path());
        let error = choose_bwrap(Some(&fake), &[]).unwrap_err().to_string();
        assert!(error.contains("writable by group or others"), "{error}");
    }

    #[test]
    fn non_root_owned_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fake = fake_bwrap(dir.path());
        // SAFETY-free: chown through std (root in tests; skip otherwise).
        if std::os::unix::fs::chown(&fake, Some(1000), Some(1000)).is_err() {
            return;
        }
        let error = choose_bwrap(Some(&fake), &[]).unwrap_err().to_string();
        assert!(error.contains("not root"), "{error}");
    }

    #[test]
    fn path_inside_a_writable_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fake = fake_bwrap(dir.path());
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let error = choose_bwrap(Some(&fake), &[root]).unwrap_err().to_string();
        assert!(error.contains("inside the writable root"), "{error}");
    }

    #[test]
    fn symlink_into_an_untrusted_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let fake = fake_bwrap(dir.path());
        let links = tempfile::tempdir().unwrap();
        let link = links.path().join("bwrap");
        std::os::unix::fs::symlink(&fake, &link).unwrap();
        let error = choose_bwrap(Some(&link), &[]).unwrap_err().to_string();
        assert!(error.contains("writable by group or others"), "{error}");
    }

    #[test]
    fn system_bwrap_is_chosen_when_installed() {
        if !Path::new("/usr/bin/bwrap").exists() {
            return;
        }
        let choice = choose_bwrap(None, &[PathBuf::from("/tmp")]).unwrap();
        assert_eq!(choice.path, Path::new("/usr/bin/bwrap"));
        assert_eq!(choice.source, BwrapSource::Default);
        let refused = choose_bwrap(None, &[PathBuf::from("/usr")]).unwrap_err();
        assert!(
            refused.to_string().contains("writable root /usr"),
            "{refused}"
        );
    }
}
