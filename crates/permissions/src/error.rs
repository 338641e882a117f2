//! Typed errors of the permissions crate.
//!
//! Config errors carry the file, the key and a fix, around a [`ConfigProblem`] whose message is
//! Codex 0.169's wording where Codex has one (reference `permissions-config.md` §2–4), so that a
//! message seen in Codex is recognisable here.

use std::path::PathBuf;

/// Anything that stops a permission profile from being loaded, compiled or projected.
#[derive(Debug, thiserror::Error)]
pub enum PermissionsError {
    /// The config file exists but cannot be read.
    #[error("cannot read config file {}: {source}; check its permissions or set $AIRLOCK_HOME", path.display())]
    ReadConfig {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is not UTF-8 text (TOML must be).
    #[error(
        "config file {} is not valid UTF-8 (first invalid byte at offset {offset}); TOML files must be UTF-8 text: re-save it as UTF-8",
        path.display()
    )]
    ConfigNotUtf8 {
        /// The file.
        path: PathBuf,
        /// Bytes before the first invalid one.
        offset: usize,
    },
    /// The config file is not valid TOML.
    #[error("invalid TOML in {file}: {message}; fix the syntax at the position shown")]
    InvalidToml {
        /// The file (or `-c` override) that failed to parse.
        file: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A `-c key=value` override is malformed.
    #[error(
        "invalid -c override `{raw}`: {reason}; write it as `dotted.key=TOML value`, e.g. -c default_permissions='\":read-only\"'"
    )]
    InvalidOverride {
        /// The override as given.
        raw: String,
        /// What is wrong.
        reason: String,
    },
    /// A value in the config is wrong.
    #[error("{problem} (in {file}, key `{key}`); fix: {}", problem.fix())]
    Config {
        /// The config file (or `-c overrides`).
        file: String,
        /// The dotted key, e.g. `permissions.dev.filesystem."/tmp"`.
        key: String,
        /// What is wrong.
        problem: ConfigProblem,
    },
    /// A compiled profile cannot be expressed as the legacy `SandboxPolicy`.
    #[error("{0}")]
    Projection(ConfigProblem),
    /// A deny glob cannot be compiled (only from [`crate::ReadDenyMatcher::try_new`]).
    #[error("invalid deny glob `{pattern}`: {message}; fix the pattern or remove the entry")]
    InvalidGlob {
        /// The pattern.
        pattern: String,
        /// The glob compiler's message.
        message: String,
    },
}

