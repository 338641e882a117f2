//! Whether a repository found by [`super::git_repo`] could make an unsandboxed `git` run
//! something a sandboxed command planted (issue 11 item 4): its git or common directory
//! writable by the sandbox, a config key (with includes, up to [`MAX_INCLUDE_DEPTH`]
//! levels) that runs a program, an unparsable config file, an executable hook, and the same
//! for its submodules and local remotes.

use std::path::{Path, PathBuf};

use airlock_permissions::{Follow, Limit, read_untrusted};

use super::git_config::{ConfigEntry, parse_config};
use super::git_repo::{
    GitLocation, MAX_INCLUDE_DEPTH, Repository, Unsafe, discover, open, read_gitfile, resolve,
};

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

/// Largest config file read (bytes); a larger one is unsafe.
const MAX_CONFIG_BYTES: u64 = 16 << 20;

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
                Ok(meta) if meta.is_dir() => resolve(&dot_git),
                Ok(_) => {
                    return Err(Unsafe(format!(
                        "{} is not a file or directory (a FIFO or device a sandboxed command could have made)",
                        dot_git.display()
                    )));
                }
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
    // Never blocks and reads only regular files (red-team F11): a FIFO, device or huge
    // file is unsafe, not a hang; `/dev/null` (git's idiom for "no configuration") reads
    // as empty.
    let Some(bytes) = read_untrusted(file, Follow::Yes, Limit::Whole(MAX_CONFIG_BYTES))? else {
        return Ok(());
    };
    let resolved = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    if resolved == Path::new("/dev/null") {
        return Ok(());
    }
    let text =
        String::from_utf8(bytes).map_err(|_| Unsafe(format!("{} is not UTF-8", file.display())))?;
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
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
            return Err(Unsafe(format!(
                "it has an executable hook {}",
                path.display()
            )));
        }
        // A FIFO, socket or device named like a hook is nothing a user puts there.
        if !meta.is_file() && !meta.is_dir() {
            return Err(Unsafe(format!(
                "its hook {} is not a regular file (a FIFO or device a sandboxed command could have made)",
                path.display()
            )));
        }
    }
    Ok(())
}
