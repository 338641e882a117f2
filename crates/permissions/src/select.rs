//! Choosing the active profile for a config and cwd (spec 04 §Config, spec 10 §Configuration,
//! reference `permissions-config.md` §4 and §7).
//!
//! Order: `-P ID`; `default_permissions`; with `allowed_permission_profiles` and no default,
//! `:workspace` when both `:workspace` and `:read-only` are allowed; legacy `sandbox_mode`;
//! `[permissions]` without a default is an error; otherwise — no config file, or one that
//! selects nothing — `:workspace`, the embedded default (issue 17: only `sandbox_mode` selects
//! the legacy mapping; Codex's trust-based `read-only` default would surprise a user who
//! merely added, say, `[hooks]`).

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::ActivePermissionProfile;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxMode;
use airlock_protocol::SandboxPolicy;

use crate::builtins::DANGER_FULL_ACCESS;
use crate::builtins::READ_ONLY;
use crate::builtins::WORKSPACE;
use crate::builtins::is_built_in;
use crate::compile::CompiledPermissionProfile;
use crate::compile::compile_permission_profile;
use crate::config::AirlockConfig;
use crate::error::ConfigProblem;
use crate::error::Result;
use crate::error::toml_type;
use crate::legacy::permission_profile_from_legacy;
use crate::materialize::materialize_project_roots_with_workspace_roots;
use crate::paths::expand_home;
use crate::paths::key_path;
use crate::paths::normalize_lexically;

/// Keys of `[sandbox_workspace_write]` (reference `protocol.md` §4).
const WORKSPACE_WRITE_KEYS: [&str; 4] = [
    "writable_roots",
    "network_access",
    "exclude_tmpdir_env_var",
    "exclude_slash_tmp",
];

/// What selected the active profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileSource {
    /// `-P ID` on the command line.
    CommandLine,
    /// `default_permissions`.
    DefaultPermissions,
    /// `allowed_permission_profiles` allows `:workspace` and `:read-only`, no default set.
    AllowedProfilesDefault,
    /// Legacy `sandbox_mode`.
    LegacySandboxMode,
    /// No config file, or one that selects no profile: `:workspace`.
    EmbeddedDefault,
}

/// The active profile for one cwd.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectedPermissions {
    /// The compiled (symbolic) profile.
    pub compiled: CompiledPermissionProfile,
    /// What selected it.
    pub source: ProfileSource,
    /// Workspace roots: the cwd first, then the profile's extra roots.
    pub workspace_roots: Vec<PathBuf>,
    /// Config and compile warnings, for the user.
    pub warnings: Vec<String>,
}

impl SelectedPermissions {
    /// The symbolic profile (what a remote executor receives, with [`Self::workspace_roots`]).
    #[must_use]
    pub const fn symbolic(&self) -> &PermissionProfile {
        &self.compiled.profile
    }

    /// The profile materialised against the workspace roots (local execution, model text).
    #[must_use]
    pub fn materialized(&self) -> PermissionProfile {
        materialize_project_roots_with_workspace_roots(
            &self.compiled.profile,
            &self.workspace_roots,
        )
    }
}

