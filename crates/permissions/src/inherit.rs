//! Profile resolution: walking `extends` and merging key-wise from the root ancestor down
//! (reference `permissions-config.md` §2, spec 04 §Config).

use crate::builtins::is_built_in;
use crate::builtins::toml_projection;
use crate::config::AirlockConfig;
use crate::error::ConfigProblem;
use crate::error::Result;
use crate::error::toml_type;
use crate::paths::key_path;

/// A user profile after inheritance: the merged TOML table and what it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MergedProfile {
    /// The selected id.
    pub id: String,
    /// Merged table (`description` is the selected profile's own; `extends` removed).
    pub table: toml::Table,
    /// Ancestors, direct parent first.
    pub inherited: Vec<String>,
    /// The built-in at the root of the chain, if any.
    pub built_in_base: Option<String>,
}

/// How `id` resolves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolution {
    /// A built-in selected directly.
    BuiltIn(String),
    /// A user profile (possibly extending a built-in).
    User(MergedProfile),
}

/// Resolves `id` from the config's `[permissions]` table. `selector_key` names the setting that
/// selected it in errors (`default_permissions` or `-P`).
///
/// # Errors
/// Codex's resolution errors: cycle, undefined or unknown built-in selection, missing
/// `[permissions]` table, unsupported built-in parent, undefined parent; plus wrong types and
/// reserved ids.
pub(crate) fn resolve_profile(
    config: &AirlockConfig,
    id: &str,
    selector_key: &str,
) -> Result<Resolution> {
    let permissions = config.permissions_table()?;
    if let Some(table) = permissions
        && let Some(reserved) = table.keys().find(|key| key.starts_with(':'))
    {
        return Err(config.error(
            key_path(&["permissions", reserved]),
            ConfigProblem::ReservedId {
                id: reserved.clone(),
            },
        ));
    }

    // Walk the chain: `chain[0]` is the selected id, each next one its parent.
    let mut chain: Vec<String> = Vec::new();
    let mut tables: Vec<toml::Table> = Vec::new();
    let mut built_in_base = None;
    let mut current = id.to_owned();
    loop {
        if let Some(start) = chain.iter().position(|seen| *seen == current) {
            let mut cycle: Vec<&str> = chain[start..].iter().map(String::as_str).collect();
            cycle.push(&current);
            let child = chain.last().map_or(id, String::as_str);
            return Err(config.error(
                key_path(&["permissions", child, "extends"]),
                ConfigProblem::Cycle {
                    chain: cycle.join(" -> "),
                },
            ));
        }
        let parent_of = chain.last().cloned();
        chain.push(current.clone());
        match permissions.and_then(|table| table.get(&current)) {
            Some(toml::Value::Table(table)) => {
                let extends = match table.get("extends") {
                    None => None,
                    Some(toml::Value::String(parent)) => Some(parent.clone()),
                    Some(other) => {
                        return Err(config.error(
                            key_path(&["permissions", &current, "extends"]),
                            ConfigProblem::WrongType {
                                expected: "a profile id string",
                                found: toml_type(other),
                            },
                        ));
                    }
                };
                tables.push(table.clone());
                match extends {
                    Some(parent) => current = parent,
                    None => break,
                }
            }
            Some(other) => {
                return Err(config.error(
                    key_path(&["permissions", &current]),
                    ConfigProblem::WrongType {
                        expected: "a table",
                        found: toml_type(other),
                    },
                ));
            }
            None => match parent_of {
                None if is_built_in(&current) => return Ok(Resolution::BuiltIn(current)),
                None => {
                    let problem = if current.starts_with(':') {
                        ConfigProblem::UnknownBuiltIn { id: current }
                    } else if permissions.is_none() {
                        ConfigProblem::MissingPermissionsTable { id: current }
                    } else {
                        ConfigProblem::UndefinedProfile { id: current }
                    };
                    return Err(config.error(selector_key, problem));
                }
                Some(child) => {
                    let key = key_path(&["permissions", &child, "extends"]);
                    if !current.starts_with(':') {
                        return Err(config.error(
                            key,
                            ConfigProblem::UndefinedParent {
                                child,
                                parent: current,
                            },
                        ));
                    }
                    let Some(projection) = toml_projection(&current) else {
                        return Err(config.error(
                            key,
                            ConfigProblem::UnsupportedBuiltInParent {
                                child,
                                parent: current,
                            },
                        ));
                    };
                    tables.push(projection);
                    built_in_base = Some(current);
                    break;
                }
            },
        }
    }

    // Fold from the root-most ancestor down; the parent's description and extends never pass on.
    let mut merged = toml::Table::new();
    for table in tables.into_iter().rev() {
        merged.remove("description");
        merged.remove("extends");
        merge_tables(&mut merged, table);
    }
    merged.remove("extends");
    Ok(Resolution::User(MergedProfile {
        id: id.to_owned(),
        table: merged,
        inherited: chain.into_iter().skip(1).collect(),
        built_in_base,
    }))
}

/// Deep merge: tables merge recursively, any other value in `overlay` replaces the base's.
pub(crate) fn merge_tables(base: &mut toml::Table, overlay: toml::Table) {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(existing)), toml::Value::Table(incoming)) => {
                merge_tables(existing, incoming);
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}
