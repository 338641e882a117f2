//! Whether the approval policy forbids asking (spec README invariants 4 and 5, spec 03
//! edge case 13, reference §7).

use airlock_protocol::AskForApproval;
use serde::Serialize;

use super::default::SANDBOX_APPROVAL_DISALLOWED;

/// Reason when a prompt is needed under `never` (reference §7).
pub const NEVER_REJECTS_PROMPT: &str =
    "approval required by policy, but AskForApproval is set to Never";

/// Reason when a rule prompt is needed under granular with `rules = false`.
pub const RULES_APPROVAL_DISALLOWED: &str =
    "approval required by policy rule, but AskForApproval::Granular.rules is false";

/// Which granular category a prompt belongs to (spec 03 edge case 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptSource {
    /// An exec-policy `prompt` rule (plain view or deny view): category `rules`.
    Rule,
    /// Heuristics: dangerous command, escalation request, code-loading assignment, a
    /// fallback `prompt`, an incompletely inspected script or an unavailable policy:
    /// category `sandbox_approval`.
    Heuristic,
}

/// `Some(reason)` when `policy` forbids a prompt of `source`: `never` always; granular when
/// the category's switch is `false`. `None` when the prompt may be shown.
/// Source: reference §7 `prompt_is_rejected_by_policy`, spec 03 edge case 13.
#[must_use]
pub fn prompt_is_rejected_by_policy(
    policy: AskForApproval,
    source: PromptSource,
) -> Option<&'static str> {
    match (policy, source) {
        (AskForApproval::Never, _) => Some(NEVER_REJECTS_PROMPT),
        (AskForApproval::Granular(config), PromptSource::Rule)
            if !config.allows_rules_approval() =>
        {
            Some(RULES_APPROVAL_DISALLOWED)
        }
        (AskForApproval::Granular(config), PromptSource::Heuristic)
            if !config.allows_sandbox_approval() =>
        {
            Some(SANDBOX_APPROVAL_DISALLOWED)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_protocol::GranularApprovalConfig;

    fn granular(sandbox_approval: bool, rules: bool) -> AskForApproval {
        AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval,
            rules,
            skill_approval: false,
            request_permissions: false,
            mcp_elicitations: false,
        })
    }

    #[test]
    fn never_rejects_every_prompt() {
        for source in [PromptSource::Rule, PromptSource::Heuristic] {
            assert_eq!(
                prompt_is_rejected_by_policy(AskForApproval::Never, source),
                Some(NEVER_REJECTS_PROMPT)
            );
        }
    }

    #[test]
    fn granular_checks_each_category() {
        use PromptSource::{Heuristic, Rule};
        assert_eq!(
            prompt_is_rejected_by_policy(granular(true, true), Rule),
            None
        );
        assert_eq!(
            prompt_is_rejected_by_policy(granular(true, true), Heuristic),
            None
        );
        assert_eq!(
            prompt_is_rejected_by_policy(granular(true, false), Rule),
            Some(RULES_APPROVAL_DISALLOWED)
        );
        assert_eq!(
            prompt_is_rejected_by_policy(granular(true, false), Heuristic),
            None
        );
        assert_eq!(
            prompt_is_rejected_by_policy(granular(false, true), Rule),
            None
        );
        assert_eq!(
            prompt_is_rejected_by_policy(granular(false, true), Heuristic),
            Some(SANDBOX_APPROVAL_DISALLOWED)
        );
    }

    #[test]
    fn other_policies_allow_prompts() {
        for policy in [AskForApproval::UnlessTrusted, AskForApproval::OnRequest] {
            for source in [PromptSource::Rule, PromptSource::Heuristic] {
                assert_eq!(prompt_is_rejected_by_policy(policy, source), None);
            }
        }
    }
}
