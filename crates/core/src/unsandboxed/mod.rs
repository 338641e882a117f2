//! Before a command leaves the sandbox (an allow rule's bypass, an approved escalation,
//! an unsandboxed retry): could it run something a sandboxed command planted? (issue 11
//! item 4.)
//!
//! Everything a confined run can write is hostile input to what later runs outside the
//! sandbox. Two kinds of programs read such input from their working tree:
//! - `git`, which runs programs named by its repository's configuration and hooks: the
//!   repository git would use is found ([`git_repo`]) and, when it could carry planted
//!   code, the run stays in the sandbox ([`UnsandboxedReview::refused`]); otherwise it runs
//!   pinned to the repository reviewed ([`UnsandboxedReview::git_env`], `git_pin`), so that
//!   a repository swapped in after the review is not the one git uses; Mercurial (`hg`,
//!   `.hg/hgrc` hooks and extensions) is checked likewise, without a pin;
//! - build tools, which run workspace code by design (`cargo build`, `make`, `npm run`):
//!   nothing can make them safe, so the review only says so ([`UnsandboxedReview::notes`]),
//!   for `explain`, `-v` and the audit record.

mod deferred;
mod git_argv;
mod git_checks;
pub mod git_config;
mod git_index;
mod git_pin;
pub mod git_repo;
mod hg_repo;
mod search_path;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use airlock_permissions::{FileSystemPolicyQueries, ResolveContext};
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_shell::ParsedCommand;
use serde::Serialize;

pub use deferred::DeferredReview;

/// What the review found for one command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UnsandboxedReview {
    /// Why the command must not run outside the sandbox, if it must not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Notes on programs that run workspace code when they run outside the sandbox.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Set when `[exec_policy] allow_rules_bypass_sandbox = false` kept an allow rule from
    /// skipping the sandbox.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bypass_disabled_by_config: bool,
    /// Set when [`Self::refused`] kept an allow rule's bypass from skipping the sandbox.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bypass_refused: bool,
    /// Variables that pin the command's `git` to the repository the review checked
    /// (`GIT_DIR`, and `GIT_WORK_TREE` or `GIT_IMPLICIT_WORK_TREE` where git's rules need
    /// them): added to the environment of every run outside the sandbox, so that git
    /// cannot discover a repository a concurrently running sandboxed command swapped in
    /// after the review (see `git_pin`). Empty when the command runs no git.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub git_env: BTreeMap<String, String>,
}

impl UnsandboxedReview {
    /// Nothing found.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.refused.is_none() && self.notes.is_empty() && !self.bypass_disabled_by_config
    }
}

/// Where the command runs and what the sandbox could have written.
pub struct ReviewContext<'a> {
    /// The command's working directory (absolute).
    pub cwd: &'a Path,
    /// The command's environment (`GIT_DIR`, `HOME` are read).
    pub env: &'a BTreeMap<String, String>,
    /// The filesystem policy the sandboxed runs of this session use.
    pub fs_policy: &'a FileSystemSandboxPolicy,
    /// Whether the caller runs the command itself and applies
    /// [`UnsandboxedReview::git_env`] (`exec`, `serve`, `explain` showing what they do);
    /// false where another program runs it (the hook decision for a harness): no pin is
    /// computed, so none can conflict.
    pub pins_git: bool,
}

/// Programs that run code from their working tree by design (build scripts, Makefiles,
/// package scripts, test suites, task runners).
const BUILD_TOOLS: &[&str] = &[
    "cargo",
    "make",
    "gmake",
    "cmake",
    "ninja",
    "meson",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "bun",
    "node",
    "deno",
    "pip",
    "pip3",
    "poetry",
    "uv",
    "tox",
    "nox",
    "pytest",
    "go",
    "gradle",
    "gradlew",
    "mvn",
    "mvnw",
    "ant",
    "sbt",
    "bazel",
    "bazelisk",
    "just",
    "rake",
    "bundle",
    "composer",
    "mix",
    "dotnet",
    "swift",
    "python",
    "python3",
    "ruby",
    "perl",
    "php",
    "direnv",
    "pre-commit",
    "lefthook",
];

/// Programs that run `git` in the repository of their working directory.
const GIT_CLIENTS: &[&str] = &[
    "gh", "glab", "hub", "tig", "lazygit", "gitui", "git-lfs", "scalar", "repo", "git-cola",
    "gitk", "git-gui",
];

