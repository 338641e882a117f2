//! Resolution of entries to concrete paths against a cwd and the environment
//! (reference `permissions-config.md` §5 "Resolution of entries").

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSpecialPath;

use crate::paths::absolutize;
use crate::paths::join_pattern;

/// What entries are resolved against: the cwd (also the workspace root of an unmaterialised
/// profile) and `$TMPDIR`. Built from the process environment with [`ResolveContext::new`], or
/// with an explicit `tmpdir` for deterministic tests and remote environments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveContext {
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// `$TMPDIR` when set and non-empty.
    pub tmpdir: Option<PathBuf>,
}

impl ResolveContext {
    /// Uses the process's `TMPDIR` (unset or empty → none).
    #[must_use]
    pub fn new(cwd: &Path) -> Self {
        let tmpdir = std::env::var_os("TMPDIR")
            .filter(|value| !value.is_empty())
            .map(PathBuf::from);
        Self::with_tmpdir(cwd, tmpdir)
    }

    /// Uses the given `tmpdir` (relative values are ignored: they cannot be confined).
    #[must_use]
    pub fn with_tmpdir(cwd: &Path, tmpdir: Option<PathBuf>) -> Self {
        Self {
            cwd: cwd.to_path_buf(),
            tmpdir: tmpdir.filter(|dir| dir.is_absolute()),
        }
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
                ctx.tmpdir.as_deref().map_or(Resolved::Nothing, |dir| {
                    Resolved::Path(absolutize(dir, &ctx.cwd))
                })
            }
            FileSystemSpecialPath::SlashTmp => {
                let tmp = Path::new("/tmp");
                if tmp.is_dir() {
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
