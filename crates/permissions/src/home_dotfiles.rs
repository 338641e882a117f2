//! The startup and configuration entries of `$HOME` (issue 11: "no sandboxed run may plant
//! code that later runs on the host").
//!
//! Under the usual layout `$HOME` lies outside every writable root and is read-only as a
//! whole. When it lies inside one (the agent started in `~`, so the workspace *is* `$HOME`;
//! or `HOME=/tmp/...` as in many containers, with `:slash_tmp` writable), a confined command
//! could rewrite `~/.bashrc`, `~/.ssh/config` (`ProxyCommand`), `~/.config/…`,
//! `~/.local/bin` or `~/.gitconfig`, all of which run on the host later. The rule that brings
//! this case to the level of the usual one:
//! - every **existing** top-level entry of `$HOME` whose name starts with `.` is a read-only
//!   subpath of each writable root that contains `$HOME` (resolved), whatever it is (file,
//!   directory, symlink — a symlink's target too);
//! - the **missing** names of [`HOME_STARTUP_NAMES`] are read-only too, so that they cannot be
//!   created: each is a shell startup file, or a file or folder a common tool reads
//!   configuration, credentials or programs from (the list says which reads it and why);
//! - when the entries cannot be listed (`$HOME` missing, not a directory, unreadable, or more
//!   than [`MAX_HOME_DOT_ENTRIES`] dot entries), `$HOME` itself is read-only (fail closed).
//!
//! Entries whose names do not start with `.` (the user's own files, `~/bin`, `~/go`) stay
//! writable, as the workspace they are. An explicit profile entry for an exact path lifts the
//! rule for that path (as for `.git`, `.codex`, …; see the queries).
//!
//! Must not: decide what is writable (the queries know the roots), follow more than one
//! symlink level, or read more than the top level of `$HOME`.

use std::ffi::OsString;
use std::path::Path;
use std::path::PathBuf;

/// Most dot entries listed one by one; a home with more is protected whole (each entry is
/// one mount, and a sandbox with thousands of them would be slow to start).
pub const MAX_HOME_DOT_ENTRIES: usize = 1024;

/// What a missing well-known name would be, so that its stand-in has the same type: a
/// directory stand-in at `~/.bashrc` would make every `bash` in the sandbox print "is a
/// directory", and git warn on every run about `~/.gitconfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HomeEntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
}

/// A well-known name at the top of `$HOME` that must not be created while `$HOME` is inside a
/// writable root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartupName {
    /// The name (starts with `.`).
    pub name: &'static str,
    /// What it is when it exists.
    pub kind: HomeEntryKind,
    /// What reads it on the host, and so runs what it says (for `permissions show`).
    pub read_by: &'static str,
}

const fn file(name: &'static str, read_by: &'static str) -> StartupName {
    StartupName {
        name,
        kind: HomeEntryKind::File,
        read_by,
    }
}

const fn dir(name: &'static str, read_by: &'static str) -> StartupName {
    StartupName {
        name,
        kind: HomeEntryKind::Directory,
        read_by,
    }
}

