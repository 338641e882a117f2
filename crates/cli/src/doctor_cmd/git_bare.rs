//! The `doctor` line about git's `safe.bareRepository` (issue 11, what `:workspace` does not
//! protect). A sandboxed command may write `HEAD`, `objects/`, `refs/` and `config` into any
//! directory of a writable root; git, run later by the user in that directory, takes it for a
//! bare repository and obeys its `config` (a `core.worktree` plus `core.fsmonitor`, an alias,
//! a pager). Airlock's own unconfined git runs are pinned to the reviewed repository
//! (`GIT_DIR`), and the next launch keeps such a directory read-only, but the user's own git in
//! between is outside Airlock. Git's own defence is `safe.bareRepository = explicit` (git 2.38
//! and later): a bare repository is then used only when named by `--git-dir` or `GIT_DIR`.
//!
//! Informational: the line is always `ok` (a default git configuration is not a broken
//! installation); its detail says whether the defence is on and how to turn it on.

use std::process::Command;
use std::process::Stdio;

/// The configured value of `safe.bareRepository` in the user's global, then the system,
/// configuration (a repository's own config is not consulted by git for this key, and a
/// sandboxed command could write it); `None` when unset or git is not installed.
fn configured(scope: &str) -> Option<String> {
    let out = Command::new("git")
        .args(["config", scope, "--get", "safe.bareRepository"])
        .current_dir("/")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let value = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !value.is_empty()).then_some(value)
}

/// What the check prints.
pub(super) fn bare_repository_detail() -> String {
    match configured("--global").or_else(|| configured("--system")) {
        Some(v) if v.eq_ignore_ascii_case("explicit") => {
            "safe.bareRepository = explicit: your git uses a bare repository only when told to, \
             so a directory a sandboxed command turned into one is not used"
                .to_owned()
        }
        other => format!(
            "safe.bareRepository is {}: a directory a sandboxed command turned into a bare \
             repository (HEAD, objects/, refs/, config) would be used by your own git there; \
             `git config --global safe.bareRepository explicit` stops that",
            other.map_or_else(
                || "unset (git's default, all)".to_owned(),
                |v| format!("`{v}`")
            )
        ),
    }
}
