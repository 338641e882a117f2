//! Which repository an unsandboxed `git` would use, and whether that repository could
//! make git run something a sandboxed command planted (issue 11 item 4).
//!
//! Discovery follows git (`setup.c`, gitrepository-layout(5), git(1) `--git-dir`,
//! `GIT_DIR`, `GIT_CEILING_DIRECTORIES`, `GIT_DISCOVERY_ACROSS_FILESYSTEM`): `-C` options
//! apply in order from the effective cwd; `--git-dir`/`GIT_DIR` name the git directory
//! outright (a pointer file there is followed); otherwise the walk goes up from the cwd,
//! taking at each level the first of a `.git` file (`gitdir: <path>`, relative to the
//! file's directory), a `.git` directory that is a git directory, and the directory
//! itself when it is a git directory (a bare repository, whatever made it: red-team F10),
//! with git's own test ([`airlock_permissions::is_git_directory`]). A git directory's
//! `commondir` file names the shared directory of linked worktrees (relative to the git
//! directory). `--work-tree`/`GIT_WORK_TREE` do not change which git directory is used.
//! Every file read here is one a sandboxed command could have written, so it is read
//! with [`read_untrusted`]: never blocking, regular files only, bounded (red-team F11).
//!
//! The repository is unsafe when its git directory or common directory is writable by
//! the sandbox, when a config file of it (`config`, `config.worktree`, and every file they
//! include, up to [`MAX_INCLUDE_DEPTH`] levels) sets a key that runs a program or cannot
//! be parsed, or when it has an executable hook.

use std::path::{Component, Path, PathBuf};

use airlock_permissions::{
    Follow, GitDirEnv, Limit, MAX_GIT_FILE_BYTES, UntrustedFileError, is_git_directory,
    read_untrusted,
};

/// How deep `include.path`/`includeIf.*.path` chains are followed (git's own limit is 10);
/// deeper counts as unsafe.
pub const MAX_INCLUDE_DEPTH: usize = 10;

/// What a `git` argv says about where its repository is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitLocation {
    /// The directory after applying every `-C` (absolute).
    pub cwd: PathBuf,
    /// `--git-dir` (or `GIT_DIR`), resolved against `cwd`.
    pub git_dir: Option<PathBuf>,
    /// `--work-tree` (or `GIT_WORK_TREE`), resolved against `cwd`.
    pub work_tree: Option<PathBuf>,
    /// How the walk up goes (the environment's ceilings and file-system rule).
    pub discovery: Discovery,
}

/// The environment's say in git's walk up (git(1) ENVIRONMENT VARIABLES).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// `GIT_CEILING_DIRECTORIES` as git keeps it: absolute entries, resolved (those after
    /// an empty entry as written); the walk never enters one of them.
    pub ceilings: Vec<PathBuf>,
    /// `GIT_DISCOVERY_ACROSS_FILESYSTEM` is true: the walk may cross into a parent on
    /// another file system (by default it stops there).
    pub across_filesystems: bool,
    /// `GIT_COMMON_DIR` and `GIT_OBJECT_DIRECTORY`, which git's test of a git directory
    /// uses (resolved against the cwd).
    pub dir_env: GitDirEnv,
}

impl Discovery {
    /// From the command's environment, with relative paths resolved against `cwd`.
    #[must_use]
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>, cwd: &Path) -> Self {
        let mut ceilings = Vec::new();
        let mut empty_seen = false;
        for entry in env("GIT_CEILING_DIRECTORIES")
            .unwrap_or_default()
            .split(':')
        {
            if entry.is_empty() {
                empty_seen = true;
            } else if !Path::new(entry).is_absolute() {
            } else if empty_seen {
                ceilings.push(PathBuf::from(entry));
            } else if let Ok(real) = std::fs::canonicalize(entry) {
                ceilings.push(real);
            }
        }
        let across_filesystems = env("GIT_DISCOVERY_ACROSS_FILESYSTEM").is_some_and(|value| {
            matches!(
                value.to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            ) || value.parse::<i64>().is_ok_and(|n| n != 0)
        });
        let path = |name: &str| {
            env(name)
                .filter(|value| !value.is_empty())
                .map(|value| resolve(&cwd.join(value)))
        };
        Self {
            ceilings,
            across_filesystems,
            dir_env: GitDirEnv {
                common_dir: path("GIT_COMMON_DIR"),
                object_directory: path("GIT_OBJECT_DIRECTORY"),
            },
        }
    }
}