/// The names that are protected even when missing. Chosen as: every startup file of the
/// shells a user's terminal or login runs (bash, sh/dash, zsh, ksh, csh/tcsh, readline, X
/// and PAM sessions); every folder that holds programs or startup code of many tools
/// (`.config`, `.local`, `.cache` — build and wheel caches the host reuses —, `.ssh`,
/// `.git`); and the configuration files of common tools that name a program to run, a
/// package source, or credentials (git, ssh, package managers, build tools, editors, REPLs,
/// debuggers, database clients, container and cluster clients, AI agents). Existing entries
/// need no list: all of them are protected.
pub const HOME_STARTUP_NAMES: &[StartupName] = &[
    // Shells and sessions.
    file(".bashrc", "interactive bash"),
    file(".bash_profile", "bash login shells"),
    file(".bash_login", "bash login shells"),
    file(".bash_logout", "bash login shells, on exit"),
    file(".bash_aliases", "Debian's and Ubuntu's default ~/.bashrc"),
    file(".profile", "sh, dash and bash login shells"),
    file(".zshenv", "every zsh"),
    file(".zprofile", "zsh login shells"),
    file(".zshrc", "interactive zsh"),
    file(".zlogin", "zsh login shells"),
    file(".zlogout", "zsh login shells, on exit"),
    file(".kshrc", "interactive ksh"),
    file(".mkshrc", "interactive mksh"),
    file(".cshrc", "csh and tcsh"),
    file(".tcshrc", "tcsh"),
    file(".login", "csh and tcsh login shells"),
    file(".logout", "csh and tcsh login shells, on exit"),
    file(
        ".inputrc",
        "readline (key bindings of bash and other line editors)",
    ),
    file(".xprofile", "graphical sessions"),
    file(".xsession", "graphical sessions"),
    file(".xsessionrc", "graphical sessions"),
    file(".xinitrc", "startx"),
    file(
        ".pam_environment",
        "PAM sessions (environment such as LD_PRELOAD)",
    ),
    // Folders of programs and startup code.
    dir(
        ".config",
        "XDG configuration: git, fish, systemd user units, autostart, pip, …",
    ),
    dir(
        ".local",
        "~/.local/bin on PATH, Python's user site-packages, desktop entries",
    ),
    dir(
        ".cache",
        "build and package caches the host reuses (pip, go)",
    ),
    dir(".ssh", "ssh (config: ProxyCommand, authorized_keys, rc)"),
    dir(
        ".git",
        "git in every folder of $HOME that is not a repository",
    ),
    dir(".agents", "AI agents (skills and instructions)"),
    dir(
        ".airlock",
        "Airlock (config and rules, wherever AIRLOCK_HOME is not set)",
    ),
    dir(
        ".codex",
        "Codex (config, rules and hooks, wherever CODEX_HOME is not set)",
    ),
    dir(".aws", "the AWS CLI (credential_process)"),
    dir(".gnupg", "gpg and gpg-agent (pinentry-program)"),
    // Version control.
    file(".gitconfig", "git (core.fsmonitor, aliases, hooks)"),
    file(".git-credentials", "git's credential store"),
    file(".hgrc", "Mercurial (hooks)"),
    // Package managers and build tools.
    file(".npmrc", "npm and pnpm (script-shell, registry)"),
    dir(".npm", "npm (npx runs packages cached here)"),
    file(".yarnrc", "yarn 1"),
    file(".yarnrc.yml", "yarn 2+ (yarnPath runs that file)"),
    file(".bunfig.toml", "bun (preload scripts)"),
    file(
        ".pypirc",
        "twine and setuptools (package index and credentials)",
    ),
    dir(".pip", "pip (legacy config: package index)"),
    dir(
        ".cargo",
        "cargo (config: rustc-wrapper, runners; bin on PATH)",
    ),
    dir(".rustup", "rustup (toolchains cargo and rustc run from)"),
    dir(".gradle", "Gradle (init.d scripts run on every build)"),
    dir(".m2", "Maven (settings: repositories)"),
    file(".bazelrc", "Bazel (--run_under, wrappers)"),
    file(".terraformrc", "Terraform (provider overrides)"),
    file(".netrc", "curl, git, pip and ftp (credentials)"),
    file(".curlrc", "curl (options, output files)"),
    file(".wgetrc", "wget"),
    // Containers and clusters.
    dir(".docker", "docker (credsStore helper, CLI plugins)"),
    dir(".kube", "kubectl (exec credential plugins)"),
    // Editors, terminals, REPLs, debuggers, clients.
    file(".vimrc", "vim"),
    file(".gvimrc", "gvim"),
    file(".exrc", "vi and ex"),
    dir(".vim", "vim (plugins)"),
    file(".emacs", "Emacs"),
    dir(".emacs.d", "Emacs (init.el)"),
    dir(".vscode", "VS Code (extensions)"),
    dir(".vscode-server", "VS Code remote (extensions)"),
    file(".tmux.conf", "tmux (run-shell)"),
    file(".screenrc", "screen (exec)"),
    file(".gdbinit", "gdb"),
    file(".lldbinit", "lldb"),
    file(".psqlrc", "psql (\\! runs commands)"),
    file(".my.cnf", "mysql clients (pager)"),
    file(".sqliterc", "sqlite3 (.shell)"),
    file(".irbrc", "irb"),
    file(".pryrc", "pry"),
    file(".pdbrc", "Python's pdb"),
    file(".Rprofile", "R"),
    file(".ghci", "GHCi"),
    dir(".ipython", "IPython (startup scripts)"),
    dir(".jupyter", "Jupyter (config is Python)"),
    dir(".julia", "Julia (config/startup.jl)"),
    file(
        ".lessfilter",
        "lesspipe, which Debian's ~/.bashrc sets up for less",
    ),
    file(".mailcap", "mailcap readers (commands per file type)"),
    file(".selected_editor", "Debian's sensible-editor"),
    file(".forward", "mail delivery (pipes to programs)"),
    // AI agents (their hooks run commands).
    dir(".claude", "Claude Code (hooks, settings)"),
    file(".claude.json", "Claude Code (MCP servers)"),
    dir(".gemini", "Gemini CLI (hooks, settings)"),
    dir(".cursor", "Cursor (extensions, MCP servers)"),
];

