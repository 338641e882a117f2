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

use super::git_config::{ConfigEntry, parse_config};

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
fn open(git_dir: PathBuf, work_trees: Vec<PathBuf>) -> Result<Option<Repository>, Unsafe> {
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
fn read_gitfile(path: &Path) -> Result<PathBuf, Unsafe> {
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
fn resolve(path: &Path) -> PathBuf {
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

/// Checks `repo`: writable by the sandbox (`writable` says whether a path is), config
/// keys that run programs (with includes), executable hooks. `home` expands `~/` in
/// include paths.
///
/// # Errors
/// [`Unsafe`] naming the first finding.
pub fn check_repository(
    repo: &Repository,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Result<(), Unsafe> {
    check_repository_at(repo, writable, home, 0).map(drop)
}

/// [`check_repository`], returning the remote URLs its configuration names
/// (`remote.*.url`, `remote.*.pushurl`, and the `<base>` of `url.<base>.insteadOf`), so a
/// caller can check the local repositories git would run a server program in.
///
/// # Errors
/// As [`check_repository`].
pub fn check_repository_and_remotes(
    repo: &Repository,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Result<Vec<String>, Unsafe> {
    check_repository_at(repo, writable, home, 0).map(|settings| settings.remote_urls)
}

/// Checks the repository git would run `git-receive-pack`/`git-upload-pack` in for the
/// remote `url` (a path, relative to `cwd`, or a `file://` URL): unsafe like any
/// repository ([`check_repository`]). Non-local URLs and paths that do not exist pass.
///
/// # Errors
/// [`Unsafe`] naming the remote.
pub fn check_local_remote(
    url: &str,
    cwd: &Path,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Result<(), Unsafe> {
    let path = url.strip_prefix("file://").unwrap_or(url);
    // `host:path` (scp-like ssh) and `scheme://` URLs are not local; git takes a path
    // with a slash before any colon as local.
    let local = url.starts_with("file://")
        || !path.contains("://")
            && path
                .find(':')
                .is_none_or(|colon| path[..colon].contains('/'));
    if !local {
        return Ok(());
    }
    let dir = resolve(&cwd.join(path));
    if !dir.exists() {
        return Ok(());
    }
    let location = GitLocation {
        cwd: dir.clone(),
        ..GitLocation::default()
    };
    let found = discover(&location, writable)?;
    let Some(repo) = found else {
        return Ok(());
    };
    check_repository(&repo, writable, home).map_err(|Unsafe(why)| {
        Unsafe(format!(
            "the local repository {} it would run git-receive-pack or git-upload-pack in: {why}",
            dir.display()
        ))
    })
}

/// How deep submodules of submodules are followed; deeper counts as unsafe.
const MAX_SUBMODULE_DEPTH: usize = 8;

fn check_repository_at(
    repo: &Repository,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
    depth: usize,
) -> Result<Settings, Unsafe> {
    for dir in [&repo.git_dir, &repo.common_dir] {
        let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        if writable(dir) || writable(&resolved) {
            return Err(Unsafe(format!(
                "its git directory {} is writable inside the sandbox, so a sandboxed command could have planted configuration or hooks there",
                dir.display()
            )));
        }
    }
    let mut settings = Settings::default();
    for file in [
        repo.common_dir.join("config"),
        repo.git_dir.join("config"),
        repo.git_dir.join("config.worktree"),
    ] {
        check_config_file(&file, writable, home, 0, Keys::Checked, &mut settings)?;
    }
    for dir in [&repo.git_dir, &repo.common_dir] {
        check_hooks(&dir.join("hooks"))?;
    }
    check_submodules(repo, &settings, writable, home, depth)?;
    Ok(settings)
}

/// Config values that change where git looks, collected while the files are checked.
#[derive(Debug, Default)]
struct Settings {
    /// `core.worktree` values, resolved against the git directory.
    work_trees: Vec<PathBuf>,
    /// `extensions.objectformat = sha256`.
    sha256: bool,
    /// Remote URLs: `remote.*.url`, `remote.*.pushurl`, `url.<base>.insteadof` bases.
    remote_urls: Vec<String>,
}

/// The submodules of `repo`'s index (gitlinks), in every directory git may take as the
/// working tree: a populated one (its `.git` exists) is a repository git runs a child in,
/// checked like its superproject.
fn check_submodules(
    repo: &Repository,
    settings: &Settings,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
    depth: usize,
) -> Result<(), Unsafe> {
    let hash_len = if settings.sha256 { 32 } else { 20 };
    let links =
        super::git_index::gitlinks(&repo.git_dir.join("index"), hash_len).map_err(Unsafe)?;
    if links.is_empty() {
        return Ok(());
    }
    if depth >= MAX_SUBMODULE_DEPTH {
        return Err(Unsafe(format!(
            "{} nests submodules deeper than {MAX_SUBMODULE_DEPTH} levels",
            repo.git_dir.display()
        )));
    }
    let mut trees: Vec<PathBuf> = repo.work_trees.clone();
    trees.extend(settings.work_trees.iter().cloned());
    for tree in &trees {
        for link in &links {
            let top = tree.join(link);
            let dot_git = top.join(".git");
            let git_dir = match std::fs::metadata(&dot_git) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    return Err(Unsafe(format!(
                        "{} cannot be inspected ({error})",
                        dot_git.display()
                    )));
                }
                Ok(meta) if meta.is_file() => read_gitfile(&dot_git)?,
                Ok(_) => resolve(&dot_git),
            };
            let Some(sub) = open(git_dir, vec![resolve(&top)])? else {
                continue;
            };
            check_repository_at(&sub, writable, home, depth + 1)
                .map_err(|Unsafe(why)| Unsafe(format!("its submodule {}: {why}", top.display())))?;
        }
    }
    Ok(())
}

/// Whether a config file's keys are judged, or only where it and its includes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// Repository configuration: a key that runs a program is unsafe.
    Checked,
    /// The user's own global/system configuration: its programs (a credential helper,
    /// a pager) are the user's choice; only a file the sandbox could write is unsafe.
    Trusted,
}

/// The user's and the system's git configuration (`GIT_CONFIG_GLOBAL`, `~/.gitconfig`,
/// `$XDG_CONFIG_HOME/git/config` or `~/.config/git/config`, `GIT_CONFIG_SYSTEM` or
/// `/etc/gitconfig`), which every git reads: unsafe when the sandbox can write one of
/// them or a file they include (a profile that writes `$HOME` lets a confined command
/// plant `core.fsmonitor` in `~/.gitconfig`).
///
/// # Errors
/// [`Unsafe`] naming the file.
pub fn check_user_config(
    env: &dyn Fn(&str) -> Option<String>,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Result<(), Unsafe> {
    let mut files: Vec<PathBuf> = Vec::new();
    match env("GIT_CONFIG_GLOBAL") {
        Some(path) => files.push(PathBuf::from(path)),
        None => {
            if let Some(home) = home {
                files.push(home.join(".gitconfig"));
            }
            match (env("XDG_CONFIG_HOME"), home) {
                (Some(xdg), _) if !xdg.is_empty() => files.push(Path::new(&xdg).join("git/config")),
                (_, Some(home)) => files.push(home.join(".config/git/config")),
                _ => {}
            }
        }
    }
    files.push(
        env("GIT_CONFIG_SYSTEM").map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
    );
    for file in files.iter().filter(|file| !file.as_os_str().is_empty()) {
        // git opens a relative one from the working directory, which the sandbox writes.
        if !file.is_absolute() {
            return Err(Unsafe(format!(
                "the git configuration {} is a relative path, resolved in the working directory",
                file.display()
            )));
        }
        check_config_file(
            file,
            writable,
            home,
            0,
            Keys::Trusted,
            &mut Settings::default(),
        )?;
    }
    Ok(())
}

fn check_config_file(
    file: &Path,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
    depth: usize,
    keys: Keys,
    settings: &mut Settings,
) -> Result<(), Unsafe> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => {
            return Err(Unsafe(format!(
                "{} cannot be read ({error})",
                file.display()
            )));
        }
    };
    let resolved = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    if writable(file) || writable(&resolved) {
        return Err(Unsafe(format!(
            "its configuration {} is writable inside the sandbox",
            resolved.display()
        )));
    }
    let entries = parse_config(&text)
        .map_err(|error| Unsafe(format!("{} cannot be parsed ({error})", file.display())))?;
    for entry in &entries {
        match (entry.key().as_str(), entry.value.as_deref()) {
            ("core.worktree", Some(tree)) => {
                let base = file.parent().unwrap_or_else(|| Path::new("/"));
                settings.work_trees.push(resolve(&base.join(tree)));
            }
            ("extensions.objectformat", Some(format)) => {
                settings.sha256 = format.eq_ignore_ascii_case("sha256");
            }
            _ if entry.section == "remote"
                && matches!(entry.name.as_str(), "url" | "pushurl")
                && entry.value.is_some() =>
            {
                settings.remote_urls.extend(entry.value.clone());
            }
            _ if entry.section == "url"
                && matches!(entry.name.as_str(), "insteadof" | "pushinsteadof") =>
            {
                settings.remote_urls.extend(entry.subsection.clone());
            }
            _ => {}
        }
        if keys == Keys::Checked
            && let Some(why) = runs_program(entry)
        {
            return Err(Unsafe(format!(
                "{}:{} sets `{}` ({why})",
                file.display(),
                entry.line,
                entry.key()
            )));
        }
        if keys == Keys::Trusted
            && (runs_program(entry).is_some() || entry.key() == "init.templatedir")
            && let Some(why) = trusted_program_location(entry, writable, home)
        {
            return Err(Unsafe(format!(
                "{}:{} sets `{}` to {why}",
                file.display(),
                entry.line,
                entry.key()
            )));
        }
        if entry.name == "path" && (entry.section == "include" || entry.section == "includeif") {
            if depth + 1 > MAX_INCLUDE_DEPTH {
                return Err(Unsafe(format!(
                    "{} nests includes deeper than {MAX_INCLUDE_DEPTH} levels",
                    file.display()
                )));
            }
            let Some(target) = entry.value.as_deref() else {
                continue;
            };
            let target = match (target.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => home.join(rest),
                (Some(_), None) => {
                    return Err(Unsafe(format!(
                        "{} includes `{target}` but HOME is unset",
                        file.display()
                    )));
                }
                (None, _) => file.parent().unwrap_or_else(|| Path::new("/")).join(target),
            };
            check_config_file(&resolve(&target), writable, home, depth + 1, keys, settings)?;
        }
    }
    Ok(())
}

/// The user's own configuration may name programs, but not ones the sandbox can plant:
/// a program or hook directory given as a relative path (git resolves it in the working
/// tree: `core.hooksPath = .githooks`) or inside a writable root. The reason, if so.
fn trusted_program_location(
    entry: &ConfigEntry,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Option<String> {
    let value = entry.value.as_deref()?.trim();
    let whole_value_is_a_path =
        matches!(entry.key().as_str(), "core.hookspath" | "init.templatedir");
    let program = if whole_value_is_a_path {
        value
    } else {
        value
            .trim_start_matches('!')
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches(['"', '\''])
    };
    if !whole_value_is_a_path && !program.contains('/') {
        // A bare name is found through PATH, which is checked on its own.
        return None;
    }
    let path = match (program.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(program),
    };
    if !path.is_absolute() {
        return Some(format!(
            "the relative path {program:?}, which git resolves in the working tree the sandbox can write"
        ));
    }
    (writable(&path) || writable(&resolve(&path)))
        .then(|| format!("{}, which is writable inside the sandbox", path.display()))
}

/// Whether `entry` makes git run a program (git-config(1)); the reason, if so.
fn runs_program(entry: &ConfigEntry) -> Option<&'static str> {
    let value = entry.value.as_deref().unwrap_or("");
    let section = entry.section.as_str();
    let name = entry.name.as_str();
    let sub = entry.subsection.is_some();
    let is_boolean = matches!(
        value.to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
    );
    match (section, sub, name) {
        // A boolean asks for git's built-in daemon; anything else is a program.
        ("core", false, "fsmonitor") if is_boolean => None,
        ("core", false, "fsmonitor") => Some("git runs it on every status"),
        (
            "core",
            false,
            "hookspath"
            | "sshcommand"
            | "pager"
            | "editor"
            | "askpass"
            | "gitproxy"
            | "alternaterefscommand",
        ) => Some("git runs programs from it"),
        ("diff", false, "external") | ("diff", true, "command" | "textconv") => {
            Some("a diff driver program")
        }
        ("filter", true, "clean" | "smudge" | "process") => Some("a filter program"),
        ("merge", true, "driver") => Some("a merge driver program"),
        ("mergetool" | "difftool", true, "cmd" | "path") => Some("a tool program"),
        ("credential", _, "helper") => Some("a credential helper program"),
        ("gpg", _, "program") | ("gpg", true, "defaultkeycommand") => Some("a signing program"),
        ("alias", _, _) if value.trim_start().starts_with('!') => Some("a shell alias"),
        // Config-based hooks (newer git): `hook.<name>.command`.
        ("hook", true, "command") => Some("a hook program"),
        ("uploadpack", false, "packobjectshook") => Some("a pack hook program"),
        ("remote", true, "uploadpack" | "receivepack" | "proxy") => Some("a remote program"),
        ("sequence", false, "editor") => Some("an editor program"),
        ("pager", true, _) | ("pager", false, _) if !is_boolean => Some("a pager program"),
        ("interactive", false, "difffilter") => Some("a filter program"),
        ("sendemail", _, "smtpserver" | "tocmd" | "cccmd" | "sendmailcmd") => {
            Some("a mail program")
        }
        ("trailer", true, "command" | "cmd") => Some("a trailer program"),
        ("submodule", true, "update") if value.trim_start().starts_with('!') => {
            Some("a submodule update command")
        }
        ("browser" | "man", true, "cmd" | "path") | ("web", false, "browser") => {
            Some("a browser program")
        }
        // `user` enables `ext::` too (for every command a person types, as
        // GIT_PROTOCOL_FROM_USER is unset), and `ext::` URLs are commands.
        ("protocol", _, "allow")
            if entry.subsection.as_deref().is_none_or(|sub| sub == "ext")
                && !value.eq_ignore_ascii_case("never") =>
        {
            Some("it enables the `ext::` transport, whose URLs are commands")
        }
        _ => None,
    }
}

/// Executable files in `hooks/` other than git's `*.sample` files.
fn check_hooks(dir: &Path) -> Result<(), Unsafe> {
    use std::os::unix::fs::PermissionsExt;
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => {
            return Err(Unsafe(format!(
                "{} cannot be listed ({error})",
                dir.display()
            )));
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "sample") {
            continue;
        }
        if std::fs::metadata(&path)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        {
            return Err(Unsafe(format!(
                "it has an executable hook {}",
                path.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn never(_: &Path) -> bool {
        false
    }

    fn init(dir: &Path) -> Repository {
        std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(dir.join(".git/objects")).unwrap();
        std::fs::create_dir_all(dir.join(".git/refs")).unwrap();
        std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(dir.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        Repository {
            git_dir: dir.join(".git"),
            common_dir: dir.join(".git"),
            work_trees: vec![dir.to_path_buf()],
        }
    }

    #[test]
    fn locate_honours_dash_c_git_dir_and_the_environment() {
        let cwd = Path::new("/w");
        let at = |words: &[&str], env| locate(&argv(words), cwd, env, None);
        assert_eq!(
            at(&["git", "-C", "sub", "status"], None).cwd,
            Path::new("/w/sub")
        );
        assert_eq!(
            at(&["git", "-C", "a", "-C", "../b", "status"], None).cwd,
            Path::new("/w/b")
        );
        assert_eq!(
            at(&["git", "--git-dir=x/.git", "status"], None).git_dir,
            Some(PathBuf::from("/w/x/.git"))
        );
        assert_eq!(
            at(&["git", "-C", "s", "--git-dir", "g", "log"], Some("/env")).git_dir,
            Some(PathBuf::from("/w/s/g"))
        );
        assert_eq!(
            at(&["git", "status"], Some("/env/.git")).git_dir,
            Some(PathBuf::from("/env/.git"))
        );
        assert_eq!(
            at(&["git", "--work-tree", "wt", "status"], None).cwd,
            Path::new("/w")
        );
    }

    #[test]
    fn discovery_walks_up_and_follows_pointer_files() {
        let root = tempfile::tempdir().unwrap();
        let top = root.path().join("top");
        init(&top);
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        let found = |cwd: &Path| {
            discover(
                &GitLocation {
                    cwd: cwd.to_path_buf(),
                    ..GitLocation::default()
                },
                &never,
            )
            .unwrap()
            .unwrap()
        };
        assert_eq!(found(&top.join("a/b")).git_dir, top.join(".git"));
        // A `.git` file pointing elsewhere, and a linked worktree with a commondir.
        let wt = root.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        let admin = top.join(".git/worktrees/wt");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        let repo = found(&wt);
        assert_eq!(repo.git_dir, admin);
        assert_eq!(repo.common_dir, top.join(".git"));
        std::fs::write(wt.join(".git"), "gitdir: ../top/.git\n").unwrap();
        assert_eq!(found(&wt).git_dir, top.join(".git"));
        std::fs::write(wt.join(".git"), "nonsense\n").unwrap();
        assert!(
            discover(
                &GitLocation {
                    cwd: wt,
                    ..GitLocation::default()
                },
                &never
            )
            .is_err()
        );
    }

    #[test]
    fn config_keys_that_run_programs_are_unsafe() {
        let root = tempfile::tempdir().unwrap();
        let repo = init(root.path());
        assert_eq!(check_repository(&repo, &never, None), Ok(()));
        for config in [
            "[core]\n\tfsmonitor = \"touch /x\"\n",
            "[Core]\nFSMonitor=./x\n",
            "[core]\nhooksPath = /elsewhere\n",
            "[diff \"x\"]\ntextconv = cat\n",
            "[filter \"lfs\"]\nsmudge = x\n",
            "[alias]\nst = !sh -c 'x'\n",
            "[credential]\nhelper = store\n",
            "[gpg \"ssh\"]\nprogram = x\n",
            "[remote \"o\"]\nuploadpack = x\n",
            "[pager]\nlog = x\n",
            "[protocol \"ext\"]\nallow = user\n",
            "[protocol]\nallow = user\n",
            "[hook \"fmt\"]\ncommand = x\n",
            "[core]\nfsmonitor = \"unterminated\n",
        ] {
            std::fs::write(repo.git_dir.join("config"), config).unwrap();
            assert!(check_repository(&repo, &never, None).is_err(), "{config}");
        }
        for config in [
            "[core]\nfsmonitor = false\nbare = false\n",
            "[alias]\nst = status\n",
        ] {
            std::fs::write(repo.git_dir.join("config"), config).unwrap();
            assert_eq!(check_repository(&repo, &never, None), Ok(()), "{config}");
        }
    }

    #[test]
    fn includes_are_followed_and_bounded() {
        let root = tempfile::tempdir().unwrap();
        let repo = init(root.path());
        std::fs::write(root.path().join("inc1"), "[include]\npath = inc2\n").unwrap();
        std::fs::write(root.path().join("inc2"), "[core]\nsshCommand = x\n").unwrap();
        std::fs::write(repo.git_dir.join("config"), "[include]\npath = ../inc1\n").unwrap();
        let error = check_repository(&repo, &never, None).unwrap_err();
        assert!(
            error.0.contains("inc2") && error.0.contains("core.sshcommand"),
            "{error:?}"
        );
        std::fs::write(root.path().join("inc2"), "[include]\npath = inc1\n").unwrap();
        let error = check_repository(&repo, &never, None).unwrap_err();
        assert!(error.0.contains("deeper than"), "{error:?}");
    }

    #[test]
    fn user_config_is_judged_by_where_it_lives_not_by_its_keys() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        std::fs::write(home.join(".gitconfig"), "[credential]\nhelper = store\n").unwrap();
        let no_env = |_: &str| None;
        assert_eq!(check_user_config(&no_env, &never, Some(home)), Ok(()));
        let home_writable = |p: &Path| p.starts_with(home);
        let error = check_user_config(&no_env, &home_writable, Some(home)).unwrap_err();
        assert!(
            error.0.contains(".gitconfig") && error.0.contains("writable"),
            "{error:?}"
        );
        std::fs::write(home.join(".gitconfig"), "[core]\nhooksPath = .githooks\n").unwrap();
        assert!(
            check_user_config(&no_env, &never, Some(home))
                .unwrap_err()
                .0
                .contains("relative path")
        );
        std::fs::write(
            home.join(".gitconfig"),
            "[core]\npager = /ws/bin/pager -R\n",
        )
        .unwrap();
        let ws_writable = |p: &Path| p.starts_with("/ws");
        assert!(check_user_config(&no_env, &ws_writable, Some(home)).is_err());
        std::fs::write(home.join(".gitconfig"), "[core]\npager = less -R\n").unwrap();
        assert_eq!(check_user_config(&no_env, &ws_writable, Some(home)), Ok(()));
        let elsewhere = home.join("elsewhere.cfg");
        std::fs::write(&elsewhere, "[core]\npager = less\n").unwrap();
        let global = elsewhere.display().to_string();
        let env = move |name: &str| (name == "GIT_CONFIG_GLOBAL").then(|| global.clone());
        let only_elsewhere = |p: &Path| p.ends_with("elsewhere.cfg");
        assert!(check_user_config(&env, &only_elsewhere, Some(home)).is_err());
    }

    #[test]
    fn hooks_and_writable_git_directories_are_unsafe() {
        let root = tempfile::tempdir().unwrap();
        let repo = init(root.path());
        let hook = repo.git_dir.join("hooks/post-checkout");
        std::fs::write(&hook, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert!(
            check_repository(&repo, &never, None)
                .unwrap_err()
                .0
                .contains("hook")
        );
        std::fs::remove_file(&hook).unwrap();
        let git_dir = repo.git_dir.clone();
        let writable = move |p: &Path| p.starts_with(&git_dir);
        assert!(
            check_repository(&repo, &writable, None)
                .unwrap_err()
                .0
                .contains("writable")
        );
    }
}
