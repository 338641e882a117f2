//! What the requirement computation found, for `airlock explain` and the audit log.

use airlock_execpolicy::{Decision, RuleMatch};
use airlock_protocol::ExecApprovalRequirement;
use airlock_shell::ParsedCommand;
use serde::Serialize;

use super::rejection::PromptSource;

/// A dangerous command the deny view found (spec 03 edge case 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DangerSummary {
    /// The pattern's stable id (`rm-recursive-force`, ...).
    pub pattern: &'static str,
    /// What the pattern flags.
    pub description: &'static str,
    /// The command it matched.
    pub command: Vec<String>,
}

/// How one segment was decided (spec 03 "Policy evaluation over segments" item 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentVerdict {
    /// The segment.
    pub command: Vec<String>,
    /// Its rule matches, or the single heuristics match when no rule applied.
    pub matches: Vec<RuleMatch>,
    /// Whether the known-safe list vouches for it (always false when not plain).
    pub known_safe: bool,
    /// Whether its deny view holds a dangerous command (spec 03 edge case 7).
    pub dangerous: bool,
    /// The strictest decision over `matches`.
    pub decision: Decision,
    /// Whether an explicit allow rule matched it and no rule asked for more, so it may
    /// count toward a sandbox bypass (spec README invariant 3; edge case 18 and the
    /// writable-root rule of [`super::create_exec_approval_requirement_for_command`]).
    pub bypass_eligible: bool,
}

/// A `forbidden` or `prompt` rule matched by a deny-view command (spec 03 edge case 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InnerRuleMatch {
    /// The deny-view command.
    pub command: Vec<String>,
    /// The rule match (against the literal program or its basename).
    pub rule: RuleMatch,
}

/// What made a command need approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptKind {
    /// An exec-policy `prompt` rule matched a segment or a deny-view command.
    Rule,
    /// The fallback of an unmatched segment said `prompt` (spec 03 "Fallback decision").
    Fallback,
    /// The exec policy could not be loaded (fail closed).
    PolicyUnavailable,
    /// The script could not be inspected completely (depth limit, unparsed script).
    Incomplete,
    /// A code-loading environment assignment (spec 03 item 4, edge case 14).
    CodeLoading,
    /// A dangerous command not explicitly allowed (spec 03 edge cases 7, 19).
    Dangerous,
    /// An escalation request not covered by explicit allow rules (spec 03 edge case 19).
    Escalation,
}

impl PromptKind {
    /// The granular category (spec 03 edge case 13): rule prompts → `rules`, everything
    /// else → `sandbox_approval`.
    #[must_use]
    pub const fn source(self) -> PromptSource {
        match self {
            Self::Rule => PromptSource::Rule,
            _ => PromptSource::Heuristic,
        }
    }
}

/// One reason the decision is at least `prompt`, with its granular category. The list in
/// [`RequirementOutcome::prompt_causes`] is complete: every rule prompt, every fallback
/// prompt and every heuristic cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptCause {
    /// What caused it.
    pub kind: PromptKind,
    /// Which granular switch governs it (spec 03 edge case 13); `kind.source()`.
    pub source: PromptSource,
    /// What caused it, for people (the requirement's reason when it is the first cause
    /// that is not a plain fallback).
    pub detail: String,
}

/// The requirement of one command with everything that led to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequirementOutcome {
    /// Segments, plainness, deny view, assignments and notes (spec 03).
    pub parsed: ParsedCommand,
    /// Per segment: rule matches or the heuristic verdict.
    pub segments: Vec<SegmentVerdict>,
    /// `forbidden`/`prompt` rules matched through the deny view.
    pub deny_view_matches: Vec<InnerRuleMatch>,
    /// The first dangerous command of the deny view, if any.
    pub dangerous: Option<DangerSummary>,
    /// Names (never values) of code-loading variables assigned anywhere (spec 03 item 4).
    pub code_loading_variables: Vec<String>,
    /// Why the decision is at least `prompt`, in the order found.
    pub prompt_causes: Vec<PromptCause>,
    /// The strictest decision over everything above.
    pub decision: Decision,
    /// Set when the exec policy could not be loaded: every command needs approval.
    pub policy_unavailable: Option<String>,
    /// The result.
    pub requirement: ExecApprovalRequirement,
    /// What running it outside the sandbox would run (issue 11); filled in by
    /// [`crate::unsandboxed::apply_review`], empty from the pure computation.
    pub unsandboxed: crate::unsandboxed::UnsandboxedReview,
}

impl RequirementOutcome {
    /// Every rule match of the segments, in order (the `matched_rules` of `explain`).
    pub fn matched_rules(&self) -> impl Iterator<Item = &RuleMatch> {
        self.segments
            .iter()
            .flat_map(|segment| segment.matches.iter())
    }
}
