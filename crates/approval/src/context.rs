//! The per-request inputs of `request_approval` besides the action (spec 07 step 3,
//! `ApprovalContext`).

use std::path::PathBuf;

use airlock_protocol::AskForApproval;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::PermissionProfile;

/// Which approval category a request belongs to, for `granular` policies (spec README invariant
/// 5; reference `protocol.md` §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ApprovalCategory {
    /// Sandbox escapes: `require_escalated`, `with_additional_permissions`, a retry without the
    /// sandbox, and requirements computed from the sandbox state (field `sandbox_approval`).
    #[default]
    SandboxApproval,
    /// A prompt caused by an exec-policy `prompt` rule (field `rules`).
    Rules,
    /// A skill-script prompt (field `skill_approval`).
    SkillApproval,
    /// A `request_permissions` prompt (field `request_permissions`).
    RequestPermissions,
    /// An MCP elicitation (field `mcp_elicitations`).
    McpElicitations,
}

impl ApprovalCategory {
    /// The granular field name (`sandbox_approval`, `rules`, ...).
    #[must_use]
    pub const fn field_name(self) -> &'static str {
        match self {
            Self::SandboxApproval => "sandbox_approval",
            Self::Rules => "rules",
            Self::SkillApproval => "skill_approval",
            Self::RequestPermissions => "request_permissions",
            Self::McpElicitations => "mcp_elicitations",
        }
    }

    /// Why `policy` forbids asking about this category, or `None` when asking is allowed.
    ///
    /// - `never` → "approval policy is never; approval cannot be requested" (invariant 4);
    /// - `granular` with this category `false` → "approval policy disallowed `<field>` approval
    ///   prompt" (invariant 5; Codex's text for `sandbox_approval`);
    /// - `untrusted`, `on-request`, and `granular` with the category `true` → `None`.
    #[must_use]
    pub fn refusal(self, policy: AskForApproval) -> Option<String> {
        match policy {
            AskForApproval::Never => {
                Some("approval policy is never; approval cannot be requested".to_owned())
            }
            AskForApproval::Granular(granular) => {
                let allowed = match self {
                    Self::SandboxApproval => granular.allows_sandbox_approval(),
                    Self::Rules => granular.allows_rules_approval(),
                    Self::SkillApproval => granular.allows_skill_approval(),
                    Self::RequestPermissions => granular.allows_request_permissions(),
                    Self::McpElicitations => granular.allows_mcp_elicitations(),
                };
                (!allowed).then(|| {
                    let field = match self {
                        Self::SandboxApproval => "sandbox",
                        other => other.field_name(),
                    };
                    format!("approval policy disallowed {field} approval prompt")
                })
            }
            AskForApproval::UnlessTrusted | AskForApproval::OnRequest => None,
        }
    }
}

/// What the orchestrator knows about one request besides the action itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApprovalContext {
    /// The tool call id.
    pub call_id: String,
    /// A distinct approval id when one call asks more than once; the pending key is
    /// `approval_id.unwrap_or(call_id)`.
    pub approval_id: Option<String>,
    /// The granular category of the prompt (default `sandbox_approval`).
    pub category: ApprovalCategory,
    /// Send the action to the automatic reviewer whatever the turn's reviewer (spec 06 step 2;
    /// the orchestrator sets it for strict auto review, also on `Skip`).
    pub strict_auto_review: bool,
    /// The requirement's reason (`NeedsApproval { reason }`).
    pub approval_reason: Option<String>,
    /// Set when asking to run again after a sandbox denial (spec 07 step 6).
    pub retry_reason: Option<String>,
    /// The blocked host of a network retry; such prompts are never cached.
    pub network_approval_context: Option<NetworkApprovalContext>,
    /// The permission profile the action would run under: given to the automatic reviewer, and
    /// part of the session-cache scope (an approval under one profile does not carry over).
    pub permission_profile: Option<PermissionProfile>,
    /// For patches: a root the call asks to write under (shown to the user only).
    pub grant_root: Option<PathBuf>,
}

impl ApprovalContext {
    /// A context for `call_id` with everything else at its default.
    #[must_use]
    pub fn new(call_id: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            ..Self::default()
        }
    }

    /// `approval_id` if set, else `call_id`.
    #[must_use]
    pub fn effective_approval_id(&self) -> &str {
        self.approval_id.as_deref().unwrap_or(&self.call_id)
    }
}
