//! Compiling a merged profile table into a symbolic `PermissionProfile`
//! (reference `permissions-config.md` §3, spec 04 §Compilation).
//!
//! The result is symbolic: `:workspace_roots` entries stay `project_roots{subpath}` and globs
//! scoped under it stay relative, to be materialised per workspace root later
//! ([`crate::materialize_project_roots_with_workspace_roots`]).

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::ActivePermissionProfile;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;

use crate::builtins::EXTERNAL_SANDBOX;
use crate::builtins::built_in_profile;
use crate::config::AirlockConfig;
use crate::error::ConfigProblem;
use crate::error::Result;
use crate::error::toml_type;
use crate::inherit::MergedProfile;
use crate::inherit::Resolution;
use crate::inherit::resolve_profile;
use crate::paths::expand_home;
use crate::paths::key_path;
use crate::paths::normalize_lexically;

/// Keys a `[permissions.<id>]` table may have (reference §1).
const PROFILE_KEYS: [&str; 5] = [
    "description",
    "extends",
    "workspace_roots",
    "filesystem",
    "network",
];

/// Keys of a profile's `network` table (reference §3 "Network section"). Only `enabled` is
/// interpreted here; the proxy keys belong to the network proxy.
const NETWORK_KEYS: [&str; 13] = [
    "enabled",
    "proxy_url",
    "enable_socks5",
    "socks_url",
    "enable_socks5_udp",
    "allow_upstream_proxy",
    "dangerously_allow_non_loopback_proxy",
    "dangerously_allow_all_unix_sockets",
    "mode",
    "domains",
    "unix_sockets",
    "allow_local_binding",
    "mitm",
];

/// A compiled profile: the symbolic [`PermissionProfile`] plus what a client shows or needs to
/// materialise it.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledPermissionProfile {
    /// Id and built-in ancestor (display only).
    pub active: ActivePermissionProfile,
    /// The profile's own `description`.
    pub description: Option<String>,
    /// The symbolic profile.
    pub profile: PermissionProfile,
    /// Extra workspace roots from `workspace_roots` (true entries, sorted, `~` expanded).
    pub extra_workspace_roots: Vec<PathBuf>,
    /// The raw `network` table, for the network proxy (empty when absent).
    pub network_proxy: toml::Table,
    /// The managed network (spec 12): `Some` when the network is enabled and the profile
    /// has a `network.domains` table; its lists are the config's until `.rules` are added
    /// ([`crate::network::ManagedNetwork::apply_network_rule`]).
    pub managed_network: Option<crate::network::ManagedNetwork>,
    /// Warnings (unknown tokens and keys, glob caveats, empty filesystem).
    pub warnings: Vec<String>,
}

impl CompiledPermissionProfile {
    /// The workspace roots for materialisation: `cwd` first, then the profile's, without repeats.
    #[must_use]
    pub fn workspace_roots(&self, cwd: &Path) -> Vec<PathBuf> {
        let mut roots = vec![normalize_lexically(cwd)];
        for root in &self.extra_workspace_roots {
            if !roots.contains(root) {
                roots.push(root.clone());
            }
        }
        roots
    }
}

/// Compiles profile `id` (a built-in or a `[permissions.<id>]` table) from `config`.
/// `selector_key` names the setting that chose `id` in errors (`default_permissions`, `-P`).
///
/// Shapes: filesystem keys compile in sorted key order (byte order of the merged table), scoped
/// subpaths in sorted order too; `network.enabled = true` → `enabled`, else `restricted`.
///
/// Spec 04 writes this as `compile_permission_profile(toml, id, cwd)`; here the cwd is applied
/// later, by materialisation against [`CompiledPermissionProfile::workspace_roots`], so that the
/// symbolic profile can also be sent to a remote executor.
///
/// # Errors
/// Every resolution and compile error of reference §2–3 (see [`ConfigProblem`]), each naming the
/// config file and key.
pub fn compile_permission_profile(
    config: &AirlockConfig,
    id: &str,
    selector_key: &str,
) -> Result<CompiledPermissionProfile> {
    match resolve_profile(config, id, selector_key)? {
        Resolution::BuiltIn(id) => Ok(CompiledPermissionProfile {
            profile: built_in_profile(&id).unwrap_or_default(),
            active: ActivePermissionProfile { id, extends: None },
            description: None,
            extra_workspace_roots: Vec::new(),
            network_proxy: toml::Table::new(),
            managed_network: None,
            warnings: Vec::new(),
        }),
        Resolution::User(merged) => compile_merged(config, &merged),
    }
}

