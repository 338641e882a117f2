//! Compiling a merged profile table into a symbolic `PermissionProfile`
//! (reference `permissions-config.md` §3, spec 04 §Compilation).
//!
//! The result is symbolic: `:workspace_roots` entries stay `project_roots{subpath}` and globs
//! scoped under it stay relative, to be materialised per workspace root later
//! ([`crate::materialize_project_roots_with_workspace_roots`]).

use std::num::NonZeroUsize;
use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::ActivePermissionProfile;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;
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
use crate::paths::is_glob;
use crate::paths::is_valid_subpath;
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

/// Where a filesystem key points before its value is applied.
enum Base {
    /// An absolute path (after `~` expansion); may contain glob characters.
    Path(PathBuf),
    /// `:workspace_roots` / `:project_roots`.
    WorkspaceRoots,
    /// `:root`, `:minimal`, `:tmpdir`, `:slash_tmp` (no nested entries).
    Fixed(FileSystemSpecialPath),
    /// Any other `:token`.
    Unknown(String),
}

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

    /// The `filesystem` table: entries in sorted key order, and `glob_scan_max_depth`.
    fn filesystem(
        &mut self,
        value: Option<&toml::Value>,
    ) -> Result<(Vec<FileSystemSandboxEntry>, Option<NonZeroUsize>)> {
        let empty = toml::Table::new();
        let table = match value {
            None => &empty,
            Some(toml::Value::Table(table)) => table,
            Some(other) => return Err(self.wrong_type(&["filesystem"], "a table", other)),
        };
        let depth = match table.get("glob_scan_max_depth") {
            None => None,
            Some(toml::Value::Integer(depth)) => {
                let parsed = usize::try_from(*depth).ok().and_then(NonZeroUsize::new);
                match parsed {
                    Some(depth) => Some(depth),
                    None => {
                        return Err(self.error(
                            &["filesystem", "glob_scan_max_depth"],
                            ConfigProblem::GlobDepthTooSmall { value: *depth },
                        ));
                    }
                }
            }
            Some(other) => {
                return Err(self.wrong_type(
                    &["filesystem", "glob_scan_max_depth"],
                    "an integer of at least 1",
                    other,
                ));
            }
        };
        let mut keys: Vec<&String> = table
            .keys()
            .filter(|key| *key != "glob_scan_max_depth")
            .collect();
        keys.sort();
        let mut entries = Vec::new();
        for key in keys {
            let value = &table[key.as_str()];
            self.filesystem_key(key, value, &mut entries)?;
        }
        let recognised = entries.iter().any(|entry: &FileSystemSandboxEntry| {
            !matches!(
                entry.path,
                FileSystemPath::Special {
                    value: FileSystemSpecialPath::Unknown { .. }
                }
            )
        });
        if !recognised {
            let id = self.id.to_owned();
            self.warn(format!(
                "permissions profile `{id}` has no filesystem entries Airlock recognises, so commands can read and write nothing; add entries such as \":root\" = \"read\" or extend `:read-only`"
            ));
        }
        if depth.is_none() {
            let deep = entries.iter().any(|entry| {
                matches!(&entry.path, FileSystemPath::GlobPattern { pattern } if pattern.contains("**"))
            });
            if deep {
                let key = self.key(&["filesystem", "glob_scan_max_depth"]);
                self.warn(format!(
                    "deny globs with `**` are expanded by scanning the whole tree on Linux; set `{key}` to bound the scan, or list the levels (`*.env`, `*/*.env`)"
                ));
            }
        }
        Ok((entries, depth))
    }

    /// One filesystem key with a plain access or a scoped table.
    fn filesystem_key(
        &mut self,
        key: &str,
        value: &toml::Value,
        entries: &mut Vec<FileSystemSandboxEntry>,
    ) -> Result<()> {
        let base = self.parse_key(key)?;
        if let Base::Unknown(token) = &base {
            let path = self.key(&["filesystem", key]);
            self.warn(format!(
                "`{path}`: the token `{token}` is not known to this version of Airlock; the entry is kept but not enforced"
            ));
        }
        match value {
            toml::Value::Table(scoped) => {
                if matches!(base, Base::Fixed(_)) {
                    return Err(self.error(
                        &["filesystem", key],
                        ConfigProblem::NestedNotSupported {
                            path: key.to_owned(),
                        },
                    ));
                }
                let mut subpaths: Vec<&String> = scoped.keys().collect();
                subpaths.sort();
                for subpath in subpaths {
                    let access =
                        self.access(&["filesystem", key, subpath], &scoped[subpath.as_str()])?;
                    let subpath = if subpath == "." {
                        None
                    } else if is_valid_subpath(subpath) {
                        Some(subpath.as_str())
                    } else {
                        return Err(self.error(
                            &["filesystem", key, subpath],
                            ConfigProblem::BadSubpath {
                                subpath: subpath.clone(),
                            },
                        ));
                    };
                    entries.push(self.entry(key, &base, subpath, access)?);
                }
            }
            other => {
                let access = self.access(&["filesystem", key], other)?;
                entries.push(self.entry(key, &base, None, access)?);
            }
        }
        Ok(())
    }

    /// Classifies a filesystem key.
    fn parse_key(&self, key: &str) -> Result<Base> {
        if let Some(token) = key.strip_prefix(':') {
            return Ok(match token {
                "root" => Base::Fixed(FileSystemSpecialPath::Root),
                "minimal" => Base::Fixed(FileSystemSpecialPath::Minimal),
                "tmpdir" => Base::Fixed(FileSystemSpecialPath::Tmpdir),
                "slash_tmp" => Base::Fixed(FileSystemSpecialPath::SlashTmp),
                // `:project_roots` is the pre-#22624 spelling, still accepted by 0.169.
                "workspace_roots" | "project_roots" => Base::WorkspaceRoots,
                _ => Base::Unknown(key.to_owned()),
            });
        }
        match expand_home(key, self.config.home.as_deref()) {
            Ok(Some(path)) => Ok(Base::Path(normalize_lexically(&path))),
            Ok(None) if Path::new(key).is_absolute() => {
                Ok(Base::Path(normalize_lexically(Path::new(key))))
            }
            Ok(None) => Err(self.error(
                &["filesystem", key],
                ConfigProblem::PathNotAbsolute {
                    path: key.to_owned(),
                },
            )),
            Err(()) => Err(self.error(
                &["filesystem", key],
                ConfigProblem::HomeUnset {
                    path: key.to_owned(),
                },
            )),
        }
    }

    /// An access string.
    fn access(&self, rest: &[&str], value: &toml::Value) -> Result<FileSystemAccessMode> {
        let toml::Value::String(text) = value else {
            return Err(self.wrong_type(
                rest,
                "\"read\", \"write\", \"deny\" or a table of subpaths",
                value,
            ));
        };
        match text.as_str() {
            "read" => Ok(FileSystemAccessMode::Read),
            "write" => Ok(FileSystemAccessMode::Write),
            "deny" | "none" => Ok(FileSystemAccessMode::Deny),
            _ => Err(self.error(
                rest,
                ConfigProblem::InvalidAccess {
                    value: text.clone(),
                },
            )),
        }
    }

    /// The entry for `base` (+ `subpath`) with `access`, applying the glob rules.
    fn entry(
        &mut self,
        key: &str,
        base: &Base,
        subpath: Option<&str>,
        access: FileSystemAccessMode,
    ) -> Result<FileSystemSandboxEntry> {
        let mut rest = vec!["filesystem", key];
        rest.extend(subpath);
        match base {
            Base::Fixed(special) => Ok(FileSystemSandboxEntry::special(special.clone(), access)),
            Base::Unknown(token) => Ok(FileSystemSandboxEntry::special(
                FileSystemSpecialPath::Unknown {
                    path: token.clone(),
                    subpath: subpath.map(PathBuf::from),
                },
                access,
            )),
            Base::Path(path) => {
                let full = subpath.map_or_else(|| path.clone(), |sub| path.join(sub));
                let text = full.to_string_lossy().into_owned();
                if !is_glob(&text) {
                    return Ok(FileSystemSandboxEntry::path(full, access));
                }
                self.glob_entry(&rest, &text, access, |prefix| FileSystemPath::Path {
                    path: PathBuf::from(prefix),
                })
            }
            Base::WorkspaceRoots => {
                let Some(sub) = subpath else {
                    return Ok(FileSystemSandboxEntry::special(
                        FileSystemSpecialPath::ProjectRoots { subpath: None },
                        access,
                    ));
                };
                if !is_glob(sub) {
                    return Ok(FileSystemSandboxEntry::special(
                        FileSystemSpecialPath::ProjectRoots {
                            subpath: Some(sub.into()),
                        },
                        access,
                    ));
                }
                self.glob_entry(&rest, sub, access, |prefix| FileSystemPath::Special {
                    value: FileSystemSpecialPath::ProjectRoots {
                        subpath: Some(prefix.into()),
                    },
                })
            }
        }
    }

    /// A glob: `deny` keeps the pattern; `read`/`write` only with a single trailing `/**` on an
    /// otherwise literal prefix, which becomes a subtree grant (reference §3).
    fn glob_entry(
        &mut self,
        rest: &[&str],
        pattern: &str,
        access: FileSystemAccessMode,
        subtree: impl FnOnce(&str) -> FileSystemPath,
    ) -> Result<FileSystemSandboxEntry> {
        if access == FileSystemAccessMode::Deny {
            return Ok(FileSystemSandboxEntry::deny_glob(pattern));
        }
        match pattern.strip_suffix("/**") {
            Some(prefix) if !prefix.is_empty() && !is_glob(prefix) => {
                let path = self.key(rest);
                self.warn(format!(
                    "`{path}`: `{pattern}` is treated as the whole subtree `{prefix}`"
                ));
                Ok(FileSystemSandboxEntry {
                    path: subtree(prefix),
                    access,
                    missing_path_behavior: None,
                })
            }
            _ => Err(self.error(
                rest,
                ConfigProblem::GlobNeedsDeny {
                    path: pattern.to_owned(),
                },
            )),
        }
    }
}
