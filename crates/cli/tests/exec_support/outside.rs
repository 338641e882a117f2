//! A fresh directory that a command confined by `:workspace` cannot write, found by asking the
//! permissions crate (issue 17): a clone under `/tmp` puts `target/` inside a writable root,
//! and `$TMPDIR` may be anywhere, so no fixed folder is "outside" on every machine.
//!
//! Candidates, in order: `$AIRLOCK_TEST_OUTSIDE` (for unusual machines), the cargo target's
//! temporary directory, `$HOME/.cache`, `/var/tmp`. The first one that exists and is outside
//! every writable root of `:workspace` for the workspace gets a fresh subdirectory, removed
//! when the returned [`TempDir`] is dropped.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::FileSystemPolicyQueries as _;
use airlock_permissions::ResolveContext;
use tempfile::TempDir;

/// The candidates' parents, in order of preference.
fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = std::env::var_os("AIRLOCK_TEST_OUTSIDE").filter(|v| !v.is_empty()) {
        out.push(PathBuf::from(dir));
    }
    out.push(PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        out.push(PathBuf::from(home).join(".cache"));
    }
    out.push(PathBuf::from("/var/tmp"));
    out
}

/// The parent of every test's folders ([`super::Dirs`]): the first candidate that lies in no git
/// repository. Test workspaces must not sit inside the checkout's own repository: when the
/// clone is under `/tmp`, its `.git` is writable by a confined command, so Airlock rightly keeps
/// every `git` run in such a workspace sandboxed (issue 11 item 4), which is not what most
/// tests are about. Candidates: `$AIRLOCK_TEST_ROOT`, the cargo target's temporary directory,
/// `$HOME/.cache/airlock-tests`, `/var/tmp/airlock-tests`; the target's temporary directory when
/// none qualifies.
pub fn test_root_parent() -> PathBuf {
    let target_tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("AIRLOCK_TEST_ROOT").filter(|v| !v.is_empty()) {
        candidates.push(PathBuf::from(dir));
    }
    candidates.push(target_tmp.clone());
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        candidates.push(PathBuf::from(home).join(".cache/airlock-tests"));
    }
    candidates.push(PathBuf::from("/var/tmp/airlock-tests"));
    candidates
        .into_iter()
        .find(|dir| std::fs::create_dir_all(dir).is_ok() && !in_git_repository(dir))
        .unwrap_or(target_tmp)
}

/// Whether `dir` or one of its ancestors holds a `.git` entry.
fn in_git_repository(dir: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return true;
    };
    dir.ancestors()
        .any(|a| a.join(".git").symlink_metadata().is_ok())
}

/// Whether `path` is writable by a `:workspace` command whose workspace root is `ws`.
pub fn writable_under_workspace(ws: &Path, path: &Path) -> bool {
    let profile = airlock_permissions::built_in_profile(":workspace").unwrap();
    let policy = airlock_permissions::file_system_sandbox_policy(
        &airlock_permissions::materialize_project_roots_with_workspace_roots(
            &profile,
            &[ws.to_path_buf()],
        ),
    );
    airlock_permissions::is_writable_under(&policy, path, &ResolveContext::new(ws))
}

/// A fresh directory outside every writable root of `:workspace` at `ws`, or `None` (with a
/// loud message on stderr naming the writable roots) when no candidate qualifies.
pub fn outside_dir(ws: &Path) -> Option<TempDir> {
    for parent in candidates() {
        let _ = std::fs::create_dir_all(&parent);
        if !parent.is_dir() || writable_under_workspace(ws, &parent.join("airlock-outside")) {
            continue;
        }
        if let Ok(dir) = tempfile::Builder::new()
            .prefix("airlock-outside-")
            .tempdir_in(&parent)
        {
            assert!(!writable_under_workspace(ws, dir.path()));
            return Some(dir);
        }
    }
    let profile = airlock_permissions::built_in_profile(":workspace").unwrap();
    let policy = airlock_permissions::file_system_sandbox_policy(
        &airlock_permissions::materialize_project_roots_with_workspace_roots(
            &profile,
            &[ws.to_path_buf()],
        ),
    );
    let roots: Vec<String> = policy
        .get_writable_roots(&ResolveContext::new(ws))
        .iter()
        .map(|root| root.root.display().to_string())
        .collect();
    eprintln!(
        "\n*** SKIPPED: no directory outside every writable root of :workspace ({}) among {:?}; \
         set AIRLOCK_TEST_OUTSIDE to one ***\n",
        roots.join(", "),
        candidates()
    );
    None
}