/// Compiles a merged user profile.
fn compile_merged(
    config: &AirlockConfig,
    merged: &MergedProfile,
) -> Result<CompiledPermissionProfile> {
    let mut compiler = Compiler {
        config,
        id: &merged.id,
        warnings: Vec::new(),
    };
    for key in merged.table.keys() {
        if !PROFILE_KEYS.contains(&key.as_str()) {
            compiler.warn(format!(
                "ignoring unknown key `{}`",
                key_path(&["permissions", &merged.id, key])
            ));
        }
    }
    let description = match merged.table.get("description") {
        None => None,
        Some(toml::Value::String(text)) => Some(text.clone()),
        Some(other) => return Err(compiler.wrong_type(&["description"], "a string", other)),
    };
    let extra_workspace_roots = compiler.workspace_roots(merged.table.get("workspace_roots"))?;
    let (network, network_proxy, managed_network) =
        compiler.network(merged.table.get("network"))?;
    let external = merged.built_in_base.as_deref() == Some(EXTERNAL_SANDBOX);
    let managed_network = if external && managed_network.is_some() {
        // The external sandbox owns the network; Airlock's proxy would not be in the path.
        compiler.warn(format!(
            "`{}` is not enforced under an external sandbox (Airlock runs no sandbox or proxy there); extend `:workspace` to use the managed network",
            key_path(&["permissions", &merged.id, "network", "domains"])
        ));
        None
    } else {
        managed_network
    };
    let profile = if external {
        if merged.table.contains_key("filesystem") {
            return Err(config.error(
                key_path(&["permissions", &merged.id, "filesystem"]),
                ConfigProblem::ExternalWithFilesystem {
                    id: merged.id.clone(),
                },
            ));
        }
        PermissionProfile::External { network }
    } else {
        let (entries, glob_scan_max_depth) = compiler.filesystem(merged.table.get("filesystem"))?;
        PermissionProfile::Managed {
            file_system: ManagedFileSystemPermissions::Restricted {
                entries,
                glob_scan_max_depth,
            },
            network,
        }
    };
    let built_in = merged
        .inherited
        .iter()
        .find(|ancestor| ancestor.starts_with(':'))
        .cloned();
    Ok(CompiledPermissionProfile {
        active: ActivePermissionProfile {
            id: merged.id.clone(),
            extends: built_in.or_else(|| merged.inherited.first().cloned()),
        },
        description,
        profile,
        extra_workspace_roots,
        network_proxy,
        managed_network,
        warnings: compiler.warnings,
    })
}

#[path = "compile_filesystem.rs"]
mod filesystem;

/// State while compiling one profile.
struct Compiler<'a> {
    config: &'a AirlockConfig,
    id: &'a str,
    warnings: Vec<String>,
}