/// Selects and compiles the active profile. `requested` is `-P ID`; `cwd` must be absolute.
///
/// # Errors
/// Any config error of [`compile_permission_profile`], plus: `[permissions]` without
/// `default_permissions`, invalid `sandbox_mode` / `[sandbox_workspace_write]` values, and the
/// `allowed_permission_profiles` errors (not allowed, unknown id, no usable default).
pub fn select_permission_profile(
    config: &AirlockConfig,
    requested: Option<&str>,
    cwd: &Path,
) -> Result<SelectedPermissions> {
    let mut warnings = config.warnings.clone();
    let allowed = allowed_profiles(config)?;
    let default = config.string("default_permissions")?;
    let sandbox_mode = sandbox_mode(config)?;
    let has_profiles = config
        .permissions_table()?
        .is_some_and(|table| !table.is_empty());

    let selection = if let Some(id) = requested {
        Some((id.to_owned(), ProfileSource::CommandLine, "-P"))
    } else if let Some(id) = default {
        Some((
            id.to_owned(),
            ProfileSource::DefaultPermissions,
            "default_permissions",
        ))
    } else if let Some(allowed) = &allowed {
        if allowed.iter().any(|id| id == WORKSPACE) && allowed.iter().any(|id| id == READ_ONLY) {
            Some((
                WORKSPACE.to_owned(),
                ProfileSource::AllowedProfilesDefault,
                "default_permissions",
            ))
        } else {
            return Err(config.error("default_permissions", ConfigProblem::AllowedNeedsDefault));
        }
    } else if sandbox_mode.is_some() {
        None
    } else if has_profiles {
        return Err(config.error(
            "default_permissions",
            ConfigProblem::PermissionsWithoutDefault,
        ));
    } else {
        Some((
            WORKSPACE.to_owned(),
            ProfileSource::EmbeddedDefault,
            "default_permissions",
        ))
    };

    let Some((id, source, key)) = selection else {
        let mode = sandbox_mode.unwrap_or(SandboxMode::ReadOnly);
        let compiled = legacy_profile(config, mode, &mut warnings)?;
        return Ok(SelectedPermissions {
            compiled,
            source: ProfileSource::LegacySandboxMode,
            workspace_roots: vec![normalize_lexically(cwd)],
            warnings,
        });
    };

    if let Some(allowed) = &allowed
        && !allowed.contains(&id)
    {
        return Err(config.error(
            key,
            ConfigProblem::NotAllowed {
                id,
                allowed: allowed.join(", "),
            },
        ));
    }
    if sandbox_mode.is_some() {
        warnings.push(format!(
            "{}: sandbox_mode is ignored because the permission profile `{id}` is selected",
            config.origin
        ));
    }
    let compiled = compile_permission_profile(config, &id, key)?;
    warnings.extend(compiled.warnings.iter().cloned());
    Ok(SelectedPermissions {
        workspace_roots: compiled.workspace_roots(cwd),
        compiled,
        source,
        warnings,
    })
}

/// `allowed_permission_profiles = { id = bool }`: the ids set to `true`, in key order.
fn allowed_profiles(config: &AirlockConfig) -> Result<Option<Vec<String>>> {
    const KEY: &str = "allowed_permission_profiles";
    let Some(value) = config.table.get(KEY) else {
        return Ok(None);
    };
    let toml::Value::Table(table) = value else {
        return Err(config.error(
            KEY,
            ConfigProblem::WrongType {
                expected: "a table of profile id = true|false",
                found: toml_type(value),
            },
        ));
    };
    let defined = config.permissions_table()?;
    let mut allowed = Vec::new();
    for (id, flag) in table {
        let toml::Value::Boolean(flag) = flag else {
            return Err(config.error(
                key_path(&[KEY, id]),
                ConfigProblem::WrongType {
                    expected: "a boolean",
                    found: toml_type(flag),
                },
            ));
        };
        if !is_built_in(id) && !defined.is_some_and(|table| table.contains_key(id)) {
            return Err(config.error(
                key_path(&[KEY, id]),
                ConfigProblem::AllowedUnknown { id: id.clone() },
            ));
        }
        if *flag {
            allowed.push(id.clone());
        }
    }
    Ok(Some(allowed))
}

/// `sandbox_mode`, if set.
fn sandbox_mode(config: &AirlockConfig) -> Result<Option<SandboxMode>> {
    let Some(value) = config.table.get("sandbox_mode") else {
        return Ok(None);
    };
    value.clone().try_into().map(Some).map_err(|_| {
        config.error(
            "sandbox_mode",
            ConfigProblem::InvalidValue {
                value: value.to_string(),
                allowed: "\"read-only\", \"workspace-write\" or \"danger-full-access\"",
            },
        )
    })
}