/// What is wrong with a config value. The message is Codex's where one exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigProblem {
    /// `extends` chain loops (reference §2 step 1).
    #[error("permissions profile inheritance cycle detected: {chain}")]
    Cycle {
        /// `b -> c -> b`.
        chain: String,
    },
    /// The selected id is neither defined nor built in (reference §2 step 2).
    #[error("default_permissions refers to undefined profile `{id}`")]
    UndefinedProfile {
        /// The id.
        id: String,
    },
    /// The selected id starts with `:` but is not a built-in.
    #[error("default_permissions refers to unknown built-in profile `{id}`")]
    UnknownBuiltIn {
        /// The id.
        id: String,
    },
    /// A user profile is selected but there is no `[permissions]` table.
    #[error("default_permissions requires a `[permissions]` table")]
    MissingPermissionsTable {
        /// The id.
        id: String,
    },
    /// `extends` names `:danger-full-access` or an unknown `:` id.
    #[error("permissions profile `{child}` cannot extend unsupported built-in profile `{parent}`")]
    UnsupportedBuiltInParent {
        /// The extending profile.
        child: String,
        /// The parent id.
        parent: String,
    },
    /// `extends` names an undefined profile.
    #[error("permissions profile `{child}` extends undefined profile `{parent}`")]
    UndefinedParent {
        /// The extending profile.
        child: String,
        /// The parent id.
        parent: String,
    },
    /// Profiles exist but none is selected (reference §4, observed in 0.169).
    #[error("config defines `[permissions]` profiles but does not set `default_permissions`")]
    PermissionsWithoutDefault,
    /// A filesystem key is relative (reference §3).
    #[error("filesystem path `{path}` must be absolute, use `~/...`, or start with `:`")]
    PathNotAbsolute {
        /// The key as written.
        path: String,
    },
    /// A scoped subpath is empty, absolute or has `.`/`..` (reference §3).
    #[error(
        "filesystem subpath `{subpath}` must be a descendant path without `.` or `..` components"
    )]
    BadSubpath {
        /// The subpath as written.
        subpath: String,
    },
    /// A scoped table on a token that has no subpaths (reference §3).
    #[error("filesystem path `{path}` does not support nested entries")]
    NestedNotSupported {
        /// The key.
        path: String,
    },
    /// A glob with `read`/`write` that is not a trailing `/**` (reference §3).
    #[error(
        "filesystem glob path `{path}` only supports `deny` access; use an exact path or trailing `/**` for `read` subtree access"
    )]
    GlobNeedsDeny {
        /// The glob as written (joined with its base).
        path: String,
    },
    /// `glob_scan_max_depth` below 1 (reference §3).
    #[error("glob_scan_max_depth must be at least 1")]
    GlobDepthTooSmall {
        /// The value given.
        value: i64,
    },
    /// Projection of writes outside the workspace to the legacy policy (reference §4).
    #[error(
        "permissions profile requests filesystem writes outside the workspace root, which is not supported until the runtime enforces FileSystemSandboxPolicy directly"
    )]
    WritesOutsideWorkspace,
    /// An access value other than read/write/deny/none.
    #[error("invalid filesystem access `{value}`")]
    InvalidAccess {
        /// The value.
        value: String,
    },
    /// A value of the wrong TOML type.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the key takes.
        expected: &'static str,
        /// The TOML type found.
        found: &'static str,
    },
    /// A string outside the allowed set.
    #[error("invalid value `{value}`")]
    InvalidValue {
        /// The value.
        value: String,
        /// The allowed values, for the fix.
        allowed: &'static str,
    },
    /// `approval_policy = { granular = {...} }` with missing, unknown or non-boolean fields.
    #[error("invalid granular approval policy: {problems}")]
    GranularFields {
        /// What is wrong, e.g. "missing `rules`, `mcp_elicitations`".
        problems: String,
    },
    /// `~` used while `HOME` is unknown.
    #[error("cannot expand `~` in `{path}` because HOME is not set")]
    HomeUnset {
        /// The path.
        path: String,
    },
    /// A user profile id with a leading colon.
    #[error("permissions profile `{id}` uses a name reserved for built-in profiles")]
    ReservedId {
        /// The id.
        id: String,
    },
    /// The selected id is not allowed by `allowed_permission_profiles`.
    #[error("permission profile `{id}` is not allowed by allowed_permission_profiles")]
    NotAllowed {
        /// The id.
        id: String,
        /// The allowed ids, comma separated.
        allowed: String,
    },
    /// `allowed_permission_profiles` names an unknown profile.
    #[error("allowed_permission_profiles names unknown profile `{id}`")]
    AllowedUnknown {
        /// The id.
        id: String,
    },
    /// A narrowed allowlist without a usable default.
    #[error("allowed_permission_profiles requires default_permissions to name an allowed profile")]
    AllowedNeedsDefault,
    /// Filesystem entries in a profile that extends `:external-sandbox`.
    #[error(
        "permissions profile `{id}` extends `:external-sandbox` but defines filesystem entries, which an external sandbox cannot enforce"
    )]
    ExternalWithFilesystem {
        /// The id.
        id: String,
    },
    /// A workspace root or writable root that is not absolute.
    #[error("root `{path}` must be absolute or use `~/...`")]
    RootNotAbsolute {
        /// The path as written.
        path: String,
    },
    /// A `network.domains` key that is no valid host pattern (spec 12 §Host patterns).
    #[error("invalid host pattern `{pattern}`: {reason}")]
    InvalidHostPattern {
        /// The pattern, escaped for display.
        pattern: String,
        /// What is wrong.
        reason: String,
    },
    /// A `unix_sockets` key that is not an absolute path.
    #[error("unix socket path `{path}` must be absolute")]
    UnixSocketNotAbsolute {
        /// The path as written.
        path: String,
    },
}