/// Reads `-C`, `--git-dir` and `--work-tree` from a git argv (`argv[0]` is the program),
/// with `git_dir_env` (`GIT_DIR`) and `work_tree_env` (`GIT_WORK_TREE`) as the fallbacks;
/// the options win over the environment, as in git. [`GitLocation::discovery`] is left
/// at its default (see [`locate_with_env`]).
#[must_use]
pub fn locate(
    argv: &[String],
    cwd: &Path,
    git_dir_env: Option<&str>,
    work_tree_env: Option<&str>,
) -> GitLocation {
    // git works in the physical directory (`getcwd`), whatever symlinks the cwd went through.
    let mut here = resolve(cwd);
    let mut git_dir: Option<String> = None;
    let mut work_tree: Option<String> = None;
    let mut index = 1;
    while let Some(token) = argv.get(index) {
        let next = argv.get(index + 1);
        match token.as_str() {
            "-C" => {
                if let Some(dir) = next {
                    here = resolve(&here.join(dir));
                }
                index += 2;
            }
            "--git-dir" => {
                git_dir = next.cloned();
                index += 2;
            }
            "--work-tree" => {
                work_tree = next.cloned();
                index += 2;
            }
            "-c" | "--config-env" | "--exec-path" | "--namespace" | "--super-prefix" => {
                index += 2;
            }
            other if other.starts_with("--git-dir=") => {
                git_dir = other.strip_prefix("--git-dir=").map(str::to_owned);
                index += 1;
            }
            other if other.starts_with("--work-tree=") => {
                work_tree = other.strip_prefix("--work-tree=").map(str::to_owned);
                index += 1;
            }
            other if other.starts_with("-C") && other.len() > 2 => {
                here = resolve(&here.join(&other[2..]));
                index += 1;
            }
            other if other.starts_with('-') => index += 1,
            _ => break,
        }
    }
    let git_dir = git_dir
        .or_else(|| git_dir_env.map(str::to_owned))
        .filter(|dir| !dir.is_empty())
        .map(|dir| resolve(&here.join(dir)));
    let work_tree = work_tree
        .or_else(|| work_tree_env.map(str::to_owned))
        .filter(|dir| !dir.is_empty())
        .map(|dir| resolve(&here.join(dir)));
    GitLocation {
        cwd: here,
        git_dir,
        work_tree,
        discovery: Discovery::default(),
    }
}

/// [`locate`] with `GIT_DIR`, `GIT_WORK_TREE` and the discovery variables ([`Discovery`])
/// taken from `env`.
#[must_use]
pub fn locate_with_env(
    argv: &[String],
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> GitLocation {
    let mut location = locate(
        argv,
        cwd,
        env("GIT_DIR").as_deref(),
        env("GIT_WORK_TREE").as_deref(),
    );
    location.discovery = Discovery::from_env(env, &location.cwd);
    location
}

/// How git came to the git directory, which decides its working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Named by `--git-dir` or `GIT_DIR` (a pointer file there followed).
    Explicit,
    /// A `.git` directory or pointer file in `top`, found walking up.
    DotGit {
        /// The directory holding `.git`.
        top: PathBuf,
    },
    /// A directory that is itself a git directory (bare-form), found walking up.
    Bare,
}

/// The git directory and common directory git would use from `location`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// The git directory (`.git`, a `gitdir:` target, a bare repository).
    pub git_dir: PathBuf,
    /// The common directory (`commondir` of a linked worktree), or `git_dir` itself.
    pub common_dir: PathBuf,
    /// Directories git may take as the working tree (where the `.git` was found,
    /// `--work-tree`, the cwd under `--git-dir`); `core.worktree` is added by
    /// [`check_repository`]. Their submodules are checked too.
    pub work_trees: Vec<PathBuf>,
    /// How it was found.
    pub found: Found,
}

