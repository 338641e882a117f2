//! Resolution of entries to concrete paths against a cwd and the environment
//! (reference `permissions-config.md` §5 "Resolution of entries").

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSpecialPath;

use crate::paths::absolutize;
use crate::paths::join_pattern;

/// What entries are resolved against: the cwd (also the workspace root of an unmaterialised
/// profile), `$TMPDIR`, and the folders that hold Airlock's and Codex's own configuration.
/// Built from the process environment with [`ResolveContext::new`], or with an explicit
/// `tmpdir` for deterministic tests and remote environments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResolveContext {
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// `$TMPDIR` when set and usable (see [`ResolveContext::new`]).
    pub tmpdir: Option<PathBuf>,
    /// `$AIRLOCK_HOME` (default `~/.airlock`), `$CODEX_HOME` (default `~/.codex`) and the
    /// `.airlock` folder of every trusted project, absolute: they hold configuration, rules
    /// and the audit log that later runs trust, so they are never writable — read-only
    /// wherever a writable root contains them (a missing one cannot be created), and a
    /// writable root inside one is refused (issue 11 item 7, finding F5).
    pub protected_homes: Vec<PathBuf>,
    /// The user's home directories (`$HOME` of the process, and the launcher's when the
    /// helper runs with the command's environment), absolute: when one lies inside a writable
    /// root, its top-level dot entries and missing startup names are read-only subpaths of
    /// that root (see `home_dotfiles`; issue 11).
    pub user_homes: Vec<PathBuf>,
    /// Why the process's `$TMPDIR` was ignored, when it was.
    pub ignored_tmpdir: Option<IgnoredTmpdir>,
}

/// A `$TMPDIR` that does not become a writable root, and why (a warning for the user).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IgnoredTmpdir {
    /// The value as set.
    pub value: PathBuf,
    /// Why it is ignored, in words.
    pub reason: String,
}

impl std::fmt::Display for IgnoredTmpdir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ignoring TMPDIR={}: {}; the sandbox does not make it writable (set TMPDIR to an existing temporary directory)",
            self.value.display(),
            self.reason
        )
    }
}

/// Why `value` cannot be a temporary directory at all, whatever the profile: not absolute,
/// not an existing directory, or the filesystem root (spec 04 §Resolution, issue 11 item 7).
#[must_use]
pub fn tmpdir_problem(value: &Path) -> Option<String> {
    if !value.is_absolute() {
        return Some("it is not an absolute path".to_owned());
    }
    let real = match crate::resolution_memo::canonicalize(value) {
        Ok(real) => real,
        Err(e) => return Some(format!("it cannot be resolved ({e})")),
    };
    if !real.is_dir() {
        return Some("it is not a directory".to_owned());
    }
    if real.parent().is_none() {
        return Some("it is the filesystem root; the whole disk would become writable".to_owned());
    }
    system_directory_problem(&real)
}

/// Trees that hold what the host runs or is configured by: a temporary directory inside one
/// would let a confined command change programs, libraries or configuration.
const SYSTEM_TREES: [&str; 11] = [
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/proc",
    "/sys",
];
/// Directories whose whole content is too much to make writable, though some of their
/// subdirectories are ordinary temporary directories (`/var/tmp`, `/dev/shm`, `/run/user/N`).
const SYSTEM_PARENTS: [&str; 5] = ["/var", "/run", "/dev", "/home", "/root"];

/// Why `real` (canonical) cannot be a temporary directory because it is, or lies in, a
/// system directory, or is a home directory as a whole.
fn system_directory_problem(real: &Path) -> Option<String> {
    if let Some(tree) = SYSTEM_TREES.iter().find(|tree| real.starts_with(tree)) {
        return Some(format!(
            "it is inside the system directory {tree}; a confined command could change what the host runs"
        ));
    }
    if SYSTEM_PARENTS
        .iter()
        .any(|parent| real == Path::new(parent))
        || real.starts_with("/dev") && !real.starts_with("/dev/shm")
    {
        return Some(format!(
            "{} as a whole holds system or user files beyond temporary ones",
            real.display()
        ));
    }
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty());
    if let Some(home) =
        home.and_then(|home| crate::resolution_memo::canonicalize(std::path::Path::new(&home)).ok())
        && real == home
    {
        return Some(
            "it is your home directory; its startup files would become writable".to_owned(),
        );
    }
    None
}

