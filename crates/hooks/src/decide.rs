//! The policy verdict of a hook's command: the same requirement computation as `airlock
//! explain` (spec 13; spec 10 §CLI): config, profile, rules, shell splitting, heuristics, the
//! review of runs outside the sandbox.
//!
//! The harness runs the command itself, outside Airlock's sandbox, so the default approval
//! policy here is `untrusted` (every command not known safe or allowed by a rule needs
//! approval), not the config's `approval_policy`, which is about commands Airlock confines:
//! under `on-request` almost every command is `Skip` *because* it would run sandboxed.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use airlock_core::ExecApprovalRequest;
use airlock_core::ExecPolicyManager;
use airlock_core::ExecPolicySources;
use airlock_core::RequirementOutcome;
use airlock_core::extra_safe_commands_from_config;
use airlock_execpolicy::Decision;
use airlock_execpolicy::RuleMatch;
use airlock_permissions::ConfigEnv;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::load_config;
use airlock_permissions::select_permission_profile;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::SandboxPermissions;

/// What the hook was configured with (`airlock hook ... [-a] [-P] [-r]... [-c]...`).
#[derive(Debug, Clone, Default)]
pub struct DecideSettings {
    /// `-a`; `None` = `untrusted` (see the module doc).
    pub approval_policy: Option<AskForApproval>,
    /// `-P`; `None` = the configured profile.
    pub profile: Option<String>,
    /// `-r` (replace the configured rules files when non-empty).
    pub rules: Vec<PathBuf>,
    /// `-c key=value` overrides.
    pub overrides: Vec<String>,
}

/// The requirement, reduced to what a hook answer needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictKind {
    /// No approval needed.
    Skip,
    /// A reviewer must approve.
    NeedsApproval,
    /// Never runs.
    Forbidden,
}

/// The verdict of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyVerdict {
    /// Skip / needs approval / forbidden.
    pub kind: VerdictKind,
    /// Why (the requirement's reason; for `Skip`, none).
    pub reason: Option<String>,
    /// Every segment was allowed by an explicit rule (not by the known-safe list or other
    /// heuristics), and nothing asked for more.
    pub allowed_by_rule: bool,
    /// An explicit `forbidden` rule matched (a segment or a command of the deny view).
    pub forbidden_by_rule: bool,
    /// Config and rules warnings, for stderr.
    pub warnings: Vec<String>,
}

/// Why no verdict could be computed (the caller answers with no decision).
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// The configuration cannot be used.
    #[error("{0}")]
    Config(String),
    /// The command cannot be evaluated (spec 03 edge case 16).
    #[error("invalid command: {0}")]
    Command(String),
}

/// Computes the verdict of the shell script `command` run in `cwd` (absolute), as the
/// harness's shell runs it (`bash -lc COMMAND`).
///
/// # Errors
/// [`DecideError`] when the configuration or the command cannot be used.
pub fn decide(
    settings: &DecideSettings,
    env: &ConfigEnv,
    command: &str,
    cwd: &Path,
) -> Result<PolicyVerdict, DecideError> {
    let config_error = |error: &dyn std::fmt::Display| DecideError::Config(error.to_string());
    let config = load_config(env, &settings.overrides).map_err(|e| config_error(&e))?;
    let selected = select_permission_profile(&config, settings.profile.as_deref(), cwd)
        .map_err(|e| config_error(&e))?;
    let mut warnings = selected.warnings.clone();
    let extra_safe_commands =
        extra_safe_commands_from_config(&config).map_err(|e| config_error(&e))?;
    let sources =
        ExecPolicySources::for_config(&config, &env.airlock_home, cwd, settings.rules.clone());
    let profile = selected.materialized();
    let fs_policy = file_system_sandbox_policy(&profile);
    let argv = vec!["bash".to_owned(), "-lc".to_owned(), command.to_owned()];
    let request = ExecApprovalRequest {
        command: &argv,
        approval_policy: settings
            .approval_policy
            .unwrap_or(AskForApproval::UnlessTrusted),
        file_system_sandbox_policy: &fs_policy,
        sandbox_permissions: SandboxPermissions::UseDefault,
        prefix_rule: None,
        cwd,
        extra_safe_commands: &extra_safe_commands,
    };
    let allow_bypass = airlock_core::unsandboxed::allow_rules_bypass_sandbox(&config)
        .map_err(|e| config_error(&e))?;
    let evaluate = |sources: &ExecPolicySources| -> Result<PolicyVerdict, DecideError> {
        let manager = ExecPolicyManager::load(sources);
        let mut outcome = manager
            .create_exec_approval_requirement_for_command(&request)
            .map_err(|error| DecideError::Command(error.to_string()))?;
        // As `explain` and `exec` do; a refusal matters more here, where nothing is confined.
        let process_env: BTreeMap<String, String> = std::env::vars().collect();
        let review = airlock_core::unsandboxed::review_command(
            &outcome.parsed,
            &airlock_core::unsandboxed::ReviewContext {
                cwd,
                env: &process_env,
                fs_policy: &fs_policy,
                // The harness runs the command itself, with its own environment.
                pins_git: false,
            },
        );
        outcome.unsandboxed = airlock_core::unsandboxed::apply_review(
            &mut outcome.requirement,
            review,
            allow_bypass,
            false,
        );
        Ok(verdict_of(&outcome, manager.warnings().to_vec()))
    };
    let mut verdict = evaluate(&sources)?;
    // The harness's agent writes files without Airlock's sandbox, so a trusted project's
    // `.airlock/rules/` may have been written by the agent itself: its rules may tighten the
    // verdict but never loosen it (the stricter of with and without them).
    if sources.trusted_project.is_some() {
        let without_project = evaluate(&ExecPolicySources {
            trusted_project: None,
            ..sources.clone()
        })?;
        verdict = stricter(verdict, without_project);
    }
    // Deny-read entries are sticky (spec README invariant 2: no unsandboxed run while any
    // exists), and whatever the hook lets through runs outside Airlock's sandbox: with
    // such a profile nothing is waved through, a reviewer decides (red-team F7).
    if verdict.kind == VerdictKind::Skip
        && !airlock_permissions::FileSystemPolicyQueries::unsandboxed_execution_allowed(&fs_policy)
    {
        verdict.kind = VerdictKind::NeedsApproval;
        verdict.allowed_by_rule = false;
        verdict.reason = Some(
            "the permission profile denies reading some paths, and the harness runs this \
             command outside Airlock's sandbox, which enforces that; approve it only if it \
             reads none of them"
                .to_owned(),
        );
    }
    warnings.append(&mut verdict.warnings);
    verdict.warnings = warnings;
    // Reasons name the command as Airlock judged it (`bash -lc '...'`); the person reading
    // the harness's prompt knows it as the script they saw.
    if let Some(reason) = &mut verdict.reason
        && let Ok(judged) = shlex::try_join(argv.iter().map(String::as_str))
    {
        *reason = reason.replace(&format!("`{judged}`"), &format!("`{command}`"));
    }
    Ok(verdict)
}