impl Compiler<'_> {
    fn warn(&mut self, message: String) {
        self.warnings
            .push(format!("{}: {message}", self.config.origin));
    }

    fn key(&self, rest: &[&str]) -> String {
        let mut parts = vec!["permissions", self.id];
        parts.extend_from_slice(rest);
        key_path(&parts)
    }

    fn error(&self, rest: &[&str], problem: ConfigProblem) -> crate::PermissionsError {
        self.config.error(self.key(rest), problem)
    }

    fn wrong_type(
        &self,
        rest: &[&str],
        expected: &'static str,
        found: &toml::Value,
    ) -> crate::PermissionsError {
        self.error(
            rest,
            ConfigProblem::WrongType {
                expected,
                found: toml_type(found),
            },
        )
    }

    /// `workspace_roots = { "<path>" = bool }`: true entries, sorted, `~` expanded.
    fn workspace_roots(&self, value: Option<&toml::Value>) -> Result<Vec<PathBuf>> {
        let Some(value) = value else {
            return Ok(Vec::new());
        };
        let toml::Value::Table(table) = value else {
            return Err(self.wrong_type(
                &["workspace_roots"],
                "a table of path = true|false",
                value,
            ));
        };
        let mut roots = Vec::new();
        for (path, enabled) in table {
            let key = ["workspace_roots", path.as_str()];
            let toml::Value::Boolean(enabled) = enabled else {
                return Err(self.wrong_type(&key, "a boolean", enabled));
            };
            let resolved = match expand_home(path, self.config.home.as_deref()) {
                Ok(Some(expanded)) => expanded,
                Ok(None) if Path::new(path).is_absolute() => PathBuf::from(path),
                Ok(None) => {
                    return Err(
                        self.error(&key, ConfigProblem::RootNotAbsolute { path: path.clone() })
                    );
                }
                Err(()) => {
                    return Err(self.error(&key, ConfigProblem::HomeUnset { path: path.clone() }));
                }
            };
            if *enabled {
                roots.push(normalize_lexically(&resolved));
            }
        }
        Ok(roots)
    }

    /// `network`: `enabled = true` → enabled; `domains` (with the network enabled) → the
    /// managed network; the proxy keys are validated (spec 12 §Config).
    fn network(
        &mut self,
        value: Option<&toml::Value>,
    ) -> Result<(
        NetworkSandboxPolicy,
        toml::Table,
        Option<crate::network::ManagedNetwork>,
    )> {
        let Some(value) = value else {
            return Ok((NetworkSandboxPolicy::Restricted, toml::Table::new(), None));
        };
        let toml::Value::Table(table) = value else {
            return Err(self.wrong_type(&["network"], "a table", value));
        };
        let enabled = match table.get("enabled") {
            None => false,
            Some(toml::Value::Boolean(enabled)) => *enabled,
            Some(other) => {
                return Err(self.wrong_type(&["network", "enabled"], "a boolean", other));
            }
        };
        for key in table.keys() {
            if !NETWORK_KEYS.contains(&key.as_str()) {
                let path = self.key(&["network", key]);
                self.warn(format!("ignoring unknown key `{path}`"));
            }
        }
        let managed =
            crate::network::managed_network(table, enabled).map_err(|(rest, problem)| {
                let mut keys = vec!["network"];
                keys.extend(rest.iter().map(String::as_str));
                self.error(&keys, problem)
            })?;
        if !enabled && table.contains_key("domains") {
            let path = self.key(&["network", "domains"]);
            self.warn(format!(
                "`{path}` has no effect while the network is off; set `enabled = true` to route the network through the managed proxy"
            ));
        }
        let allows_sockets = table
            .get("unix_sockets")
            .and_then(toml::Value::as_table)
            .is_some_and(|sockets| sockets.values().any(|v| v.as_str() == Some("allow")));
        if managed.is_none() && allows_sockets {
            let path = self.key(&["network", "unix_sockets"]);
            let effect = if enabled {
                "every Unix socket stays reachable with the full network"
            } else {
                "no Unix socket is reachable while the network is off"
            };
            self.warn(format!(
                "`{path}` is enforced only with a managed network (a `network.domains` table); {effect}"
            ));
        }
        let policy = if enabled {
            NetworkSandboxPolicy::Enabled
        } else {
            NetworkSandboxPolicy::Restricted
        };
        Ok((policy, table.clone(), managed))
    }
}
