//! Reading `[permissions.<id>.network]` into a [`ManagedNetwork`] (spec 12 §Config).

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use super::EntrySource;
use super::HostPattern;
use super::ManagedNetwork;
use super::NetworkEntry;
use super::NetworkMode;
use super::PatternError;
use super::UnixSocketPermission;
use crate::error::ConfigProblem;
use crate::error::toml_type;

/// A problem at a key below `network` (the path parts after `network`).
pub(crate) type KeyProblem = (Vec<String>, ConfigProblem);

fn at(keys: &[&str], problem: ConfigProblem) -> KeyProblem {
    (keys.iter().map(|key| (*key).to_owned()).collect(), problem)
}

fn wrong_type(keys: &[&str], expected: &'static str, found: &toml::Value) -> KeyProblem {
    at(
        keys,
        ConfigProblem::WrongType {
            expected,
            found: toml_type(found),
        },
    )
}

/// The managed network of a `network` table whose `enabled` is true and which has a
/// `domains` table; `Ok(None)` when it has none. Validates `mode`, `allow_local_binding`
/// and `unix_sockets` whenever they are present, so a typo never goes unnoticed.
///
/// # Errors
/// The first bad entry, with its key path below `network`.
pub(crate) fn managed_network(
    table: &toml::Table,
    enabled: bool,
) -> Result<Option<ManagedNetwork>, KeyProblem> {
    let mode = match table.get("mode") {
        None => NetworkMode::Full,
        Some(toml::Value::String(mode)) if mode == "full" => NetworkMode::Full,
        Some(toml::Value::String(mode)) if mode == "limited" => NetworkMode::Limited,
        Some(toml::Value::String(other)) => {
            return Err(at(
                &["mode"],
                ConfigProblem::InvalidValue {
                    value: other.clone(),
                    allowed: "\"full\", \"limited\"",
                },
            ));
        }
        Some(other) => return Err(wrong_type(&["mode"], "a string", other)),
    };
    let allow_local_binding = match table.get("allow_local_binding") {
        None => false,
        Some(toml::Value::Boolean(value)) => *value,
        Some(other) => return Err(wrong_type(&["allow_local_binding"], "a boolean", other)),
    };
    let unix_sockets = unix_sockets(table.get("unix_sockets"))?;
    let (allow, deny) = match table.get("domains") {
        None => return Ok(None),
        Some(toml::Value::Table(domains)) => domain_lists(domains)?,
        Some(other) => {
            return Err(wrong_type(
                &["domains"],
                "a table of \"<host pattern>\" = \"allow\" | \"deny\"",
                other,
            ));
        }
    };
    if !enabled {
        return Ok(None);
    }
    Ok(Some(ManagedNetwork {
        allow,
        deny,
        mode,
        allow_local_binding,
        unix_sockets,
    }))
}

fn domain_lists(
    domains: &toml::Table,
) -> Result<(Vec<NetworkEntry>, Vec<NetworkEntry>), KeyProblem> {
    let (mut allow, mut deny) = (Vec::new(), Vec::new());
    for (raw, value) in domains {
        let keys = ["domains", raw.as_str()];
        let allowed = match value {
            toml::Value::String(word) if word == "allow" => true,
            toml::Value::String(word) if word == "deny" => false,
            toml::Value::String(word) => {
                return Err(at(
                    &keys,
                    ConfigProblem::InvalidValue {
                        value: word.clone(),
                        allowed: "\"allow\", \"deny\"",
                    },
                ));
            }
            other => return Err(wrong_type(&keys, "\"allow\" or \"deny\"", other)),
        };
        let pattern =
            HostPattern::parse(raw).map_err(|error| pattern_problem(&keys, raw, &error))?;
        if !allowed && pattern.is_global() {
            return Err(pattern_problem(&keys, raw, &PatternError::GlobalDeny));
        }
        let entry = NetworkEntry {
            pattern,
            source: EntrySource::Config,
        };
        if allowed {
            allow.push(entry);
        } else {
            deny.push(entry);
        }
    }
    Ok((allow, deny))
}

fn pattern_problem(keys: &[&str], raw: &str, error: &PatternError) -> KeyProblem {
    at(
        keys,
        ConfigProblem::InvalidHostPattern {
            pattern: raw.escape_debug().to_string(),
            reason: error.to_string(),
        },
    )
}

fn unix_sockets(
    value: Option<&toml::Value>,
) -> Result<BTreeMap<PathBuf, UnixSocketPermission>, KeyProblem> {
    let mut sockets = BTreeMap::new();
    let Some(value) = value else {
        return Ok(sockets);
    };
    let toml::Value::Table(table) = value else {
        return Err(wrong_type(
            &["unix_sockets"],
            "a table of \"<absolute path>\" = \"allow\" | \"deny\"",
            value,
        ));
    };
    for (path, permission) in table {
        let keys = ["unix_sockets", path.as_str()];
        let permission = match permission {
            toml::Value::String(word) if word == "allow" => UnixSocketPermission::Allow,
            toml::Value::String(word) if word == "deny" => UnixSocketPermission::Deny,
            toml::Value::String(word) => {
                return Err(at(
                    &keys,
                    ConfigProblem::InvalidValue {
                        value: word.clone(),
                        allowed: "\"allow\", \"deny\"",
                    },
                ));
            }
            other => return Err(wrong_type(&keys, "\"allow\" or \"deny\"", other)),
        };
        if !Path::new(path).is_absolute() || path.contains('\0') {
            return Err(at(
                &keys,
                ConfigProblem::UnixSocketNotAbsolute { path: path.clone() },
            ));
        }
        sockets.insert(
            crate::paths::normalize_lexically(Path::new(path)),
            permission,
        );
    }
    Ok(sockets)
}
