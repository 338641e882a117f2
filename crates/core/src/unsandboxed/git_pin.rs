//! Pinning an unsandboxed `git` to the repository the review checked (red-team race of
//! issue 11 item 4).
//!
//! The review reads the repository before git starts; git then discovers its repository
//! again. A sandboxed command running at the same time can put another repository in
//! place between the two (a `sub/.git` the walk now meets first). So the unsandboxed run
//! gets the reviewed repository in its environment, and git does no discovery at all:
//! - `GIT_DIR`: the reviewed git directory, symlinks resolved (a directory the sandbox
//!   cannot write, or the review would have refused; its `config` and `commondir` are
//!   what the review read);
//! - the working tree git would have taken, spelled out where git's rule for an explicit
//!   `GIT_DIR` differs from its rule for a discovered one (`setup.c`): a discovered `.git`
//!   makes its directory the working tree — `GIT_WORK_TREE` is set to it, unless the
//!   repository's format settings (`core.worktree`, `core.bare = true`, read as git does:
//!   from the common directory's `config` when it declares
//!   `core.repositoryformatversion`, and from `config.worktree` under
//!   `extensions.worktreeConfig`) decide, which git reads from the pinned directory
//!   identically either way; a bare repository found walking up gets
//!   `GIT_IMPLICIT_WORK_TREE=0` (git sets the same itself), so no working tree is invented;
//!   `--work-tree`/`GIT_WORK_TREE` given by the user are left alone;
//! - no repository at all: `GIT_DIR=/dev/null`, which git does not accept as a git
//!   directory and which no sandboxed command can turn into one, so git runs without a
//!   repository (or says it is not in one) instead of finding one planted meanwhile.
//!
//! The working directory and so the prefix inside the working tree are unchanged (git
//! computes the prefix from the cwd and the working tree). Git itself clears these
//! variables for the git processes it runs in submodules.

use std::collections::BTreeMap;
use std::path::Path;

use airlock_permissions::{Follow, Limit, read_untrusted};

use super::git_config::parse_config;
use super::git_repo::{Found, GitLocation, Repository, Unsafe, resolve};

