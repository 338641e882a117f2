//! Helpers shared by several subcommands.

use std::path::{Path, PathBuf};

use airlock_permissions::normalize_lexically;
use anyhow::Context;

/// `-C DIR` (or the current directory), absolute, normalised, and existing.
///
/// # Errors
/// The current directory cannot be read, or the result is not a directory.
pub(crate) fn working_directory(cd: Option<&Path>) -> anyhow::Result<PathBuf> {
    let current = std::env::current_dir().context("cannot read the current directory")?;
    let cwd = match cd {
        Some(dir) => normalize_lexically(&current.join(dir)),
        None => current,
    };
    anyhow::ensure!(
        cwd.is_dir(),
        "working directory {} does not exist or is not a directory; pass an existing -C DIR",
        cwd.display()
    );
    Ok(cwd)
}

/// Where a saved prefix rule goes, for people (issue 18 item 6, field log BL-15): the
/// user's own rules file, which applies to every project.
pub fn amendment_scope(amendment_file: &std::path::Path) -> String {
    format!(
        "saved to: {} (your user rules: applies in every project, not only this one)",
        amendment_file.display()
    )
}
