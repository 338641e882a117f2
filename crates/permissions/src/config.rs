//! Loading `$AIRLOCK_HOME/config.toml` (spec 10 §Configuration) with `-c` overrides, and reading
//! the top-level keys this crate interprets. Keys owned by other layers are known but not read
//! here; anything else (most of a Codex config) produces one warning and is ignored.

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::AskForApproval;

use crate::error::ConfigProblem;
use crate::error::PermissionsError;
use crate::error::Result;
use crate::error::toml_type;
use crate::overrides::apply_override;
use crate::overrides::parse_override;

/// Top-level keys Airlock knows (spec 10). Only some are interpreted by this crate.
const KNOWN_TOP_LEVEL_KEYS: [&str; 16] = [
    "approval_policy",
    "approvals_reviewer",
    "default_permissions",
    "permissions",
    "sandbox_mode",
    "sandbox_workspace_write",
    "hooks",
    "auto_review",
    "shell",
    "projects",
    "audit",
    "allowed_permission_profiles",
    "sandbox",
    "exec_policy",
    // Read by the sandbox crate's environment policy, not here.
    "shell_environment_policy",
    // Read by the core crate's remote environments (spec 09), not here.
    "environment",
];

/// Where config comes from: the Airlock home and the user's home (for `~`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEnv {
    /// `$AIRLOCK_HOME`, default `~/.airlock`.
    pub airlock_home: PathBuf,
    /// `$HOME`, used to expand `~` in paths.
    pub home: Option<PathBuf>,
}

impl ConfigEnv {
    /// Reads `AIRLOCK_HOME` and `HOME` from the process environment (empty values count as unset).
    /// Without either, the Airlock home is `.airlock` under the cwd-independent fallback `/`.
    #[must_use]
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME");
        let airlock_home = var("AIRLOCK_HOME").unwrap_or_else(|| {
            home.clone()
                .unwrap_or_else(|| PathBuf::from("/"))
                .join(".airlock")
        });
        Self { airlock_home, home }
    }

    /// The config file path, `$AIRLOCK_HOME/config.toml`.
    #[must_use]
    pub fn config_path(&self) -> PathBuf {
        self.airlock_home.join("config.toml")
    }
}

/// A loaded configuration: the TOML table after `-c` overrides, plus where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct AirlockConfig {
    /// The file named in errors (or `-c overrides` / `embedded defaults`).
    pub origin: String,
    /// Whether a config file was found; without one, the embedded default applies (spec 10).
    pub file_exists: bool,
    /// Directory that relative legacy `writable_roots` are resolved against (the config's).
    pub config_dir: PathBuf,
    /// `$HOME` for `~` expansion.
    pub home: Option<PathBuf>,
    /// The merged TOML.
    pub table: toml::Table,
    /// Warnings found while loading (unknown keys).
    pub warnings: Vec<String>,
}

impl AirlockConfig {
    /// No file, no overrides: the embedded default (`:workspace`, `on-request`).
    #[must_use]
    pub fn embedded_default(env: &ConfigEnv) -> Self {
        Self {
            origin: "embedded defaults".to_owned(),
            file_exists: false,
            config_dir: env.airlock_home.clone(),
            home: env.home.clone(),
            table: toml::Table::new(),
            warnings: Vec::new(),
        }
    }

    /// Parses config text; `origin` names it in errors.
    ///
    /// # Errors
    /// [`PermissionsError::InvalidToml`] with the parser's line and column.
    pub fn from_toml_str(text: &str, origin: &Path, env: &ConfigEnv) -> Result<Self> {
        let table = text
            .parse::<toml::Table>()
            .map_err(|error| PermissionsError::InvalidToml {
                file: origin.display().to_string(),
                message: error.to_string().trim_end().to_owned(),
            })?;
        let mut config = Self {
            origin: origin.display().to_string(),
            file_exists: true,
            config_dir: origin
                .parent()
                .map_or_else(|| env.airlock_home.clone(), Path::to_path_buf),
            home: env.home.clone(),
            table,
            warnings: Vec::new(),
        };
        config.check_top_level_keys();
        Ok(config)
    }

    /// Applies `-c key=value` overrides in order (later wins).
    ///
    /// # Errors
    /// [`PermissionsError::InvalidOverride`] for a malformed override.
    pub fn apply_overrides(&mut self, overrides: &[String]) -> Result<()> {
        if overrides.is_empty() {
            return Ok(());
        }
        for raw in overrides {
            let (segments, value) = parse_override(raw)?;
            apply_override(&mut self.table, &segments, value);
        }
        if !self.file_exists {
            self.origin = "-c overrides".to_owned();
        }
        self.warnings.clear();
        self.check_top_level_keys();
        Ok(())
    }