const fn severity(kind: VerdictKind) -> u8 {
    match kind {
        VerdictKind::Skip => 0,
        VerdictKind::NeedsApproval => 1,
        VerdictKind::Forbidden => 2,
    }
}

/// The stricter of two verdicts of the same command: the higher requirement (its reason),
/// allowed by rule only when both are, forbidden by rule when the chosen one is.
fn stricter(first: PolicyVerdict, second: PolicyVerdict) -> PolicyVerdict {
    let allowed_by_rule = first.allowed_by_rule && second.allowed_by_rule;
    let mut chosen = if severity(second.kind) > severity(first.kind) {
        second
    } else {
        first
    };
    chosen.allowed_by_rule = allowed_by_rule;
    chosen
}

/// The verdict of a computed requirement. A review that refuses to run the command outside
/// the sandbox (planted repository configuration, ...) turns `Skip` into `NeedsApproval`: the
/// harness runs it unconfined.
#[must_use]
pub fn verdict_of(outcome: &RequirementOutcome, warnings: Vec<String>) -> PolicyVerdict {
    let refused = outcome.unsandboxed.refused.clone();
    let (kind, reason) = match (&outcome.requirement, refused) {
        (ExecApprovalRequirement::Forbidden { reason }, _) => {
            (VerdictKind::Forbidden, Some(reason.clone()))
        }
        (ExecApprovalRequirement::NeedsApproval { reason, .. }, _) => {
            (VerdictKind::NeedsApproval, reason.clone())
        }
        (ExecApprovalRequirement::Skip { .. }, Some(refused)) => {
            (VerdictKind::NeedsApproval, Some(refused))
        }
        (ExecApprovalRequirement::Skip { .. }, None) => (VerdictKind::Skip, None),
    };
    let allowed_by_rule = kind == VerdictKind::Skip
        && outcome.decision == Decision::Allow
        && outcome.prompt_causes.is_empty()
        && !outcome.segments.is_empty()
        && outcome.segments.iter().all(|segment| {
            segment.decision == Decision::Allow
                && !segment.matches.is_empty()
                && segment.matches.iter().all(RuleMatch::is_policy_match)
        });
    let forbidden_rule =
        |rule: &RuleMatch| rule.is_policy_match() && rule.decision() == Decision::Forbidden;
    let forbidden_by_rule = kind == VerdictKind::Forbidden
        && (outcome.matched_rules().any(forbidden_rule)
            || outcome
                .deny_view_matches
                .iter()
                .any(|inner| forbidden_rule(&inner.rule)));
    PolicyVerdict {
        kind,
        reason,
        allowed_by_rule,
        forbidden_by_rule,
        warnings,
    }
}