/// The well-known name `name`, if it is one.
#[must_use]
pub fn startup_name(name: &std::ffi::OsStr) -> Option<&'static StartupName> {
    HOME_STARTUP_NAMES.iter().find(|known| name == known.name)
}

/// The top level of one `$HOME`, as the rule needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HomeEntries {
    /// Existing entries whose names start with `.`, sorted.
    pub existing: Vec<OsString>,
    /// Well-known names that do not exist, in [`HOME_STARTUP_NAMES`] order.
    pub missing: Vec<&'static StartupName>,
    /// Why the entries could not be listed, when they could not: `$HOME` is then protected
    /// whole, and the two lists are empty.
    pub unlisted: Option<String>,
}

/// Lists the dot entries of `home` (an absolute, resolved path) and the missing well-known
/// names; see [`HomeEntries`]. Reads one directory, and stats the well-known names.
#[must_use]
pub fn home_entries(home: &Path) -> HomeEntries {
    let unlisted = |why: String| HomeEntries {
        unlisted: Some(why),
        ..HomeEntries::default()
    };
    match std::fs::symlink_metadata(home) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return unlisted("it is not a directory".to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return unlisted("it does not exist".to_owned());
        }
        Err(e) => return unlisted(format!("it cannot be inspected ({e})")),
    }
    let reader = match std::fs::read_dir(home) {
        Ok(reader) => reader,
        Err(e) => return unlisted(format!("it cannot be listed ({e})")),
    };
    let mut existing = Vec::new();
    for entry in reader {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => return unlisted(format!("it cannot be listed ({e})")),
        };
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") {
            if existing.len() == MAX_HOME_DOT_ENTRIES {
                return unlisted(format!(
                    "it holds more than {MAX_HOME_DOT_ENTRIES} entries whose names start with `.`"
                ));
            }
            existing.push(name);
        }
    }
    existing.sort();
    let missing = HOME_STARTUP_NAMES
        .iter()
        .filter(|known| {
            existing
                .binary_search_by(|name| name.as_os_str().cmp(known.name.as_ref()))
                .is_err()
        })
        .collect();
    HomeEntries {
        existing,
        missing,
        unlisted: None,
    }
}

/// Why a path is read-only under the `$HOME` rule (for `permissions show`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HomeProtection {
    /// An existing dot entry of `home`.
    Existing {
        /// The home (as spelled under the root).
        home: PathBuf,
        /// The entry is a symlink: a confined command could replace the link itself, which
        /// no mount can prevent, so the Linux sandbox refuses to start.
        symlink: bool,
    },
    /// The target of a symlinked dot entry `link`.
    LinkTarget {
        /// The entry.
        link: PathBuf,
    },
    /// A missing well-known name of `home`.
    Missing {
        /// The home (as spelled under the root).
        home: PathBuf,
        /// Which name.
        name: &'static StartupName,
    },
    /// `home` itself: its entries could not be listed.
    Whole {
        /// Why.
        reason: String,
    },
}

