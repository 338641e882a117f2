//! `create_exec_approval_requirement_for_command` (spec 03 "Policy evaluation over
//! segments", edge cases 1–23; reference §7).

use airlock_execpolicy::{Decision, Policy, RuleMatch};
use airlock_protocol::{ExecApprovalRequirement, ExecPolicyAmendment, FileSystemSandboxKind};
use airlock_shell::{
    NotPlainReason, Note, ParsedCommand, command_might_be_dangerous, detect_shell_type,
    parse_command,
};

use super::amendment::{ProposalInputs, propose_for_prompt, propose_for_skip};
use super::danger::first_unallowed_danger;
use super::deny::deny_view_matches;
use super::error::RequirementError;
use super::fallback::render_decision_for_unmatched_command;
use super::outcome::{
    DangerSummary, InnerRuleMatch, PromptCause, PromptKind, RequirementOutcome, SegmentVerdict,
};
use super::reason::{self, NEVER_ESCALATION};
use super::rejection::prompt_is_rejected_by_policy;
use super::request::ExecApprovalRequest;
use super::segments::SegmentEvaluator;

/// Computes the requirement of `request.command` under `policy`; `None` means the exec
/// policy could not be loaded, and every command then needs approval (spec 02, fail
/// closed; under `never` that is `Forbidden`).
///
/// Order (spec 03, edge-case numbers in brackets):
/// 1. parse: segments, plainness, deny view, assignments [1–3, 15, 16];
/// 2. `require_escalated`/`with_additional_permissions` under `never` → `Forbidden` [12];
/// 3. each segment: rule matches (an allow through a path only per [18]), else the
///    heuristics fallback (spec 03 "Fallback decision");
/// 4. the deny view against `forbidden`/`prompt` rules [3, 4];
/// 5. heuristic prompt causes: unavailable policy, incompletely inspected script,
///    code-loading assignments [14], a dangerous command not explicitly allowed [7, 19]
///    (under `never`: `forbidden` unless full write access or an external sandbox), an
///    escalation request on a restricted filesystem unless every segment of a plain
///    command is explicitly allowed [19];
/// 6. the strictest decision; a prompt whose category the policy rejects → `Forbidden`
///    [13]; `Skip` bypasses only when the command is plain and every segment is allowed
///    by rule through a program that may bypass (invariant 3, [18], red-team rule);
/// 7. the amendment proposal (spec 03 "Amendment proposals", [5, 11, 21]).
///
/// # Errors
/// [`RequirementError::InvalidCommand`] for an empty argv, an empty program or a NUL byte
/// (spec 03 edge case 16).
pub fn create_exec_approval_requirement_for_command(
    policy: Option<&Policy>,
    request: &ExecApprovalRequest<'_>,
) -> Result<RequirementOutcome, RequirementError> {
    let parsed = parse_command(request.command)?;
    let empty = Policy::empty();
    let loaded = policy.unwrap_or(&empty);
    let evaluator = SegmentEvaluator::new(request, parsed.plain);
    let whole_dangerous = parsed.find_dangerous().is_some();
    let mut verdicts: Vec<SegmentVerdict> = parsed
        .segments
        .iter()
        .map(|segment| {
            let dangerous = if segment.as_slice() == request.command {
                whole_dangerous
            } else {
                command_might_be_dangerous(segment)
            };
            evaluator.evaluate(loaded, segment, dangerous)
        })
        .collect();
    if let Some(allowed) = allowed_without_assignments(&parsed, &verdicts, loaded, &evaluator) {
        verdicts = vec![allowed];
    }
    let deny_view_matches = deny_view_matches(loaded, request.command, &parsed);
    let dangerous = first_unallowed_danger(&parsed.inner, &verdicts);
    let mut code_loading_variables: Vec<String> = Vec::new();
    for assignment in parsed.code_loading_assignments() {
        if !code_loading_variables.contains(&assignment.name) {
            code_loading_variables.push(assignment.name.clone());
        }
    }
    let mut state = Decider {
        request,
        parsed: &parsed,
        verdicts: &verdicts,
        deny_view_matches: &deny_view_matches,
        causes: Vec::new(),
        heuristic_forbidden: None,
    };
    state.collect_unknown_code(loaded);
    state.collect_causes(
        policy.is_none(),
        &code_loading_variables,
        dangerous.as_ref(),
    );
    let decision = state.decision();
    let requirement = if request.approval_policy == airlock_protocol::AskForApproval::Never
        && request.sandbox_permissions.requests_sandbox_override()
    {
        ExecApprovalRequirement::Forbidden {
            reason: NEVER_ESCALATION.to_owned(),
        }
    } else {
        state.requirement(decision, loaded, &evaluator)
    };
    let prompt_causes = state.causes;
    Ok(RequirementOutcome {
        parsed,
        segments: verdicts,
        deny_view_matches,
        dangerous,
        code_loading_variables,
        prompt_causes,
        decision,
        policy_unavailable: policy
            .is_none()
            .then(|| "the exec policy could not be loaded".to_owned()),
        requirement,
        unsandboxed: crate::unsandboxed::UnsandboxedReview::default(),
    })
}

