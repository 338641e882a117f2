//! The session-level keys of `config.toml` that neither the permissions crate, the approval
//! crate nor the requirement settings read: `approval_policy`, `approvals_reviewer` and
//! `[audit] enabled` (spec 10 §Configuration). `[shell] extra_safe_commands` and trusted
//! projects are read by [`crate::requirement`].

use airlock_permissions::AirlockConfig;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;

/// An invalid session-level key (spec 10: "Invalid values fail with file, key, and the
/// allowed values").
#[derive(Debug, thiserror::Error)]
#[error("{origin}: invalid `{key}`: {message}")]
pub struct SessionConfigError {
    /// The config file (or `-c overrides`).
    pub origin: String,
    /// The dotted key.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// The session-level settings read from a loaded config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionConfig {
    /// `approval_policy` (default `on-request`).
    pub approval_policy: AskForApproval,
    /// `approvals_reviewer` (default `user`).
    pub approvals_reviewer: ApprovalsReviewer,
    /// `[audit] enabled` (default `true`).
    pub audit_enabled: bool,
}

impl SessionConfig {
    /// Reads the keys.
    ///
    /// # Errors
    /// [`SessionConfigError`] naming the file, the key and the allowed values.
    pub fn from_config(config: &AirlockConfig) -> Result<Self, SessionConfigError> {
        let invalid = |key: &str, message: String| SessionConfigError {
            origin: config.origin.clone(),
            key: key.to_owned(),
            message,
        };
        let approval_policy = config
            .approval_policy()
            .map_err(|error| invalid("approval_policy", error.to_string()))?;
        let approvals_reviewer = match config.table.get("approvals_reviewer") {
            None => ApprovalsReviewer::default(),
            Some(value) => value.clone().try_into().map_err(|_| {
                invalid(
                    "approvals_reviewer",
                    format!("{value} is not valid; use \"user\" or \"auto_review\""),
                )
            })?,
        };
        let audit_enabled = match config.table.get("audit").and_then(|a| a.get("enabled")) {
            None => true,
            Some(value) => value
                .as_bool()
                .ok_or_else(|| invalid("audit.enabled", format!("{value} is not true or false")))?,
        };
        Ok(Self {
            approval_policy,
            approvals_reviewer,
            audit_enabled,
        })
    }
}
