//! `approval_policy`: when a person (or the automatic reviewer) may be asked.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// The approval policy (`approval_policy` in config, `-a/--ask-for-approval` on the CLI).
///
/// JSON / TOML forms (reference `protocol.md` §1, spec 01):
/// - `"untrusted"` → [`AskForApproval::UnlessTrusted`];
/// - `"on-request"` → [`AskForApproval::OnRequest`] (the default); the legacy spelling
///   `"on-failure"` is accepted as an input alias and is never written (spec 01);
/// - `{"granular": {...}}` → [`AskForApproval::Granular`];
/// - `"never"` → [`AskForApproval::Never`].
///
/// Any other string, or an object with another key, fails to deserialise with serde's
/// "unknown variant" error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    /// Ask for everything that exec policy does not explicitly allow and that is not a known-safe
    /// read-only command. Codex 0.169 rejects this value; Airlock keeps it on purpose (spec 01).
    #[serde(rename = "untrusted")]
    UnlessTrusted,

    /// Ask when policy or the sandbox state calls for it; the model may request escalation
    /// through `sandbox_permissions` (spec 06). Reads `"on-failure"` too (spec 01).
    #[default]
    #[serde(alias = "on-failure")]
    OnRequest,

    /// Per-category switches: `true` = that category may prompt, `false` = it is auto-rejected
    /// (spec README invariant 5).
    Granular(GranularApprovalConfig),

    /// Never ask: whatever would need approval becomes `Forbidden` (spec README invariant 4).
    Never,
}

/// The per-category switches of `{"granular": {...}}` (reference `protocol.md` §1).
///
/// Field names are snake_case everywhere, even inside camelCase APIs. `sandbox_approval`, `rules`
/// and `mcp_elicitations` are required (missing → deserialisation error); `skill_approval` and
/// `request_permissions` default to `false`. All five are always written. Unknown fields are
/// ignored, as in Codex, so that configs written for newer Codex versions still load.
///
/// Example: `{"sandbox_approval":true,"rules":false,"skill_approval":false,
/// "request_permissions":false,"mcp_elicitations":true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
pub struct GranularApprovalConfig {
    /// Shell sandbox-escape prompts (`require_escalated`, `with_additional_permissions`, retry
    /// without sandbox).
    pub sandbox_approval: bool,
    /// Prompts caused by exec-policy `prompt` rules.
    pub rules: bool,
    /// Skill-script execution prompts.
    #[serde(default)]
    pub skill_approval: bool,
    /// Prompts from the `request_permissions` tool.
    #[serde(default)]
    pub request_permissions: bool,
    /// MCP elicitation prompts.
    pub mcp_elicitations: bool,
}

impl GranularApprovalConfig {
    /// Whether sandbox-escape prompts may be shown (field `sandbox_approval`).
    #[must_use]
    pub const fn allows_sandbox_approval(&self) -> bool {
        self.sandbox_approval
    }

    /// Whether exec-policy `prompt` rules may prompt (field `rules`).
    #[must_use]
    pub const fn allows_rules_approval(&self) -> bool {
        self.rules
    }

    /// Whether skill-script prompts may be shown (field `skill_approval`).
    #[must_use]
    pub const fn allows_skill_approval(&self) -> bool {
        self.skill_approval
    }

    /// Whether `request_permissions` prompts may be shown (field `request_permissions`).
    #[must_use]
    pub const fn allows_request_permissions(&self) -> bool {
        self.request_permissions
    }

    /// Whether MCP elicitations may prompt (field `mcp_elicitations`).
    #[must_use]
    pub const fn allows_mcp_elicitations(&self) -> bool {
        self.mcp_elicitations
    }
}