/// Reviews every command the shell could run (the deny view), tracking `cd`.
#[must_use]
pub fn review_command(parsed: &ParsedCommand, ctx: &ReviewContext<'_>) -> UnsandboxedReview {
    let mut review = UnsandboxedReview::default();
    // Each root and its protected subpaths as spelled and with symlinks resolved, so a
    // path is judged whichever way it is written.
    let canonical =
        |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let writable_roots: Vec<(PathBuf, Vec<PathBuf>)> = ctx
        .fs_policy
        .get_writable_roots(&ResolveContext::new(ctx.cwd))
        .into_iter()
        .flat_map(|root| {
            let resolved = (
                canonical(&root.root),
                root.read_only_subpaths
                    .iter()
                    .map(|p| canonical(p))
                    .collect(),
            );
            [(root.root, root.read_only_subpaths), resolved]
        })
        .collect();
    let writable = |path: &Path| {
        writable_roots.iter().any(|(root, protected)| {
            path.starts_with(root) && !protected.iter().any(|sub| path.starts_with(sub))
        })
    };
    let home = ctx.env.get("HOME").map(PathBuf::from);
    // `GIT_DIR=x git ...`, `env GIT_CONFIG_GLOBAL=x git ...`: the command itself changes
    // which repository or configuration git reads; not modelled, so refused.
    let git_assignment = parsed
        .assignments
        .iter()
        .find(|assignment| assignment.name.starts_with("GIT_"))
        .map(|assignment| assignment.name.clone());
    // Every program run outside the sandbox finds the programs *it* runs (git's `ssh`,
    // pager, hooks' tools) through PATH, and its libraries through the loader's paths:
    // an entry the sandbox can write lets a confined run plant them.
    review.refused =
        search_path::writable_entry(&|name: &str| ctx.env.get(name).cloned(), &writable);
    // Every directory the commands may run in so far (`None`: one we cannot tell).
    let mut dirs: Vec<Option<PathBuf>> = vec![Some(ctx.cwd.to_path_buf())];
    // What each git run would be pinned to (`None`: not pinned, `git clone`/`init`), and
    // the programs that would inherit the pin without being git.
    let mut pins: Vec<(String, Option<BTreeMap<String, String>>)> = Vec::new();
    let mut other_programs: Vec<String> = Vec::new();
    for inner in &parsed.inner {
        let argv = inner.argv.as_slice();
        // `git -C x log` is also listed as `git log` (its global options skipped, for the
        // deny rules): that view is checked too, but git runs only the command as given,
        // so only that one is pinned.
        let derived_git_view =
            matches!(inner.via.last(), Some(airlock_shell::Via::GitGlobalOptions));
        let mut ignored = Vec::new();
        let pin_sink = if derived_git_view {
            &mut ignored
        } else {
            &mut pins
        };
        let Some(program) = argv.first() else {
            continue;
        };
        let name = Path::new(program)
            .file_name()
            .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
        match name.as_str() {
            "cd" | "pushd" => {
                dirs.push(cd_target(
                    argv,
                    dirs.last().cloned().flatten(),
                    home.as_deref(),
                ));
            }
            // Exec wrappers that change directory before running the wrapped command.
            "env" | "sudo" | "doas" if changes_directory(argv) => dirs.push(None),
            // `find -execdir CMD`, or `{}` in CMD: the command runs in, or names, the
            // directories find reaches.
            "find"
                if argv
                    .iter()
                    .any(|arg| arg == "-execdir" || arg == "-okdir" || arg.contains("{}")) =>
            {
                dirs.push(None);
            }
            "git" if review.refused.is_none() => {
                review.refused = match &git_assignment {
                    Some(name) => Some(format!(
                        "`{}` runs with `{name}` set by the command itself, which changes the repository or configuration git uses",
                        argv.join(" ")
                    )),
                    None => review_git(
                        argv,
                        &argv.join(" "),
                        &dirs,
                        ctx,
                        &writable,
                        home.as_deref(),
                        pin_sink,
                    ),
                };
            }
            // Programs that run git in their working directory's repository (`gh pr
            // status` runs `git` there): that repository is checked as for `git` itself.
            other if GIT_CLIENTS.contains(&other) && review.refused.is_none() => {
                let plain_git = vec!["git".to_owned()];
                review.refused = review_git(
                    &plain_git,
                    &format!("{} (which runs git)", argv.join(" ")),
                    &dirs,
                    ctx,
                    &writable,
                    home.as_deref(),
                    pin_sink,
                );
            }
            "hg" if review.refused.is_none() => {
                review.refused = dirs
                    .iter()
                    .find_map(|dir| hg_repo::hg_refusal(argv, dir.as_deref(), &writable));
            }
            other if BUILD_TOOLS.contains(&other) => {
                other_programs.push(argv.join(" "));
                let note = format!(
                    "`{}` runs code from its working tree (build scripts, configuration, package scripts), which a sandboxed command could have written; outside the sandbox that code runs unconfined",
                    argv.join(" ")
                );
                if !review.notes.contains(&note) {
                    review.notes.push(note);
                }
            }
            _ => {}
        }
    }
    if review.refused.is_none() && ctx.pins_git {
        match pinned_env(&pins, &other_programs) {
            Ok(env) => review.git_env = env,
            Err(why) => review.refused = Some(why),
        }
    }
    review
}