/// The paths the rule protects for `home` under the writable root `root` (spelled as its
/// entry; `canonical_root` resolved), each with its reason, spelled under `root`. Empty when
/// `home` does not lie in the root, or the root is the filesystem root (a writable `/` can
/// rewrite `/etc/profile` and every program: the rule would protect nothing).
#[must_use]
pub fn home_protected_paths(
    root: &Path,
    canonical_root: &Path,
    home: &Path,
) -> Vec<(PathBuf, HomeProtection)> {
    if canonical_root.parent().is_none() {
        return Vec::new();
    }
    let real = crate::root_judge::canonical_prefix(home);
    let Ok(rest) = real.strip_prefix(canonical_root) else {
        return Vec::new();
    };
    let spelled = if rest.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        root.join(rest)
    };
    let entries = home_entries(&real);
    if let Some(reason) = entries.unlisted {
        return vec![(spelled, HomeProtection::Whole { reason })];
    }
    let mut out = Vec::with_capacity(entries.existing.len() + entries.missing.len());
    for name in &entries.existing {
        let path = spelled.join(name);
        let symlink = std::fs::symlink_metadata(real.join(name))
            .is_ok_and(|meta| meta.file_type().is_symlink());
        out.push((
            path.clone(),
            HomeProtection::Existing {
                home: spelled.clone(),
                symlink,
            },
        ));
        if symlink && let Ok(written) = std::fs::read_link(real.join(name)) {
            // Relative to `$HOME`; one level, as every reader of the entry follows it.
            let target = crate::git_metadata::protect_at(&real.join(written));
            out.push((
                target.path().to_path_buf(),
                HomeProtection::LinkTarget { link: path },
            ));
        }
    }
    for name in entries.missing {
        out.push((
            spelled.join(name.name),
            HomeProtection::Missing {
                home: spelled.clone(),
                name,
            },
        ));
    }
    out
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dot_names_without_repeats_or_slashes() {
        let mut seen = std::collections::HashSet::new();
        for known in HOME_STARTUP_NAMES {
            assert!(
                known.name.starts_with('.') && known.name.len() > 1,
                "{known:?}"
            );
            assert!(!known.name.contains('/'), "{known:?}");
            assert!(seen.insert(known.name), "{} listed twice", known.name);
        }
        assert_eq!(
            startup_name(".bashrc".as_ref()).unwrap().kind,
            HomeEntryKind::File
        );
        assert_eq!(
            startup_name(".ssh".as_ref()).unwrap().kind,
            HomeEntryKind::Directory
        );
        assert!(startup_name("bin".as_ref()).is_none());
    }

    #[test]
    fn existing_dot_entries_and_missing_known_names_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::fs::create_dir(home.join(".my-tool")).unwrap();
        std::fs::write(home.join("notes.txt"), "").unwrap();
        std::fs::create_dir(home.join("bin")).unwrap();
        let found = home_entries(&home);
        assert_eq!(found.unlisted, None);
        assert_eq!(found.existing, [".bashrc", ".my-tool"]);
        let missing: Vec<&str> = found.missing.iter().map(|n| n.name).collect();
        assert!(!missing.contains(&".bashrc"));
        assert!(missing.contains(&".profile") && missing.contains(&".ssh"));
        assert_eq!(missing.len(), HOME_STARTUP_NAMES.len() - 1);
    }

    #[test]
    fn a_home_that_cannot_be_listed_is_protected_whole() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let gone = base.join("gone");
        assert_eq!(
            home_entries(&gone).unlisted.as_deref(),
            Some("it does not exist")
        );
        std::fs::write(base.join("file"), "").unwrap();
        assert_eq!(
            home_entries(&base.join("file")).unlisted.as_deref(),
            Some("it is not a directory")
        );
        let crowded = base.join("crowded");
        std::fs::create_dir(&crowded).unwrap();
        for index in 0..=MAX_HOME_DOT_ENTRIES {
            std::fs::write(crowded.join(format!(".f{index}")), "").unwrap();
        }
        let found = home_entries(&crowded);
        assert!(found.unlisted.unwrap().contains("more than"));
        assert!(found.existing.is_empty() && found.missing.is_empty());
        // Under a root: the home itself is then the one protected path.
        let paths = home_protected_paths(&base, &base, &gone);
        assert_eq!(paths.len(), 1);
        assert_eq!(paths[0].0, gone);
        assert!(matches!(paths[0].1, HomeProtection::Whole { .. }));
    }

    #[test]
    fn paths_are_spelled_under_the_root_and_symlinks_add_their_targets() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let home = base.join("home");
        std::fs::create_dir_all(home.join("dotfiles")).unwrap();
        std::fs::write(home.join("dotfiles/zshrc"), "").unwrap();
        std::os::unix::fs::symlink("dotfiles/zshrc", home.join(".zshrc")).unwrap();
        // The root spelled through a symlink: paths follow the root's spelling.
        let spelled_root = base.join("link");
        std::os::unix::fs::symlink(&base, &spelled_root).unwrap();
        let paths = home_protected_paths(&spelled_root, &base, &home);
        let zshrc = spelled_root.join("home/.zshrc");
        let at = paths.iter().position(|(p, _)| *p == zshrc).unwrap();
        assert_eq!(
            paths[at].1,
            HomeProtection::Existing {
                home: spelled_root.join("home"),
                symlink: true
            }
        );
        assert_eq!(paths[at + 1].0, home.join("dotfiles/zshrc"));
        assert!(
            paths
                .iter()
                .any(|(p, why)| *p == spelled_root.join("home/.ssh")
                    && matches!(why, HomeProtection::Missing { .. }))
        );
        assert!(!paths.iter().any(|(p, _)| p.ends_with("dotfiles")));
        // Not in the root, or a writable `/`: nothing.
        assert!(home_protected_paths(&base.join("other"), &base.join("other"), &home).is_empty());
        assert!(home_protected_paths(Path::new("/"), Path::new("/"), &home).is_empty());
    }
}
