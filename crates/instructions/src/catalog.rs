//! Model-catalog overrides of the built-in texts (spec 08 §Sections: "Catalog overrides (per sandbox
//! mode, per approval policy) fall back to built-in templates when absent").
//!
//! `None` means "use the built-in text"; `Some("")` is a deliberate empty message. For the sandbox
//! section an empty message omits that section only; for an approval policy it omits the policy's
//! own paragraph while the feature notes and the approved-prefix list stay (they describe facts the
//! catalog cannot know about).

use airlock_protocol::SandboxMode;
use serde::Deserialize;
use serde::Serialize;

/// Placeholder in a sandbox override replaced by `restricted` or `enabled`.
pub const NETWORK_ACCESS_PLACEHOLDER: &str = "{{network_access}}";

/// Per-model replacements for the built-in texts.
///
/// JSON: `{"sandbox": {...}, "approvals": {...}}`, both optional; unknown fields are rejected so a
/// misspelt key is noticed instead of silently falling back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionsCatalog {
    /// Sandbox-section texts per `sandbox_mode`.
    #[serde(default)]
    pub sandbox: SandboxMessages,
    /// Approval-section texts per approval policy.
    #[serde(default)]
    pub approvals: ApprovalMessages,
}

/// Sandbox-section overrides. Each may contain [`NETWORK_ACCESS_PLACEHOLDER`].
///
/// JSON keys: `read_only`, `workspace_write`, `danger_full_access`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxMessages {
    /// For `read-only`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<String>,
    /// For `workspace-write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_write: Option<String>,
    /// For `danger-full-access`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub danger_full_access: Option<String>,
}

impl SandboxMessages {
    /// The override for `mode`, if the catalog has one.
    #[must_use]
    pub fn for_mode(&self, mode: SandboxMode) -> Option<&str> {
        match mode {
            SandboxMode::ReadOnly => self.read_only.as_deref(),
            SandboxMode::WorkspaceWrite => self.workspace_write.as_deref(),
            SandboxMode::DangerFullAccess => self.danger_full_access.as_deref(),
        }
    }
}

/// Approval-paragraph overrides. Each replaces only the policy paragraph (see the module docs).
///
/// JSON keys: `untrusted`, `on_request`, `on_request_auto_review`, `granular`, `never`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalMessages {
    /// For `untrusted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<String>,
    /// For `on-request` with the user as reviewer (and with the automatic reviewer when
    /// `on_request_auto_review` is absent; the built-in auto-review note is then appended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_request: Option<String>,
    /// For `on-request` with the automatic reviewer; replaces the built-in auto-review note too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_request_auto_review: Option<String>,
    /// For `granular` (replaces the intro; the per-category lists stay, as they are facts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granular: Option<String>,
    /// For `never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never: Option<String>,
}