/// Issue 18 item 5 (field log BL-06): a script that is not plain only because of
/// leading assignments of variables that load no code (`FOO=1 gh api …`) is allowed by
/// rule when every segment without them is, and nothing matched the whole argv. The
/// verdict is for the whole argv, so it is never plain: no bypass, no amendment (spec 03
/// decision 5). Forbidden and prompt rules already see the stripped commands through
/// the deny view.
fn allowed_without_assignments(
    parsed: &ParsedCommand,
    verdicts: &[SegmentVerdict],
    policy: &Policy,
    evaluator: &SegmentEvaluator<'_>,
) -> Option<SegmentVerdict> {
    let stripped = parsed.assignment_free_segments.as_ref()?;
    let [whole] = verdicts else { return None };
    if whole.matches.iter().any(RuleMatch::is_policy_match) {
        return None;
    }
    let mut matches = Vec::new();
    for segment in stripped {
        let verdict = evaluator.evaluate(policy, segment, command_might_be_dangerous(segment));
        if !verdict.allowed_by_rule() {
            return None;
        }
        matches.extend(verdict.matches);
    }
    Some(SegmentVerdict {
        command: whole.command.clone(),
        matches,
        known_safe: false,
        dangerous: whole.dangerous,
        decision: Decision::Allow,
        bypass_eligible: false,
    })
}

/// The decision state of one command.
struct Decider<'a> {
    request: &'a ExecApprovalRequest<'a>,
    parsed: &'a ParsedCommand,
    verdicts: &'a [SegmentVerdict],
    deny_view_matches: &'a [InnerRuleMatch],
    causes: Vec<PromptCause>,
    heuristic_forbidden: Option<String>,
}

