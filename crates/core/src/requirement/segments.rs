//! Per-segment evaluation: rule matches (exact, then host-executable basename with the
//! allow restriction of spec 03 edge case 18), else the heuristics fallback (spec 03
//! "Policy evaluation over segments" item 1, reference §7).

use std::collections::BTreeSet;

use airlock_execpolicy::{Decision, MatchOptions, Policy, ResolutionContext, RuleMatch};
use airlock_shell::{SafeCommandOptions, basename, is_known_safe_command};

use super::fallback::render_decision_for_unmatched_command;
use super::outcome::SegmentVerdict;
use super::program::{allow_applies_to_resolved, program_may_bypass};
use super::request::ExecApprovalRequest;

/// Evaluates segments of one command against a policy.
pub(super) struct SegmentEvaluator<'r> {
    request: &'r ExecApprovalRequest<'r>,
    plain: bool,
    options: MatchOptions,
}

impl<'r> SegmentEvaluator<'r> {
    /// `plain` is the command's plainness: a non-plain command is never known-safe and
    /// never bypasses (spec 03 edge case 5).
    pub(super) fn new(request: &'r ExecApprovalRequest<'r>, plain: bool) -> Self {
        let mut resolution = ResolutionContext::from_process();
        resolution.cwd = Some(request.cwd.to_path_buf());
        Self {
            request,
            plain,
            options: MatchOptions {
                resolve_host_executables: true,
                resolution: Some(resolution),
            },
        }
    }

    /// The verdict of one segment; `dangerous` is whether the segment's own deny view
    /// contains a dangerous command (spec 03 edge case 7).
    pub(super) fn evaluate(
        &self,
        policy: &Policy,
        segment: &[String],
        dangerous: bool,
    ) -> SegmentVerdict {
        let matches: Vec<RuleMatch> = policy
            .matches_for_command_with_options(segment, &self.options)
            .into_iter()
            .filter(|found| allow_may_apply(policy, found))
            .collect();
        if matches.is_empty() {
            return self.heuristic(policy, segment, dangerous);
        }
        let decision = strictest(&matches);
        let bypass_eligible = self.plain
            && decision == Decision::Allow
            && segment.first().is_some_and(|program| {
                program_may_bypass(
                    program,
                    self.request.cwd,
                    self.request.file_system_sandbox_policy,
                )
            });
        SegmentVerdict {
            command: segment.to_vec(),
            matches,
            known_safe: false,
            dangerous,
            decision,
            bypass_eligible,
        }
    }

    fn heuristic(&self, policy: &Policy, segment: &[String], dangerous: bool) -> SegmentVerdict {
        let known_safe =
            self.plain && is_known_safe_command(segment, &self.safe_options(policy, segment));
        let decision = render_decision_for_unmatched_command(
            self.request.approval_policy,
            self.request.file_system_sandbox_policy,
            self.request.sandbox_permissions,
            known_safe,
            dangerous,
        );
        SegmentVerdict {
            command: segment.to_vec(),
            matches: vec![RuleMatch::HeuristicsRuleMatch {
                command: segment.to_vec(),
                decision,
            }],
            known_safe,
            dangerous,
            decision,
            bypass_eligible: false,
        }
    }

    /// Known-safe options: the configured extras, and the `host_executable` paths of the
    /// segment's program (spec 03 edge case 10).
    fn safe_options(&self, policy: &Policy, segment: &[String]) -> SafeCommandOptions {
        let host_executables: BTreeSet<String> = segment
            .first()
            .and_then(|program| policy.host_executable(basename(program)))
            .into_iter()
            .flatten()
            .map(|path| path.as_path().display().to_string())
            .collect();
        SafeCommandOptions {
            extra_safe_commands: self.request.extra_safe_commands.to_vec(),
            host_executables,
        }
    }
}

/// Spec 03 edge case 18: drop allow matches reached through an untrusted resolved path.
fn allow_may_apply(policy: &Policy, found: &RuleMatch) -> bool {
    match found {
        RuleMatch::PrefixRuleMatch {
            decision: Decision::Allow,
            resolved_program: Some(resolved),
            ..
        } => allow_applies_to_resolved(policy, resolved),
        _ => true,
    }
}

/// The strictest decision of non-empty `matches`.
fn strictest(matches: &[RuleMatch]) -> Decision {
    matches
        .iter()
        .map(RuleMatch::decision)
        .max()
        .unwrap_or(Decision::Prompt)
}

impl SegmentVerdict {
    /// Whether explicit rules matched and all of them allow it.
    #[must_use]
    pub fn allowed_by_rule(&self) -> bool {
        self.decision == Decision::Allow && self.matches.iter().all(RuleMatch::is_policy_match)
    }

    /// Whether explicit rules alone decide `prompt` or `forbidden` for it (no heuristic
    /// match among its matches), so a heuristic cannot raise it further (spec 03 decision 13).
    #[must_use]
    pub fn raised_by_rules_alone(&self) -> bool {
        self.decision != Decision::Allow
            && !self.matches.is_empty()
            && self.matches.iter().all(RuleMatch::is_policy_match)
    }

    /// Whether an explicit `prompt` rule matched.
    #[must_use]
    pub fn prompted_by_rule(&self) -> bool {
        self.matches
            .iter()
            .any(|found| found.is_policy_match() && found.decision() == Decision::Prompt)
    }
}