impl ConfigProblem {
    /// How to fix it, for the error message.
    #[must_use]
    pub fn fix(&self) -> String {
        match self {
            Self::Cycle { .. } => "remove one `extends` so the chain ends at a built-in or a profile without `extends`".to_owned(),
            Self::UndefinedProfile { id } => format!("define [permissions.\"{id}\"] or select an existing profile"),
            Self::UnknownBuiltIn { .. } => "use `:read-only`, `:workspace`, `:danger-full-access` or `:external-sandbox`".to_owned(),
            Self::MissingPermissionsTable { id } => format!("add a [permissions.\"{id}\"] table or select a built-in profile such as `:workspace`"),
            Self::UnsupportedBuiltInParent { .. } => "extend `:read-only`, `:workspace` or `:external-sandbox`, or select `:danger-full-access` directly".to_owned(),
            Self::UndefinedParent { parent, .. } => format!("define [permissions.\"{parent}\"] or change `extends`"),
            Self::PermissionsWithoutDefault => "set default_permissions = \"<id>\" at the top level, or pass -P <id>".to_owned(),
            Self::PathNotAbsolute { .. } => "write an absolute path, `~/...`, or a token such as `:workspace_roots` (scope relative paths under it)".to_owned(),
            Self::BadSubpath { .. } => "use a relative path below the key, such as `docs` or `**/*.env`; use `.` for the key itself".to_owned(),
            Self::NestedNotSupported { .. } => "give this key a plain access value (\"read\", \"write\" or \"deny\")".to_owned(),
            Self::GlobNeedsDeny { .. } => "use \"deny\", or a path ending in `/**` for a subtree".to_owned(),
            Self::GlobDepthTooSmall { .. } => "set glob_scan_max_depth to 1 or more, or remove it".to_owned(),
            Self::WritesOutsideWorkspace => "make the workspace root writable or drop the other write entries".to_owned(),
            Self::InvalidAccess { .. } => "use \"read\", \"write\" or \"deny\" (\"none\" is an old spelling of \"deny\")".to_owned(),
            Self::WrongType { expected, .. } => format!("give {expected}"),
            Self::InvalidValue { allowed, .. } => format!("use one of {allowed}"),
            Self::GranularFields { .. } => "write approval_policy = { granular = { sandbox_approval = true, rules = true, mcp_elicitations = false } } (each true or false; skill_approval and request_permissions are optional)".to_owned(),
            Self::HomeUnset { .. } => "set HOME or write the path out in full".to_owned(),
            Self::ReservedId { id } => format!("rename the profile to `{}`", id.trim_start_matches(':')),
            Self::NotAllowed { allowed, .. } => format!("select one of: {allowed}"),
            Self::AllowedUnknown { .. } => "name only built-in or defined profiles".to_owned(),
            Self::AllowedNeedsDefault => "set default_permissions to one of the allowed profiles".to_owned(),
            Self::ExternalWithFilesystem { .. } => "remove the filesystem table or extend `:workspace` instead".to_owned(),
            Self::RootNotAbsolute { .. } => "write an absolute path or `~/...`".to_owned(),
            Self::InvalidHostPattern { .. } => "write a host (`example.com`), `*.example.com`, `**.example.com`, an IP literal, optionally with `:port` (1-65535), e.g. \"github.com:443\" = \"allow\"".to_owned(),
            Self::UnixSocketNotAbsolute { .. } => "write the socket's absolute path, e.g. \"/run/user/1000/ssh-agent.sock\" = \"allow\"".to_owned(),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = PermissionsError> = std::result::Result<T, E>;

/// The TOML type name of a value, for [`ConfigProblem::WrongType`].
pub(crate) const fn toml_type(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a datetime",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}
