//! The approval layer's configuration: `[hooks]`, `[auto_review]` and `hooks.json` (spec 10
//! §Configuration).

use std::path::Path;

use crate::auto_review::AutoReviewConfig;
use crate::auto_review::auto_review_from_toml;
use crate::error::ConfigError;
use crate::hooks::PermissionRequestHook;
use crate::hooks::hooks_from_json_file;
use crate::hooks::hooks_from_toml;

/// The name of Codex's hook file, read from `$AIRLOCK_HOME` (reference
/// `orchestrator-and-approvals.md` §8).
pub const HOOKS_JSON_FILE: &str = "hooks.json";

/// Hooks and the automatic reviewer, as configured.
#[derive(Debug, Clone, Default)]
pub struct ApprovalConfig {
    /// Permission-request hooks in order: `config.toml` `[hooks]` first, then `hooks.json`.
    pub hooks: Vec<PermissionRequestHook>,
    /// `PreToolUse` hooks in the same order (issue 18 item 7): run before every call,
    /// whatever its requirement; they can only block.
    pub pre_tool_use_hooks: Vec<PermissionRequestHook>,
    /// The automatic reviewer; `None` when `[auto_review]` names neither `command` nor
    /// `endpoint` (then a request routed to it is denied, fail closed).
    pub auto_review: Option<AutoReviewConfig>,
    /// Non-fatal problems: unknown keys, skipped hooks (invalid matcher, unsupported type).
    pub warnings: Vec<String>,
}

impl ApprovalConfig {
    /// Reads `[hooks]` and `[auto_review]` from the merged config table (`AirlockConfig.table`
    /// of crate `permissions`; `origin` names it in errors), then `hooks_json` when given and
    /// present.
    ///
    /// # Errors
    /// [`ConfigError`] naming the file and key of an invalid value, or an unreadable / invalid
    /// `hooks.json`.
    pub fn from_config_table(
        table: &toml::Table,
        origin: &str,
        hooks_json: Option<&Path>,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        if let Some(hooks) = table.get("hooks") {
            let parsed = hooks_from_toml(hooks, origin)?;
            config.hooks.extend(parsed.hooks);
            config.pre_tool_use_hooks.extend(parsed.pre_tool_use);
            config.warnings.extend(parsed.warnings);
        }
        if let Some(auto_review) = table.get("auto_review") {
            config.auto_review = auto_review_from_toml(auto_review, origin, &mut config.warnings)?;
        }
        if let Some(path) = hooks_json {
            let parsed = hooks_from_json_file(path)?;
            config.hooks.extend(parsed.hooks);
            config.pre_tool_use_hooks.extend(parsed.pre_tool_use);
            config.warnings.extend(parsed.warnings);
        }
        Ok(config)
    }

    /// [`Self::from_config_table`] with `hooks.json` read from `airlock_home`.
    ///
    /// # Errors
    /// As [`Self::from_config_table`].
    pub fn load(
        table: &toml::Table,
        origin: &str,
        airlock_home: &Path,
    ) -> Result<Self, ConfigError> {
        Self::from_config_table(table, origin, Some(&airlock_home.join(HOOKS_JSON_FILE)))
    }
}