/// The one environment that pins every git run of the command (see [`git_pin`]), or why
/// there is none: the runs would use different repositories, or a program that must not
/// inherit the pin (`git clone`, `git init`, a build tool that runs git itself) runs too.
fn pinned_env(
    pins: &[(String, Option<BTreeMap<String, String>>)],
    other_programs: &[String],
) -> Result<BTreeMap<String, String>, String> {
    let Some((first_shown, first)) = pins.iter().find(|(_, pin)| pin.is_some()) else {
        return Ok(BTreeMap::new());
    };
    let first = first.clone().unwrap_or_default();
    let repository = first.get("GIT_DIR").cloned().unwrap_or_default();
    for (shown, pin) in pins {
        match pin {
            Some(pin) if *pin != first => {
                return Err(format!(
                    "`{first_shown}` and `{shown}` would use different repositories ({repository} and {}); outside the sandbox Airlock runs git only pinned to the one repository it checked (GIT_DIR), so run them as separate commands",
                    pin.get("GIT_DIR").map_or("", String::as_str)
                ));
            }
            None => {
                return Err(format!(
                    "`{shown}` cannot run with git pinned to the repository Airlock checked for `{first_shown}` (GIT_DIR={repository}); run them as separate commands"
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(program) = other_programs.first() {
        return Err(format!(
            "`{program}` would inherit the pin of `{first_shown}` to the repository Airlock checked (GIT_DIR={repository}), which changes what the git it runs does; run them as separate commands"
        ));
    }
    Ok(first)
}

/// Reviews one git run (`argv`, shown as `shown`) in every directory the shell may have
/// reached (`dirs`); records in `pins` the pin of the last one (where the run happens
/// unless an earlier `cd` failed: every one is checked, any pin is to a checked
/// repository). The refusal, if any.
fn review_git(
    argv: &[String],
    shown: &str,
    dirs: &[Option<PathBuf>],
    ctx: &ReviewContext<'_>,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
    pins: &mut Vec<(String, Option<BTreeMap<String, String>>)>,
) -> Option<String> {
    let mut last = None;
    for dir in dirs {
        match git_review(argv, shown, dir.as_deref(), ctx, writable, home) {
            Err(why) => return Some(why),
            Ok(pin) => last = Some(pin),
        }
    }
    if let Some(pin) = last {
        pins.push((shown.to_owned(), pin));
    }
    None
}

/// `env -C DIR`, `env --chdir=DIR`, `sudo -D DIR` / `--chdir`: the wrapped command runs
/// elsewhere (the directory is not tracked: fail closed).
fn changes_directory(argv: &[String]) -> bool {
    argv.iter().skip(1).any(|arg| {
        arg.starts_with("--chdir")
            || (arg.starts_with('-')
                && !arg.starts_with("--")
                && (arg.contains('C') || arg.contains('D')))
    })
}

/// Where `cd ARGS` goes from `current`; `None` when it cannot be told (`cd -`, an
/// expansion, an unknown start).
fn cd_target(argv: &[String], current: Option<PathBuf>, home: Option<&Path>) -> Option<PathBuf> {
    let target = argv
        .iter()
        .skip(1)
        .find(|arg| !arg.starts_with('-') || *arg == "-");
    match target.map(String::as_str) {
        None => home.map(Path::to_path_buf),
        Some(t) if t == "-" || t.contains('$') || t.contains('`') || t.starts_with('~') => None,
        // `cd -P` works physically: resolved by git_repo::locate like any start.
        Some(t) if argv.iter().skip(1).any(|arg| arg == "-P") => current.map(|dir| dir.join(t)),
        // The shell's logical `cd`: `..` removes the previous component as written, so
        // `cd planted/link/..` is `planted`, whatever `link` points to.
        Some(t) => current.map(|dir| git_repo::normalize(&dir.join(t))),
    }
}

/// Reviews one git run in `dir`: the pin of its repository (`None` for `git clone` and
/// `git init`, which take `GIT_DIR`/`GIT_WORK_TREE` as the repository to create), or why
/// it must stay in the sandbox.
fn git_review(
    argv: &[String],
    shown: &str,
    dir: Option<&Path>,
    ctx: &ReviewContext<'_>,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Result<Option<BTreeMap<String, String>>, String> {
    let Some(dir) = dir else {
        return Err(format!(
            "`{}` may run in a directory Airlock cannot determine, so its repository cannot be checked for planted configuration",
            shown
        ));
    };
    if let Some(why) = git_argv::runs_program(argv) {
        return Err(format!(
            "`{}` {why}: outside the sandbox that is not checked, so it stays inside",
            shown
        ));
    }
    let env = |name: &str| ctx.env.get(name).cloned();
    let location = git_repo::locate_with_env(argv, dir, &env);
    let found = git_repo::check_user_config(&env, writable, home).and_then(|()| {
        let repo = git_repo::discover(&location, writable)?;
        let remotes = match &repo {
            Some(repo) => git_repo::check_repository_and_remotes(repo, writable, home)?,
            None => Vec::new(),
        };
        check_transport(argv, &location.cwd, remotes, writable, home)?;
        if matches!(
            git_argv::split_subcommand(argv),
            Some(("clone" | "init", _))
        ) {
            return Ok(None);
        }
        git_pin::pin(repo.as_ref(), &location).map(Some)
    });
    found.map_err(|git_repo::Unsafe(why)| {
        format!(
            "`{}` would read configuration a sandboxed command could have planted code in: {why}",
            shown
        )
    })
}

/// A git command that talks to another repository runs a server program in a local one
/// (`git push ../other` runs its `pre-receive` hook): every local repository named on
/// the command line or as a remote URL of the repository is checked too.
fn check_transport(
    argv: &[String],
    cwd: &Path,
    remotes: Vec<String>,
    writable: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Result<(), git_repo::Unsafe> {
    let Some((subcommand, rest)) = git_argv::split_subcommand(argv) else {
        return Ok(());
    };
    if !git_argv::TRANSPORT_SUBCOMMANDS.contains(&subcommand) {
        return Ok(());
    }
    // Operands, and the values of `--opt=value` options (`git push --repo=../other`);
    // one that is no existing path (a refspec, a branch) passes.
    let named = rest.iter().filter_map(|arg| match arg.strip_prefix("--") {
        Some(option) => option.split_once('=').map(|(_, value)| value),
        None => (!arg.starts_with('-')).then_some(arg.as_str()),
    });
    for url in named.chain(remotes.iter().map(String::as_str)) {
        git_repo::check_local_remote(url, cwd, writable, home)?;
    }
    Ok(())
}

/// `[exec_policy] allow_rules_bypass_sandbox` (default `true`): `false` makes allow rules
/// skip only the prompt, never the sandbox.
///
/// # Errors
/// The config file, key and fix when the value is not a boolean.
pub fn allow_rules_bypass_sandbox(
    config: &airlock_permissions::AirlockConfig,
) -> Result<bool, String> {
    match config
        .table
        .get("exec_policy")
        .and_then(|section| section.get("allow_rules_bypass_sandbox"))
    {
        None => Ok(true),
        Some(toml::Value::Boolean(value)) => Ok(*value),
        Some(other) => Err(format!(
            "{}: invalid `exec_policy.allow_rules_bypass_sandbox`: {other} is not true or false",
            config.origin
        )),
    }
}

/// Whether a command with `requirement` leaves the sandbox by its requirement alone: an
/// allow rule's bypass, or an escalation the call asks for. Such a command is reviewed
/// before anything runs ([`review_command`], then [`apply_review`]); any other starts
/// confined and is reviewed only if it comes to run outside ([`DeferredReview`]).
#[must_use]
pub fn leaves_by_requirement(
    requirement: &airlock_protocol::ExecApprovalRequirement,
    escalation: bool,
) -> bool {
    escalation
        || matches!(
            requirement,
            airlock_protocol::ExecApprovalRequirement::Skip {
                bypass_sandbox: true,
                ..
            }
        )
}

/// Applies `review` to a requirement: an allow rule's `Skip { bypass_sandbox: true }`
/// becomes a sandboxed `Skip` when the review refused the bypass or `allow_bypass` is
/// false. Returns the review with `bypass_disabled_by_config` set when that applied, and
/// its build-tool notes only when the command may still run outside the sandbox (a
/// bypass, or an escalation request: `escalation`).
pub fn apply_review(
    requirement: &mut airlock_protocol::ExecApprovalRequirement,
    mut review: UnsandboxedReview,
    allow_bypass: bool,
    escalation: bool,
) -> UnsandboxedReview {
    if let airlock_protocol::ExecApprovalRequirement::Skip { bypass_sandbox, .. } = requirement
        && *bypass_sandbox
    {
        if !allow_bypass {
            review.bypass_disabled_by_config = true;
            *bypass_sandbox = false;
        } else if review.refused.is_some() {
            review.bypass_refused = true;
            *bypass_sandbox = false;
        }
    }
    let leaves_sandbox = matches!(
        requirement,
        airlock_protocol::ExecApprovalRequirement::Skip {
            bypass_sandbox: true,
            ..
        }
    ) || (escalation && review.refused.is_none());
    if !leaves_sandbox {
        review.notes.clear();
    }
    // A refusal is kept either way: an unsandboxed retry after a denial must not run it.
    review
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