    /// Warns once about every top-level key Airlock does not know (so a Codex config loads),
    /// and about each unknown key inside the tables other layers read (`section_keys`).
    fn check_top_level_keys(&mut self) {
        let unknown: Vec<&str> = self
            .table
            .keys()
            .map(String::as_str)
            .filter(|key| !KNOWN_TOP_LEVEL_KEYS.contains(key))
            .collect();
        if !unknown.is_empty() {
            self.warnings.push(format!(
                "{}: ignoring keys Airlock does not use: {}",
                self.origin,
                unknown.join(", ")
            ));
        }
        self.warnings
            .extend(crate::section_keys::unknown_section_keys(
                &self.origin,
                &self.table,
            ));
    }

    /// A config error at `key`.
    pub(crate) fn error(&self, key: impl Into<String>, problem: ConfigProblem) -> PermissionsError {
        PermissionsError::Config {
            file: self.origin.clone(),
            key: key.into(),
            problem,
        }
    }

    /// The string at top-level `key`, if present.
    ///
    /// # Errors
    /// A wrong-type config error when the value is not a string.
    pub(crate) fn string(&self, key: &str) -> Result<Option<&str>> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.error(
                key,
                ConfigProblem::WrongType {
                    expected: "a string",
                    found: toml_type(other),
                },
            )),
        }
    }

    /// The `[permissions]` table, if present.
    ///
    /// # Errors
    /// A wrong-type config error when `permissions` is not a table.
    pub(crate) fn permissions_table(&self) -> Result<Option<&toml::Table>> {
        match self.table.get("permissions") {
            None => Ok(None),
            Some(toml::Value::Table(table)) => Ok(Some(table)),
            Some(other) => Err(self.error(
                "permissions",
                ConfigProblem::WrongType {
                    expected: "a table of profiles",
                    found: toml_type(other),
                },
            )),
        }
    }

    /// `approval_policy` (spec 10; default `on-request`).
    ///
    /// # Errors
    /// A config error naming the allowed values when the value is not an approval policy.
    pub fn approval_policy(&self) -> Result<AskForApproval> {
        let Some(value) = self.table.get("approval_policy") else {
            return Ok(AskForApproval::default());
        };
        if let Some(problems) = granular_problems(value) {
            return Err(self.error(
                "approval_policy",
                ConfigProblem::GranularFields { problems },
            ));
        }
        value.clone().try_into().map_err(|_| {
            self.error(
                "approval_policy",
                ConfigProblem::InvalidValue {
                    value: value.to_string(),
                    allowed: "\"untrusted\", \"on-request\", \"on-failure\", \"never\" or { granular = { ... } }",
                },
            )
        })
    }
}

/// What is wrong with a `{ granular = { ... } }` value: missing required fields, unknown
/// fields, non-boolean values (`None` when it is not a granular table or has no problem).
fn granular_problems(value: &toml::Value) -> Option<String> {
    const REQUIRED: [&str; 3] = ["sandbox_approval", "rules", "mcp_elicitations"];
    const OPTIONAL: [&str; 2] = ["skill_approval", "request_permissions"];
    let toml::Value::Table(fields) = value.as_table()?.get("granular")? else {
        return Some("`granular` must be a table of booleans".to_owned());
    };
    let mut problems = Vec::new();
    let missing: Vec<String> = REQUIRED
        .iter()
        .filter(|key| !fields.contains_key(**key))
        .map(|key| format!("`{key}`"))
        .collect();
    if !missing.is_empty() {
        problems.push(format!("missing {}", missing.join(", ")));
    }
    for (key, field) in fields {
        if !REQUIRED.contains(&key.as_str()) && !OPTIONAL.contains(&key.as_str()) {
            problems.push(format!("unknown field `{key}`"));
        } else if !field.is_bool() {
            problems.push(format!(
                "`{key}` must be true or false, not {}",
                field.type_str()
            ));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// Loads `$AIRLOCK_HOME/config.toml` (absent → embedded default) and applies `-c` overrides.
///
/// # Errors
/// [`PermissionsError::ReadConfig`] when the file exists but cannot be read,
/// [`PermissionsError::ConfigNotUtf8`],
/// [`PermissionsError::InvalidToml`], [`PermissionsError::InvalidOverride`].
pub fn load_config(env: &ConfigEnv, overrides: &[String]) -> Result<AirlockConfig> {
    let path = env.config_path();
    let mut config = match std::fs::read(&path) {
        Ok(bytes) => {
            let text =
                String::from_utf8(bytes).map_err(|error| PermissionsError::ConfigNotUtf8 {
                    path: path.clone(),
                    offset: error.utf8_error().valid_up_to(),
                })?;
            AirlockConfig::from_toml_str(&text, &path, env)?
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            AirlockConfig::embedded_default(env)
        }
        Err(source) => return Err(PermissionsError::ReadConfig { path, source }),
    };
    config.apply_overrides(overrides)?;
    Ok(config)
}