/// Largest config file read for the format settings (bytes).
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The variables that pin a git run to `repo` found from `location` (`None`: git would
/// find no repository); see the module docs.
///
/// # Errors
/// [`Unsafe`] when a config file that decides the working tree cannot be read.
pub(super) fn pin(
    repo: Option<&Repository>,
    location: &GitLocation,
) -> Result<BTreeMap<String, String>, Unsafe> {
    let mut vars = BTreeMap::new();
    let Some(repo) = repo else {
        vars.insert("GIT_DIR".to_owned(), "/dev/null".to_owned());
        return Ok(vars);
    };
    let text = |path: &Path| path.display().to_string();
    vars.insert("GIT_DIR".to_owned(), text(&resolve(&repo.git_dir)));
    if location.work_tree.is_some() {
        return Ok(vars);
    }
    match &repo.found {
        Found::Explicit => {}
        Found::DotGit { top } => {
            if !format_decides_work_tree(repo)? {
                vars.insert("GIT_WORK_TREE".to_owned(), text(&resolve(top)));
            }
        }
        Found::Bare => {
            vars.insert("GIT_IMPLICIT_WORK_TREE".to_owned(), "0".to_owned());
        }
    }
    Ok(vars)
}

/// Whether git's repository-format check (`check_repository_format_gently`) takes
/// `core.worktree` or `core.bare = true` from the repository: then git treats a
/// discovered and an explicit git directory alike.
fn format_decides_work_tree(repo: &Repository) -> Result<bool, Unsafe> {
    let common = format_settings(&repo.common_dir.join("config"))?;
    if common.version.is_none() {
        return Ok(false);
    }
    let has_common = repo.common_dir != repo.git_dir || repo.git_dir.join("commondir").exists();
    let mut decides = !has_common && (common.bare == Some(true) || common.work_tree);
    if common.worktree_config {
        let own = format_settings(&repo.git_dir.join("config.worktree"))?;
        decides |= own.bare == Some(true) || own.work_tree;
        // With per-worktree config git applies the common values too.
        decides |= common.bare == Some(true) || common.work_tree;
    }
    Ok(decides)
}

#[derive(Debug, Default)]
struct FormatSettings {
    version: Option<String>,
    bare: Option<bool>,
    work_tree: bool,
    worktree_config: bool,
}

/// The format keys of one config file, includes not followed (git reads the format with
/// `git_config_from_file`, which does not follow them).
fn format_settings(file: &Path) -> Result<FormatSettings, Unsafe> {
    let mut out = FormatSettings::default();
    let Some(bytes) = read_untrusted(file, Follow::Yes, Limit::Whole(MAX_CONFIG_BYTES))? else {
        return Ok(out);
    };
    let text =
        String::from_utf8(bytes).map_err(|_| Unsafe(format!("{} is not UTF-8", file.display())))?;
    let entries = parse_config(&text)
        .map_err(|error| Unsafe(format!("{} cannot be parsed ({error})", file.display())))?;
    for entry in entries {
        match entry.key().as_str() {
            "core.repositoryformatversion" => out.version = entry.value.clone(),
            "core.bare" => out.bare = Some(git_bool(entry.value.as_deref())),
            "core.worktree" => out.work_tree = entry.value.is_some(),
            "extensions.worktreeconfig" => out.worktree_config = git_bool(entry.value.as_deref()),
            _ => {}
        }
    }
    Ok(out)
}

/// `git_config_bool`: a bare key is true; `true`/`yes`/`on` and non-zero numbers are true.
fn git_bool(value: Option<&str>) -> bool {
    let Some(value) = value else {
        return true;
    };
    matches!(value.to_ascii_lowercase().as_str(), "true" | "yes" | "on")
        || value.trim().parse::<i64>().is_ok_and(|n| n != 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::process::Command;

    use super::*;
    use crate::unsandboxed::git_repo::{discover, locate_with_env};

    fn git(dir: &Path, args: &[&str], env: &BTreeMap<String, String>) -> (Option<i32>, String) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_SYSTEM", "/dev/null")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .envs(env)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    fn setup(dir: &Path, args: &[&str]) {
        let (code, _) = git(
            dir,
            &[
                &[
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@e",
                    "-c",
                    "init.defaultBranch=main",
                    "-c",
                    "protocol.file.allow=always",
                ][..],
                args,
            ]
            .concat(),
            &BTreeMap::new(),
        );
        assert_eq!(code, Some(0), "git {args:?} in {dir:?}");
    }

    /// What the user sees from git in `cwd`: each line is one command's exit code and
    /// standard output.
    fn observe(cwd: &Path, env: &BTreeMap<String, String>) -> Vec<(Option<i32>, String)> {
        let mut seen = Vec::new();
        for args in [
            &["rev-parse", "--is-bare-repository"][..],
            &["rev-parse", "--is-inside-work-tree"],
            &["rev-parse", "--is-inside-git-dir"],
            &["rev-parse", "--show-prefix"],
            &["rev-parse", "--show-toplevel"],
            &["status", "--porcelain"],
            &["ls-files"],
            &["log", "--format=%s"],
        ] {
            seen.push(git(cwd, args, env));
        }
        let (code, dir) = git(cwd, &["rev-parse", "--absolute-git-dir"], env);
        let dir = std::fs::canonicalize(dir.trim_end()).map_or(dir, |p| p.display().to_string());
        seen.push((code, dir));
        seen
    }

    #[test]
    fn a_pinned_git_behaves_as_the_discovering_one() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let ceiling: BTreeMap<String, String> = [(
            "GIT_CEILING_DIRECTORIES".to_owned(),
            root.display().to_string(),
        )]
        .into();
        // A repository with a commit, files in a subdirectory, an untracked file.
        let n = root.join("n");
        setup(&root, &["init", "-q", "n"]);
        std::fs::create_dir_all(n.join("sub/deep")).unwrap();
        std::fs::write(n.join("sub/deep/f"), "x").unwrap();
        std::fs::write(n.join("top"), "x").unwrap();
        setup(&n, &["add", "."]);
        setup(&n, &["commit", "-qm", "n"]);
        std::fs::write(n.join("sub/untracked"), "x").unwrap();
        // A linked worktree; a bare repository; a bare one with a `.git` pointer and a
        // worktree (the `.bare` layout); `--separate-git-dir`; `core.worktree`; a
        // submodule; a bare-form directory with `core.worktree`.
        setup(&n, &["worktree", "add", "-q", "../lw"]);
        std::fs::create_dir_all(root.join("lw/sub")).unwrap();
        setup(&root, &["clone", "-q", "--bare", "n", "b.git"]);
        setup(&root, &["clone", "-q", "--bare", "n", "bw/.bare"]);
        std::fs::write(root.join("bw/.git"), "gitdir: ./.bare\n").unwrap();
        setup(&root.join("bw"), &["worktree", "add", "-q", "main"]);
        setup(&root, &["init", "-q", "--separate-git-dir", "sep.git", "s"]);
        std::fs::create_dir_all(root.join("cwt/x")).unwrap();
        setup(&root, &["init", "-q", "cw"]);
        let cwt = root.join("cwt").display().to_string();
        setup(&root.join("cw"), &["config", "core.worktree", &cwt]);
        setup(&root, &["clone", "-q", "n", "super"]);
        setup(
            &root.join("super"),
            &["submodule", "add", "-q", n.to_str().unwrap(), "lib"],
        );
        std::fs::write(root.join("super/lib/sub/new"), "x").unwrap();
        setup(&root, &["init", "-q", "--bare", "planted"]);
        std::fs::create_dir_all(root.join("pwt")).unwrap();
        let pwt = root.join("pwt").display().to_string();
        setup(&root.join("planted"), &["config", "core.bare", "false"]);
        setup(&root.join("planted"), &["config", "core.worktree", &pwt]);
        std::fs::create_dir_all(root.join("none/x")).unwrap();
        for cwd in [
            n.clone(),
            n.join("sub/deep"),
            n.join(".git"),
            n.join(".git/refs"),
            root.join("lw"),
            root.join("lw/sub"),
            root.join("b.git"),
            root.join("b.git/refs"),
            root.join("bw"),
            root.join("bw/main/sub"),
            root.join("s"),
            root.join("cw"),
            root.join("super"),
            root.join("super/lib/sub"),
            root.join("planted"),
            root.join("none/x"),
        ] {
            let lookup = |name: &str| ceiling.get(name).cloned();
            let location = locate_with_env(&["git".to_owned()], &cwd, &lookup);
            let repo = discover(&location, &|_: &Path| false).unwrap();
            let mut pinned = ceiling.clone();
            let vars = pin(repo.as_ref(), &location).unwrap();
            assert!(vars.contains_key("GIT_DIR"), "{cwd:?}");
            pinned.extend(vars.clone());
            let mut with_pin = observe(&cwd, &pinned);
            let mut without = observe(&cwd, &ceiling);
            if cwd.ends_with("planted") {
                // The one difference known: in a bare-form directory whose
                // `core.worktree` is elsewhere, git started there calls the directory
                // "." and `--is-inside-git-dir` says false; pinned, it says true.
                with_pin.remove(2);
                without.remove(2);
            }
            assert_eq!(with_pin, without, "from {cwd:?} pinned with {vars:?}");
        }
    }
}
