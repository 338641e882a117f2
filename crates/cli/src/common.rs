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
    // Say which of the two it is: `HOME=` (empty) is a different mistake from no HOME.
    let state = if std::env::var_os("HOME").is_some() {
        "empty"
    } else {
        "not set"
    };
    anyhow::ensure!(
        set("AIRLOCK_HOME") || set("HOME"),
        "HOME is {state}, so Airlock cannot find its configuration (~/.airlock); set HOME, or \
         AIRLOCK_HOME to the folder that holds config.toml"
    );
    // A relative home would move with the working directory, often into the workspace a
    // confined command can write: its config and rules would be the agent's to plant.
    for name in ["AIRLOCK_HOME", "HOME"] {
        if let Some(value) = std::env::var_os(name).filter(|value| !value.is_empty()) {
            let path = Path::new(&value);
            anyhow::ensure!(
                path.is_absolute(),
                "{name} is the relative path `{}`; Airlock reads its configuration and rules \
                 from there, so it must be absolute: set {name} to an absolute path",
                crate::terminal_text::escape(&path.display().to_string())
            );
        }
    }
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

/// Refuses a profile id that is neither built in nor defined under `[permissions]`, naming
/// it and listing the known ones (issue 17 item 8), for `-P ID` and `default_permissions`.
///
/// # Errors
/// The selected id is unknown.
pub(crate) fn check_profile_id(
    config: &airlock_permissions::AirlockConfig,
    requested: Option<&str>,
) -> anyhow::Result<()> {
    let defined: Vec<&str> = config
        .table
        .get("permissions")
        .and_then(|value| value.as_table())
        .map(|table| table.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let default = config
        .table
        .get("default_permissions")
        .and_then(|value| value.as_str());
    let (id, source) = match (requested, default) {
        (Some(id), _) => (id, "-P".to_owned()),
        (None, Some(id)) => (id, format!("default_permissions in {}", config.origin)),
        (None, None) => return Ok(()),
    };
    // `:`-ids are built-in names; the permissions crate names an unknown one and lists them.
    if id.starts_with(':') || defined.contains(&id) {
        return Ok(());
    }
    let mut known: Vec<&str> = airlock_permissions::BUILT_IN_IDS.to_vec();
    known.extend(defined.iter().copied());
    anyhow::bail!(
        "unknown permission profile `{id}` ({source}); known profiles: {}; define it as \
         [permissions.\"{id}\"] in {} or pick a known one",
        known.join(", "),
        if config.file_exists {
            config.origin.clone()
        } else {
            "$AIRLOCK_HOME/config.toml".to_owned()
        }
    )
}

/// [`check_profile_id`], then [`airlock_permissions::select_permission_profile`].
///
/// # Errors
/// An unknown profile id, or any selection error.
pub(crate) fn select_profile(
    config: &airlock_permissions::AirlockConfig,
    requested: Option<&str>,
    cwd: &Path,
) -> anyhow::Result<airlock_permissions::SelectedPermissions> {
    check_profile_id(config, requested)?;
    Ok(airlock_permissions::select_permission_profile(
        config, requested, cwd,
    )?)
}
/// Where a saved prefix rule goes, for people (issue 18 item 6, field log BL-15): the
/// user's own rules file, which applies to every project.
pub fn amendment_scope(amendment_file: &std::path::Path) -> String {
    format!(
        "saved to: {} (your user rules: applies in every project, not only this one)",
        amendment_file.display()
    )
}

/// Writes `text` to stdout and flushes. A reader that stopped early (`| head`) is not an
/// error: the broken pipe is ignored, so the command exits quietly, as `cat` does.
///
/// # Errors
/// Any other write error, as "cannot write to stdout".
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => anyhow::Context::context(other, "cannot write to stdout"),
    }
}
/// The clap value parser of every `-c KEY=VALUE`: a malformed override is a usage error
/// (exit 2, issue 17 item 3), never a refusal after start-up. The value is kept as given;
/// the config loader parses it again when applying it.
///
/// # Errors
/// The override has no `=`, an empty key segment or an unclosed quote; the message names
/// the expected form `-c key=value`.
pub(crate) fn override_arg(raw: &str) -> Result<String, String> {
    match airlock_permissions::parse_override(raw) {
        Ok(_) => Ok(raw.to_owned()),
        Err(airlock_permissions::PermissionsError::InvalidOverride { reason, .. }) => Err(format!(
            "{reason}; expected `-c key=value` (a dotted key, then `=`, then a TOML value or a \
             string), e.g. -c approval_policy=never"
        )),
        Err(other) => Err(other.to_string()),
    }
}

/// This executable's path, read once per process from `/proc/self/exe` (where the kernel
/// gives the path it executed with every symlink resolved, so it needs no canonicalizing);
/// `None` when it cannot be read.
pub(crate) fn current_exe() -> Option<&'static Path> {
    static EXE: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().ok()).as_deref()
}

/// The warning when the running `airlock` executable lies inside a writable root of
/// `profile` (materialised) from `cwd`: `airlock` is its own sandbox helper, so a confined
/// command could replace it and every later run would be unconfined (the same class as a
/// `bwrap` found on a writable PATH). Only a warning: a demo build under the clone (perhaps
/// under `/tmp`) must still run. `None` when the profile has no Airlock sandbox or the
/// executable is outside every writable root.
pub(crate) fn executable_inside_writable_root(
    profile: &airlock_permissions::PermissionProfile,
    cwd: &Path,
) -> Option<String> {
    let policy = airlock_permissions::file_system_sandbox_policy(profile);
    if policy.kind != airlock_protocol::FileSystemSandboxKind::Restricted
        || !matches!(
            profile,
            airlock_permissions::PermissionProfile::Managed { .. }
        )
    {
        return None;
    }
    let exe = current_exe()?;
    // Judging the writable roots costs a launch ~0.1 ms; the executable is almost always
    // outside every write entry, which rules it out at once.
    let ctx = airlock_permissions::ResolveContext::new(cwd);
    if !airlock_permissions::write_entry_paths(&policy, &ctx)
        .iter()
        .any(|path| exe.starts_with(path))
    {
        return None;
    }
    let root = airlock_linux_sandbox::bwrap_path::writable_roots(&policy, cwd)
        .into_iter()
        .find(|root| exe.starts_with(root))?;
    Some(format!(
        "the airlock executable {} lies inside the writable root {} of this profile: a confined \
         command can replace it, and every later run would be unconfined; install it outside \
         (e.g. `cargo install --path crates/cli --root /usr/local`, or copy it to /usr/local/bin) \
         and run it from there",
        exe.display(),
        root.display()
    ))
}
