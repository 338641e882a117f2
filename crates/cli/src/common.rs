//! Helpers shared by several subcommands.

use std::path::{Path, PathBuf};

use airlock_permissions::ConfigEnv;
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

/// `$AIRLOCK_HOME` and `$HOME` from the process, refusing to guess when neither says where
/// Airlock's home is (issue 17 item 10: never `/.airlock`).
///
/// # Errors
/// `AIRLOCK_HOME` and `HOME` are both unset or empty.
pub(crate) fn config_env() -> anyhow::Result<ConfigEnv> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    anyhow::ensure!(
        set("AIRLOCK_HOME") || set("HOME"),
        "HOME is not set, so Airlock cannot find its configuration (~/.airlock); set HOME, or \
         AIRLOCK_HOME to the folder that holds config.toml"
    );
    Ok(ConfigEnv::from_process())
}

/// Refuses a filesystem root as the workspace of a profile that writes its workspace roots:
/// from `/`, `:workspace` would make the whole disk writable (and the sandbox cannot protect
/// nested `.git` folders it cannot list). A profile that writes `:root` on its own, or one
/// that never writes the workspace, is unaffected.
///
/// # Errors
/// `cwd` is `/` and the profile writes `:workspace_roots`.
pub(crate) fn refuse_root_workspace(
    cwd: &Path,
    profile: &airlock_permissions::PermissionProfile,
) -> anyhow::Result<()> {
    use airlock_protocol::FileSystemAccessMode;
    use airlock_protocol::FileSystemPath;
    use airlock_protocol::FileSystemSpecialPath;
    if cwd.parent().is_some() {
        return Ok(());
    }
    let policy = airlock_permissions::file_system_sandbox_policy(profile);
    let writes_workspace = policy.entries.iter().any(|entry| {
        entry.access == FileSystemAccessMode::Write
            && matches!(
                &entry.path,
                FileSystemPath::Special {
                    value: FileSystemSpecialPath::ProjectRoots { .. }
                }
            )
    });
    anyhow::ensure!(
        !writes_workspace,
        "the working directory is {}, the filesystem root: as the workspace it would make the \
         whole disk writable; cd into a project directory or pass -C DIR",
        cwd.display()
    );
    Ok(())
}