impl Decider<'_> {
    fn cause(&mut self, kind: PromptKind, detail: String) {
        self.causes.push(PromptCause {
            kind,
            source: kind.source(),
            detail,
        });
    }

    /// A shell reading its script from a pipe (`curl … | sh`) or a git alias from the
    /// environment runs unknown code (issue 18 items 2 and 4): no `forbidden`/`prompt` rule can be checked against it, and an
    /// allow rule for the shell would allow anything. Either way it is a prompt; with
    /// only unrelated allow rules the fallback decides as for any unmatched command.
    fn collect_unknown_code(&mut self, policy: &Policy) {
        let Some(program) = self.parsed.notes.iter().find_map(|note| match note {
            Note::UnknownCode { program } => Some(program.clone()),
            _ => None,
        }) else {
            return;
        };
        let restricting_rules = policy
            .rules()
            .iter()
            .any(|rule| rule.decision != Decision::Allow);
        let shell_allowed = self.verdicts.iter().any(|verdict| {
            verdict.allowed_by_rule()
                && verdict
                    .command
                    .first()
                    .is_some_and(|first| detect_shell_type(first).is_some())
        });
        if restricting_rules || shell_allowed {
            let command = reason::render(self.request.command);
            self.cause(
                PromptKind::Incomplete,
                format!(
                    "`{command}` requires approval: `{program}` runs code that is not on the command line, which no rule can inspect"
                ),
            );
        }
    }

    /// Step 5 of [`create_exec_approval_requirement_for_command`].
    fn collect_causes(
        &mut self,
        policy_unavailable: bool,
        code_loading: &[String],
        dangerous: Option<&DangerSummary>,
    ) {
        let command = reason::render(self.request.command);
        self.collect_rule_and_fallback_prompts();
        if policy_unavailable {
            self.cause(
                PromptKind::PolicyUnavailable,
                format!("`{command}` requires approval: the exec policy could not be loaded"),
            );
        }
        if !self.parsed.deny_view_complete()
            || matches!(
                self.parsed.not_plain_reason(),
                Some(NotPlainReason::Unparsed)
            )
        {
            self.cause(
                PromptKind::Incomplete,
                format!(
                    "`{command}` requires approval: the script could not be inspected completely"
                ),
            );
        }
        if !code_loading.is_empty() {
            self.cause(PromptKind::CodeLoading, format!(
                "`{command}` requires approval: it sets {}, which can load code into the commands it runs",
                code_loading.join(", ")
            ));
        }
        if let Some(danger) = dangerous {
            let detail = format!(
                "`{}` may be dangerous ({})",
                reason::render(&danger.command),
                danger.description
            );
            match render_decision_for_unmatched_command(
                self.request.approval_policy,
                self.request.file_system_sandbox_policy,
                self.request.sandbox_permissions,
                false,
                true,
            ) {
                Decision::Forbidden => {
                    self.heuristic_forbidden =
                        Some(format!("{} ({detail})", reason::blocked(&command)));
                }
                Decision::Prompt => self.cause(
                    PromptKind::Dangerous,
                    format!("`{command}` requires approval: {detail}"),
                ),
                Decision::Allow => {}
            }
        }
        let all_allowed_by_rule =
            self.parsed.plain && self.verdicts.iter().all(SegmentVerdict::allowed_by_rule);
        if self.request.sandbox_permissions.requests_sandbox_override()
            && self.request.file_system_sandbox_policy.kind == FileSystemSandboxKind::Restricted
            && !all_allowed_by_rule
        {
            self.cause(
                PromptKind::Escalation,
                format!("`{command}` asks to run with permissions beyond the sandbox"),
            );
        }
    }

    /// The strictest decision over segments, deny view and causes.
    fn decision(&self) -> Decision {
        let mut decision = self
            .verdicts
            .iter()
            .map(|verdict| verdict.decision)
            .chain(
                self.deny_view_matches
                    .iter()
                    .map(|found| found.rule.decision()),
            )
            .max()
            .unwrap_or(Decision::Prompt);
        if !self.causes.is_empty() {
            decision = decision.max(Decision::Prompt);
        }
        if self.heuristic_forbidden.is_some() {
            decision = Decision::Forbidden;
        }
        decision
    }

    /// Step 6–7: the requirement for `decision`.
    fn requirement(
        &self,
        decision: Decision,
        policy: &Policy,
        evaluator: &SegmentEvaluator<'_>,
    ) -> ExecApprovalRequirement {
        match decision {
            Decision::Forbidden => ExecApprovalRequirement::Forbidden {
                reason: self.forbidden_reason(),
            },
            Decision::Prompt => self.prompt_requirement(policy, evaluator),
            Decision::Allow => ExecApprovalRequirement::Skip {
                bypass_sandbox: self.parsed.plain
                    && self.verdicts.iter().all(|verdict| verdict.bypass_eligible),
                proposed_execpolicy_amendment: propose_for_skip(&self.proposal_inputs())
                    .map(ExecPolicyAmendment::new),
            },
        }
    }

    fn forbidden_reason(&self) -> String {
        let rules = self
            .verdicts
            .iter()
            .flat_map(|verdict| verdict.matches.iter())
            .chain(self.deny_view_matches.iter().map(|found| &found.rule));
        if let Some(rule) = reason::most_specific(rules, Decision::Forbidden) {
            return reason::forbidden_by_rule(self.request.command, rule);
        }
        self.heuristic_forbidden
            .clone()
            .unwrap_or_else(|| reason::blocked(&reason::render(self.request.command)))
    }

    /// Rule prompts (segments, then the deny view) and fallback prompts, in order.
    fn collect_rule_and_fallback_prompts(&mut self) {
        let command = self.request.command;
        let rules: Vec<String> = self
            .verdicts
            .iter()
            .flat_map(|verdict| verdict.matches.iter())
            .chain(self.deny_view_matches.iter().map(|found| &found.rule))
            .filter(|found| found.is_policy_match() && found.decision() == Decision::Prompt)
            .map(|rule| reason::prompt_by_rule(command, rule))
            .collect();
        for detail in rules {
            if !self.causes.iter().any(|cause| cause.detail == detail) {
                self.cause(PromptKind::Rule, detail);
            }
        }
        let fallbacks: Vec<String> = self
            .verdicts
            .iter()
            .filter(|verdict| {
                verdict.decision == Decision::Prompt
                    && !verdict.matches.iter().any(RuleMatch::is_policy_match)
            })
            .map(|verdict| {
                format!(
                    "`{}` is not known to be safe under this approval policy",
                    reason::render(&verdict.command)
                )
            })
            .collect();
        for detail in fallbacks {
            self.cause(PromptKind::Fallback, detail);
        }
    }

    fn prompt_requirement(
        &self,
        policy: &Policy,
        evaluator: &SegmentEvaluator<'_>,
    ) -> ExecApprovalRequirement {
        for cause in &self.causes {
            if let Some(reason) =
                prompt_is_rejected_by_policy(self.request.approval_policy, cause.source)
            {
                return ExecApprovalRequirement::Forbidden {
                    reason: reason.to_owned(),
                };
            }
        }
        // Codex gives a reason only for rule prompts; Airlock adds its own heuristics'
        // reasons, but a plain fallback prompt stays without one.
        let reason = self
            .causes
            .iter()
            .find(|cause| cause.kind != PromptKind::Fallback)
            .map(|cause| cause.detail.clone());
        let allows_every_segment = |prefix: &[String]| {
            let mut amended = policy.clone();
            amended.add_allow_prefix_rule(prefix);
            self.verdicts.iter().all(|verdict| {
                evaluator
                    .evaluate(&amended, &verdict.command, verdict.dangerous)
                    .decision
                    == Decision::Allow
            })
        };
        let proposal = propose_for_prompt(
            &self.proposal_inputs(),
            self.request.prefix_rule,
            &allows_every_segment,
        );
        ExecApprovalRequirement::NeedsApproval {
            reason,
            proposed_execpolicy_amendment: proposal.map(ExecPolicyAmendment::new),
        }
    }

    fn proposal_inputs(&self) -> ProposalInputs<'_> {
        ProposalInputs {
            plain: self.parsed.plain,
            verdicts: self.verdicts,
            prompt_rule_matched: self.verdicts.iter().any(SegmentVerdict::prompted_by_rule)
                || self
                    .deny_view_matches
                    .iter()
                    .any(|found| found.rule.decision() == Decision::Prompt),
        }
    }
}