/// `$TMPDIR` of this process, validated with [`tmpdir_problem`]: the usable value, or why it
/// is ignored. Unset or empty is neither.
#[must_use]
pub fn tmpdir_from_env() -> (Option<PathBuf>, Option<IgnoredTmpdir>) {
    let Some(value) = std::env::var_os("TMPDIR").filter(|v| !v.is_empty()) else {
        return (None, None);
    };
    let value = PathBuf::from(value);
    match tmpdir_problem(&value) {
        None => (Some(value), None),
        Some(reason) => (None, Some(IgnoredTmpdir { value, reason })),
    }
}

/// The folders later runs read policy and configuration from, absolute against `cwd`:
/// `$AIRLOCK_HOME` (default `$HOME/.airlock`), `$CODEX_HOME` (default `$HOME/.codex`) and the
/// `.airlock` folder of every project `$AIRLOCK_HOME/config.toml` trusts (see
/// [`crate::policy_locations_from_env`], which also says why for each); an unset home without
/// `$HOME` is left out.
#[must_use]
pub fn protected_homes_from_env(cwd: &Path) -> Vec<PathBuf> {
    crate::policy_locations::policy_locations_from_env(cwd)
        .into_iter()
        .map(|location| location.path)
        .collect()
}

/// `$HOME` of this process, absolute against `cwd` (a relative value protects more, never
/// less); empty when unset or empty.
#[must_use]
pub fn user_homes_from_env(cwd: &Path) -> Vec<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|home| absolutize(Path::new(&home), cwd))
        .into_iter()
        .collect()
}

impl ResolveContext {
    /// From the process environment: `TMPDIR` checked with [`tmpdir_problem`] (a bad value is
    /// recorded in [`Self::ignored_tmpdir`] and not used), the protected homes of
    /// [`protected_homes_from_env`] and the user home of [`user_homes_from_env`].
    #[must_use]
    pub fn new(cwd: &Path) -> Self {
        let (tmpdir, ignored_tmpdir) = tmpdir_from_env();
        Self {
            cwd: cwd.to_path_buf(),
            tmpdir,
            protected_homes: protected_homes_from_env(cwd),
            user_homes: user_homes_from_env(cwd),
            ignored_tmpdir,
        }
    }

    /// Uses the given `tmpdir` (relative values are ignored: they cannot be confined), no
    /// protected homes and no user homes.
    #[must_use]
    pub fn with_tmpdir(cwd: &Path, tmpdir: Option<PathBuf>) -> Self {
        Self {
            cwd: cwd.to_path_buf(),
            tmpdir: tmpdir.filter(|dir| dir.is_absolute()),
            protected_homes: Vec::new(),
            user_homes: Vec::new(),
            ignored_tmpdir: None,
        }
    }

    /// The same context with `homes` as its protected homes.
    #[must_use]
    pub fn with_protected_homes(mut self, homes: Vec<PathBuf>) -> Self {
        self.protected_homes = homes;
        self
    }

    /// The same context with `homes` as its user homes.
    #[must_use]
    pub fn with_user_homes(mut self, homes: Vec<PathBuf>) -> Self {
        self.user_homes = homes;
        self
    }
}

/// Where an entry lands once resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A concrete absolute path (normalised lexically).
    Path(PathBuf),
    /// An absolute glob pattern.
    Glob(String),
    /// Nothing concrete: `:minimal`, unknown tokens, `:tmpdir` without `$TMPDIR`, `:slash_tmp`
    /// without `/tmp`.
    Nothing,
}