/// Why a repository may not be used outside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsafe(pub String);

impl From<UntrustedFileError> for Unsafe {
    fn from(error: UntrustedFileError) -> Self {
        Self(format!(
            "{error}: a sandboxed command could have made it so, and Airlock reads only regular files there"
        ))
    }
}

/// Finds the repository of `location` exactly as git's discovery does (`setup.c`,
/// `setup_git_directory_gently_1`); `Ok(None)` when there is none (git would fail or run
/// without one). At each level, from the cwd up: a `.git` pointer file, a `.git`
/// directory that passes git's test of a git directory ([`is_git_directory`]), the
/// directory itself when it passes that test (a bare repository); the walk stops below a
/// `GIT_CEILING_DIRECTORIES` entry and, unless `GIT_DISCOVERY_ACROSS_FILESYSTEM`, at a
/// parent on another file system. `writable` says which paths the sandbox can write: a
/// writable directory that only partly looks like a git directory (any `HEAD` entry)
/// counts as one too, as a sandboxed command could complete it.
///
/// # Errors
/// [`Unsafe`] when a `.git` file, `HEAD` or `commondir` cannot be read or parsed, or is a
/// FIFO or device (fail closed).
pub fn discover(
    location: &GitLocation,
    writable: &dyn Fn(&Path) -> bool,
) -> Result<Option<Repository>, Unsafe> {
    let found = match &location.git_dir {
        Some(dir) => {
            // git reads a pointer file named by GIT_DIR (`read_gitfile`).
            let dir = match std::fs::metadata(dir) {
                Ok(meta) if meta.is_file() => read_gitfile(dir)?,
                _ => dir.clone(),
            };
            Some((
                dir,
                Some(
                    location
                        .work_tree
                        .clone()
                        .unwrap_or_else(|| location.cwd.clone()),
                ),
                Found::Explicit,
            ))
        }
        None => walk_up(&location.cwd, &location.discovery, writable)?.map(|(git_dir, found)| {
            let top = match &found {
                Found::DotGit { top } => Some(top.clone()),
                _ => None,
            };
            (git_dir, location.work_tree.clone().or(top), found)
        }),
    };
    let Some((git_dir, work_tree, how)) = found else {
        return Ok(None);
    };
    open_with(
        git_dir,
        work_tree.into_iter().collect(),
        how,
        &location.discovery.dir_env,
    )
}

/// The repository whose git directory is `git_dir` (a submodule's: found from its `.git`),
/// with its common directory.
pub(super) fn open(
    git_dir: PathBuf,
    work_trees: Vec<PathBuf>,
) -> Result<Option<Repository>, Unsafe> {
    let top = work_trees.first().cloned().unwrap_or_default();
    open_with(
        git_dir,
        work_trees,
        Found::DotGit { top },
        &GitDirEnv::default(),
    )
}

fn open_with(
    git_dir: PathBuf,
    work_trees: Vec<PathBuf>,
    found: Found,
    dir_env: &GitDirEnv,
) -> Result<Option<Repository>, Unsafe> {
    let common_dir = airlock_permissions::common_dir(&git_dir, dir_env)?;
    Ok(Some(Repository {
        git_dir,
        common_dir,
        work_trees,
        found,
    }))
}