/// The profile for a legacy mode, with `[sandbox_workspace_write]` for `workspace-write`.
fn legacy_profile(
    config: &AirlockConfig,
    mode: SandboxMode,
    warnings: &mut Vec<String>,
) -> Result<CompiledPermissionProfile> {
    let (id, policy) = match mode {
        SandboxMode::ReadOnly => (READ_ONLY, SandboxPolicy::new_read_only_policy()),
        SandboxMode::DangerFullAccess => (DANGER_FULL_ACCESS, SandboxPolicy::DangerFullAccess),
        SandboxMode::WorkspaceWrite => (WORKSPACE, workspace_write_policy(config, warnings)?),
    };
    Ok(CompiledPermissionProfile {
        active: ActivePermissionProfile {
            id: id.to_owned(),
            extends: None,
        },
        description: Some(format!("legacy sandbox_mode = \"{}\"", mode_name(mode))),
        profile: permission_profile_from_legacy(&policy),
        extra_workspace_roots: Vec::new(),
        network_proxy: toml::Table::new(),
        managed_network: None,
        warnings: Vec::new(),
    })
}

const fn mode_name(mode: SandboxMode) -> &'static str {
    match mode {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::DangerFullAccess => "danger-full-access",
    }
}

/// `[sandbox_workspace_write]` as a `WorkspaceWrite` policy. Relative writable roots are relative
/// to the config file's directory (as Codex resolves them against its home); `~` is expanded.
fn workspace_write_policy(
    config: &AirlockConfig,
    warnings: &mut Vec<String>,
) -> Result<SandboxPolicy> {
    const TABLE: &str = "sandbox_workspace_write";
    let empty = toml::Table::new();
    let table = match config.table.get(TABLE) {
        None => &empty,
        Some(toml::Value::Table(table)) => table,
        Some(other) => {
            return Err(config.error(
                TABLE,
                ConfigProblem::WrongType {
                    expected: "a table",
                    found: toml_type(other),
                },
            ));
        }
    };
    for key in table.keys() {
        if !WORKSPACE_WRITE_KEYS.contains(&key.as_str()) {
            warnings.push(format!(
                "{}: ignoring unknown key `{}`",
                config.origin,
                key_path(&[TABLE, key])
            ));
        }
    }
    let flag = |key: &str| -> Result<bool> {
        match table.get(key) {
            None => Ok(false),
            Some(toml::Value::Boolean(flag)) => Ok(*flag),
            Some(other) => Err(config.error(
                key_path(&[TABLE, key]),
                ConfigProblem::WrongType {
                    expected: "a boolean",
                    found: toml_type(other),
                },
            )),
        }
    };
    let mut writable_roots = Vec::new();
    match table.get("writable_roots") {
        None => {}
        Some(toml::Value::Array(items)) => {
            for item in items {
                let toml::Value::String(text) = item else {
                    return Err(config.error(
                        key_path(&[TABLE, "writable_roots"]),
                        ConfigProblem::WrongType {
                            expected: "an array of path strings",
                            found: toml_type(item),
                        },
                    ));
                };
                let path = match expand_home(text, config.home.as_deref()) {
                    Ok(Some(path)) => path,
                    Ok(None) => config.config_dir.join(text),
                    Err(()) => {
                        return Err(config.error(
                            key_path(&[TABLE, "writable_roots"]),
                            ConfigProblem::HomeUnset { path: text.clone() },
                        ));
                    }
                };
                writable_roots.push(normalize_lexically(&path));
            }
        }
        Some(other) => {
            return Err(config.error(
                key_path(&[TABLE, "writable_roots"]),
                ConfigProblem::WrongType {
                    expected: "an array of path strings",
                    found: toml_type(other),
                },
            ));
        }
    }
    Ok(SandboxPolicy::WorkspaceWrite {
        writable_roots,
        network_access: flag("network_access")?,
        exclude_tmpdir_env_var: flag("exclude_tmpdir_env_var")?,
        exclude_slash_tmp: flag("exclude_slash_tmp")?,
    })
}
