//! Reason texts of requirements (reference §7; Airlock adds reasons for its own
//! heuristics so that reviewers see why they are asked).

use airlock_execpolicy::{Decision, RuleMatch};

/// Spec 03 edge case 12: an escalation request under `never`.
pub const NEVER_ESCALATION: &str =
    "approval policy is never; escalated permissions cannot be requested";

/// The command as one shell-quoted line.
pub(super) fn render(command: &[String]) -> String {
    shlex::try_join(command.iter().map(String::as_str)).unwrap_or_else(|_| command.join(" "))
}

/// The most specific (longest prefix) rule match with `decision` among `matches`.
pub(super) fn most_specific<'a>(
    matches: impl Iterator<Item = &'a RuleMatch>,
    decision: Decision,
) -> Option<&'a RuleMatch> {
    matches
        .filter(|found| found.is_policy_match() && found.decision() == decision)
        .max_by_key(|found| match found {
            RuleMatch::PrefixRuleMatch { matched_prefix, .. } => matched_prefix.len(),
            RuleMatch::HeuristicsRuleMatch { .. } => 0,
        })
}

/// Reference §7: "`<cmd>` rejected: <justification>" or "`<cmd>` rejected: policy forbids
/// commands starting with `<prefix>`".
pub(super) fn forbidden_by_rule(command: &[String], rule: &RuleMatch) -> String {
    let command = render(command);
    match rule {
        RuleMatch::PrefixRuleMatch {
            justification: Some(justification),
            ..
        } => format!("`{command}` rejected: {justification}"),
        RuleMatch::PrefixRuleMatch { matched_prefix, .. } => format!(
            "`{command}` rejected: policy forbids commands starting with `{}`",
            render(matched_prefix)
        ),
        RuleMatch::HeuristicsRuleMatch { .. } => blocked(&command),
    }
}

/// Reference §7: "`<cmd>` requires approval: <justification>" or "`<cmd>` requires
/// approval by policy".
pub(super) fn prompt_by_rule(command: &[String], rule: &RuleMatch) -> String {
    let command = render(command);
    match rule {
        RuleMatch::PrefixRuleMatch {
            justification: Some(justification),
            ..
        } => format!("`{command}` requires approval: {justification}"),
        _ => format!("`{command}` requires approval by policy"),
    }
}

/// Reference §7's text for a heuristic `forbidden`.
pub(super) fn blocked(rendered_command: &str) -> String {
    format!("`{rendered_command}` rejected: blocked by policy")
}