/// Resolves one entry path: `path` as is; `:root` → `/`; `project_roots{subpath}` → cwd joined
/// with subpath; `:tmpdir` → `$TMPDIR`; `:slash_tmp` → `/tmp` if it is a directory; relative
/// globs against the cwd.
pub(crate) fn resolve(path: &FileSystemPath, ctx: &ResolveContext) -> Resolved {
    match path {
        FileSystemPath::Path { path } => Resolved::Path(absolutize(path, &ctx.cwd)),
        FileSystemPath::GlobPattern { pattern } => {
            if Path::new(pattern).is_absolute() {
                Resolved::Glob(pattern.clone())
            } else {
                Resolved::Glob(join_pattern(&ctx.cwd, pattern))
            }
        }
        FileSystemPath::Special { value } => match value {
            FileSystemSpecialPath::Root => Resolved::Path(root_of(&ctx.cwd)),
            FileSystemSpecialPath::ProjectRoots { subpath } => Resolved::Path(match subpath {
                Some(sub) => absolutize(&ctx.cwd.join(sub), &ctx.cwd),
                None => absolutize(&ctx.cwd, &ctx.cwd),
            }),
            FileSystemSpecialPath::Tmpdir => {
                // Never the filesystem root, however it is spelled (`TMPDIR=/`, `/tmp/..`).
                match ctx.tmpdir.as_deref().map(|dir| absolutize(dir, &ctx.cwd)) {
                    Some(dir) if dir.parent().is_some() => Resolved::Path(dir),
                    _ => Resolved::Nothing,
                }
            }
            FileSystemSpecialPath::SlashTmp => {
                let tmp = Path::new("/tmp");
                if crate::resolution_memo::is_dir(tmp) {
                    Resolved::Path(tmp.to_path_buf())
                } else {
                    Resolved::Nothing
                }
            }
            FileSystemSpecialPath::Minimal | FileSystemSpecialPath::Unknown { .. } => {
                Resolved::Nothing
            }
        },
    }
}

/// The filesystem root of `cwd` (`/` on Unix).
fn root_of(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .last()
        .filter(|root| !root.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn unusable_tmpdirs_are_named_with_their_reason() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let link = dir.path().join("root-link");
        std::os::unix::fs::symlink("/", &link).unwrap();
        for (value, reason) in [
            (PathBuf::from("rel"), "not an absolute path"),
            (dir.path().join("missing"), "cannot be resolved"),
            (file, "not a directory"),
            (PathBuf::from("/"), "filesystem root"),
            (PathBuf::from("/tmp/.."), "filesystem root"),
            (link, "filesystem root"),
            (PathBuf::from("/etc"), "system directory /etc"),
            (PathBuf::from("/usr/lib"), "system directory /usr"),
            (PathBuf::from("/var"), "/var as a whole"),
            (PathBuf::from("/dev"), "/dev as a whole"),
        ] {
            let problem = tmpdir_problem(&value).unwrap_or_default();
            assert!(problem.contains(reason), "{value:?}: {problem}");
        }
        assert_eq!(tmpdir_problem(dir.path()), None);
        for ordinary in ["/var/tmp", "/dev/shm", "/tmp"] {
            if Path::new(ordinary).is_dir() {
                assert_eq!(tmpdir_problem(Path::new(ordinary)), None, "{ordinary}");
            }
        }
        let ignored = IgnoredTmpdir {
            value: PathBuf::from("/"),
            reason: "it is the filesystem root".into(),
        };
        assert!(
            ignored
                .to_string()
                .starts_with("ignoring TMPDIR=/: it is the filesystem root")
        );
    }

    #[test]
    fn tmpdir_never_resolves_to_the_filesystem_root() {
        let ctx = ResolveContext::with_tmpdir(Path::new("/w"), Some(PathBuf::from("/a/..")));
        let tmpdir = FileSystemPath::Special {
            value: FileSystemSpecialPath::Tmpdir,
        };
        assert_eq!(resolve(&tmpdir, &ctx), Resolved::Nothing);
        let ctx = ResolveContext::with_tmpdir(Path::new("/w"), Some(PathBuf::from("/var/t")));
        assert_eq!(
            resolve(&tmpdir, &ctx),
            Resolved::Path(PathBuf::from("/var/t"))
        );
    }
}