/// The git directory found walking up from `start`, and how.
fn walk_up(
    start: &Path,
    discovery: &Discovery,
    writable: &dyn Fn(&Path) -> bool,
) -> Result<Option<(PathBuf, Found)>, Unsafe> {
    use std::os::unix::fs::MetadataExt as _;
    // The longest ceiling strictly above the start: the walk never enters it.
    let ceiling = discovery
        .ceilings
        .iter()
        .filter(|ceiling| start.starts_with(ceiling) && start != ceiling.as_path())
        .max_by_key(|ceiling| ceiling.as_os_str().len());
    let device = |dir: &Path| std::fs::metadata(dir).map(|meta| meta.dev()).ok();
    let start_device = device(start);
    let is_git_dir = |dir: &Path| -> Result<bool, Unsafe> {
        Ok(is_git_directory(dir, &discovery.dir_env)? || might_be_git_dir(dir) && writable(dir))
    };
    let mut dir = start;
    loop {
        let dot_git = dir.join(".git");
        let top = dir.to_path_buf();
        match std::fs::metadata(&dot_git) {
            // git passes over a `.git` directory that is not a repository; one the
            // sandbox could write is taken (and refused) all the same.
            Ok(meta) if meta.is_dir() => {
                if is_git_dir(&dot_git)? {
                    return Ok(Some((dot_git, Found::DotGit { top })));
                }
            }
            Ok(meta) if meta.is_file() => {
                return read_gitfile(&dot_git).map(|d| Some((d, Found::DotGit { top })));
            }
            Ok(_) => {
                return Err(Unsafe(format!(
                    "{} is not a file or directory (a FIFO or device a sandboxed command could have made)",
                    dot_git.display()
                )));
            }
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(error) => {
                return Err(Unsafe(format!(
                    "{} cannot be inspected ({error})",
                    dot_git.display()
                )));
            }
        }
        if is_git_dir(dir)? {
            return Ok(Some((dir.to_path_buf(), Found::Bare)));
        }
        let Some(parent) = dir.parent() else {
            return Ok(None);
        };
        if ceiling.is_some_and(|ceiling| !parent.starts_with(ceiling) || parent == ceiling) {
            return Ok(None);
        }
        if !discovery.across_filesystems && device(parent) != start_device {
            return Ok(None);
        }
        dir = parent;
    }
}

/// A `.git` file: `gitdir: <path>`, relative to the file's directory. Read as git reads
/// it (`read_gitfile_gently`: the prefix `gitdir: `, then everything up to trailing
/// newlines, spaces and embedded newlines included); a path with a control character or
/// leading or trailing blanks is refused, as no tool writes one and a lenient reading of
/// it would name another directory than git's. Read with [`read_untrusted`] (at most
/// [`MAX_GIT_FILE_BYTES`], git's own limit; never a FIFO or device).
pub(super) fn read_gitfile(path: &Path) -> Result<PathBuf, Unsafe> {
    let bytes = read_untrusted(path, Follow::Yes, Limit::Whole(MAX_GIT_FILE_BYTES))?
        .ok_or_else(|| Unsafe(format!("{} vanished while it was read", path.display())))?;
    let text =
        String::from_utf8(bytes).map_err(|_| Unsafe(format!("{} is not UTF-8", path.display())))?;
    let target = text
        .strip_prefix("gitdir: ")
        .map(|rest| rest.trim_end_matches(['\n', '\r']))
        .filter(|target| !target.is_empty())
        .ok_or_else(|| Unsafe(format!("{} is not a `gitdir:` pointer", path.display())))?;
    if target.chars().any(char::is_control) || target.trim() != target {
        return Err(Unsafe(format!(
            "{} points to {target:?}, a path with blanks at its ends or control characters",
            path.display()
        )));
    }
    let base = path.parent().unwrap_or_else(|| Path::new("/"));
    Ok(resolve(&base.join(target)))
}

/// Any entry named `HEAD`, whatever its kind (a dangling symlink included): git may take
/// the directory for a git directory once the rest is filled in.
fn might_be_git_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("HEAD")).is_ok()
}

/// `path` as the kernel resolves it (git `chdir`s and calls `real_path`, so `..` after a
/// symlink goes to the symlink target's parent); lexical normalisation for a path that
/// does not exist (git fails on it anyway).
pub(super) fn resolve(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path))
}

/// Lexical normalisation (`.` and `..`); absolute input. Also how the shell's `cd`
/// (logical, `-L`) composes its target: `cd link/..` stays where it started.
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

pub use super::git_checks::{
    check_local_remote, check_repository, check_repository_and_remotes, check_user_config,
};

#[cfg(test)]
#[path = "git_repo_tests.rs"]
mod tests;
