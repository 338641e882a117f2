//! Which repository an unsandboxed `git` would use, and whether that repository could
//! make git run something a sandboxed command planted (issue 11 item 4).
//!
//! Discovery follows git (gitrepository-layout(5), git(1) `--git-dir`, `GIT_DIR`):
//! `-C` options apply in order from the effective cwd; `--git-dir`/`GIT_DIR` name the git
//! directory outright; otherwise the walk goes up from the cwd, taking the first `.git`
//! directory, `.git` file (`gitdir: <path>`, relative to the file's directory) or bare
//! repository. A git directory's `commondir` file names the shared directory of linked
//! worktrees (relative to the git directory). `--work-tree`/`GIT_WORK_TREE` do not change
//! which git directory is used.
//!
//! The repository is unsafe when its git directory or common directory is writable by
//! the sandbox, when a config file of it (`config`, `config.worktree`, and every file they
//! include, up to [`MAX_INCLUDE_DEPTH`] levels) sets a key that runs a program or cannot
//! be parsed, or when it has an executable hook.

use std::path::{Component, Path, PathBuf};

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
}

/// Reads `-C`, `--git-dir` and `--work-tree` from a git argv (`argv[0]` is the program),
/// with `git_dir_env` (`GIT_DIR`) and `work_tree_env` (`GIT_WORK_TREE`) as the fallbacks;
/// the options win over the environment, as in git.
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
    }
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
}

/// Why a repository may not be used outside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsafe(pub String);

/// Finds the repository of `location`; `Ok(None)` when there is none (git would fail).
/// `writable` says which paths the sandbox can write: during the walk, a writable
/// directory that only partly looks like a git directory counts as one (git's own test,
/// `is_git_directory`, accepts a dangling `HEAD` symlink or an executable file as
/// `objects`, which this walk need not model), so git can never pick a repository the
/// walk passed over.
///
/// # Errors
/// [`Unsafe`] when a `.git` file or `commondir` cannot be read or parsed (fail closed).
pub fn discover(
    location: &GitLocation,
    writable: &dyn Fn(&Path) -> bool,
) -> Result<Option<Repository>, Unsafe> {
    let found = match &location.git_dir {
        Some(dir) => Some((
            dir.clone(),
            Some(
                location
                    .work_tree
                    .clone()
                    .unwrap_or_else(|| location.cwd.clone()),
            ),
        )),
        None => walk_up(&location.cwd, writable)?
            .map(|(git_dir, top)| (git_dir, location.work_tree.clone().or(top))),
    };
    let Some((git_dir, work_tree)) = found else {
        return Ok(None);
    };
    open(git_dir, work_tree.into_iter().collect())
}

/// The repository whose git directory is `git_dir`, with its common directory.
pub(super) fn open(
    git_dir: PathBuf,
    work_trees: Vec<PathBuf>,
) -> Result<Option<Repository>, Unsafe> {
    let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => resolve(&git_dir.join(text.trim_end_matches(['\n', '\r']))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => git_dir.clone(),
        Err(error) => {
            return Err(Unsafe(format!(
                "{}/commondir cannot be read ({error})",
                git_dir.display()
            )));
        }
    };
    Ok(Some(Repository {
        git_dir,
        common_dir,
        work_trees,
    }))
}

/// The git directory found walking up from `start`, with the directory it was found in
/// (the working tree) unless it is a bare repository.
fn walk_up(
    start: &Path,
    writable: &dyn Fn(&Path) -> bool,
) -> Result<Option<(PathBuf, Option<PathBuf>)>, Unsafe> {
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let top = Some(dir.to_path_buf());
        match std::fs::metadata(&dot_git) {
            // git passes over a `.git` directory that is not a repository; one the
            // sandbox could write is taken (and refused) all the same.
            Ok(meta) if meta.is_dir() => {
                if looks_bare(&dot_git) || might_be_git_dir(&dot_git) && writable(&dot_git) {
                    return Ok(Some((dot_git, top)));
                }
            }
            Ok(meta) if meta.is_file() => return read_gitfile(&dot_git).map(|d| Some((d, top))),
            Ok(_) => {
                return Err(Unsafe(format!(
                    "{} is not a file or directory",
                    dot_git.display()
                )));
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(Unsafe(format!(
                    "{} cannot be inspected ({error})",
                    dot_git.display()
                )));
            }
        }
        if looks_bare(dir) || might_be_git_dir(dir) && writable(dir) {
            return Ok(Some((dir.to_path_buf(), None)));
        }
    }
    Ok(None)
}

/// A `.git` file: `gitdir: <path>`, relative to the file's directory. Read as git reads
/// it (`read_gitfile_gently`: the prefix `gitdir: `, then everything up to trailing
/// newlines, spaces and embedded newlines included); a path with a control character or
/// leading or trailing blanks is refused, as no tool writes one and a lenient reading of
/// it would name another directory than git's.
pub(super) fn read_gitfile(path: &Path) -> Result<PathBuf, Unsafe> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| Unsafe(format!("{} cannot be read ({error})", path.display())))?;
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

/// A bare repository: `HEAD`, `objects/` and `refs/` in the directory itself.
fn looks_bare(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// Any entry named `HEAD`, whatever its kind (a dangling symlink included): git may take
/// the directory for a git directory.
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
