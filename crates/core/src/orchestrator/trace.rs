//! What the orchestrator decided and ran for one call, with timings (spec 07 step 7; spec 10
//! §Audit log "reviewer source and decision (with timing), each attempt, retry reason,
//! amendments written").

use airlock_approval::ApprovalResolution;
use airlock_approval::DecisionSource;
use airlock_approval::ReviewFailureKind;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::ReviewDecision;
use airlock_sandbox::SandboxType;
use serde::Serialize;

use super::attempt::AttemptPhase;
use super::attempt::SandboxAttempt;
use crate::requirement::SandboxOverride;

/// One approval asked (or recorded from configuration) during a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalRecord {
    /// Before the first attempt or before the retry.
    pub phase: AttemptPhase,
    /// Who decided (`config` for a `Skip` or a `Forbidden` that asked nobody).
    pub source: DecisionSource,
    /// The decision, in its wire form.
    pub decision: ReviewDecision,
    /// Time to decide, in milliseconds.
    pub duration_ms: u64,
    /// Why the automatic reviewer did not approve (`timeout`, `crashed`,
    /// `unusable_answer`, `risk_denial`; issue 18 item 8); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_failure: Option<ReviewFailureKind>,
}

impl ApprovalRecord {
    /// A record of `resolution` for `phase`.
    #[must_use]
    pub fn from_resolution(phase: AttemptPhase, resolution: &ApprovalResolution) -> Self {
        Self {
            phase,
            source: resolution.source,
            decision: resolution.decision.clone(),
            duration_ms: resolution.duration_ms,
            review_failure: resolution.review_failure,
        }
    }
}

/// One execution attempt and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptRecord {
    /// First or retry.
    pub phase: AttemptPhase,
    /// The local wrapper used.
    pub sandbox: SandboxType,
    /// Whether policy asked for confinement (spec README invariant 11).
    pub sandbox_requested: bool,
    /// The exit code, when the process ran.
    pub exit_code: Option<i32>,
    /// Whether the failure was attributed to the sandbox (spec 05 §Denial detection).
    pub sandbox_denied: bool,
    /// For a denial: whether Airlock observed it or only the command's output says so
    /// (an output-only denial never skips the retry's approval, spec 07 step 6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denial_evidence: Option<super::DenialEvidence>,
    /// Why the process could not be started, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the attempt, in milliseconds.
    pub duration_ms: u64,
}

impl AttemptRecord {
    /// A record for `attempt` before it ran; the caller fills in the result.
    #[must_use]
    pub const fn started(attempt: &SandboxAttempt) -> Self {
        Self {
            phase: attempt.phase,
            sandbox: attempt.sandbox,
            sandbox_requested: attempt.sandbox_requested,
            exit_code: None,
            sandbox_denied: false,
            denial_evidence: None,
            error: None,
            duration_ms: 0,
        }
    }
}

/// Why a sandbox denial was returned instead of retried (spec 07 step 6, in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoRetryReason {
    /// A network-policy decision nobody may be asked about.
    NetworkDecisionWithoutContext,
    /// The tool does not escalate on failure.
    ToolDoesNotEscalate,
    /// The approval policy does not allow asking to run without the sandbox.
    PolicyDisallowsUnsandboxedApproval,
    /// The filesystem policy has deny-read entries (spec README invariant 2).
    DenyReadIsSticky,
    /// Outside the sandbox it would run code a sandboxed command could have planted (see
    /// [`CallTrace::unsandboxed_refused`]; issue 11).
    PlantedCode,
}

impl NoRetryReason {
    /// A one-line explanation for people.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Self::NetworkDecisionWithoutContext => {
                "the network policy blocked it and there is nobody to ask"
            }
            Self::ToolDoesNotEscalate => "this tool does not retry without the sandbox",
            Self::PolicyDisallowsUnsandboxedApproval => {
                "the approval policy does not allow asking to run it without the sandbox"
            }
            Self::DenyReadIsSticky => {
                "the permission profile denies reads, so it never runs without the sandbox"
            }
            Self::PlantedCode => {
                "outside the sandbox it would run code a sandboxed command could have planted"
            }
        }
    }
}

/// The orchestrator's record of one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallTrace {
    /// The tool (`shell`, ...).
    pub tool: &'static str,
    /// The requirement used (runtime-computed or the default; spec 07 step 2).
    pub requirement: Option<ExecApprovalRequirement>,
    /// Whether the strict automatic review applied.
    pub strict_auto_review: bool,
    /// The first-attempt override (spec 07 step 4).
    pub first_attempt_override: Option<SandboxOverride>,
    /// Approvals in order (at most one per phase).
    pub approvals: Vec<ApprovalRecord>,
    /// Attempts in order (at most two).
    pub attempts: Vec<AttemptRecord>,
    /// The retry reason, when a retry was considered and allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_reason: Option<String>,
    /// Why a denial was not retried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_retry: Option<NoRetryReason>,
    /// Why a run that would have left the sandbox (allow-rule bypass, escalation, retry)
    /// stayed in it: it would have run code a sandboxed command could have planted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsandboxed_refused: Option<String>,
    /// Prefix rules accepted with `approved_execpolicy_amendment` (persisted by the approval
    /// layer before delivery; a failure to persist is a warning event).
    pub amendments: Vec<Vec<String>>,
    /// Wall time of the whole call, in milliseconds.
    pub duration_ms: u64,
}

impl CallTrace {
    /// An empty trace for `tool`.
    #[must_use]
    pub const fn new(tool: &'static str) -> Self {
        Self {
            tool,
            requirement: None,
            strict_auto_review: false,
            first_attempt_override: None,
            approvals: Vec::new(),
            attempts: Vec::new(),
            retry_reason: None,
            no_retry: None,
            unsandboxed_refused: None,
            amendments: Vec::new(),
            duration_ms: 0,
        }
    }

    /// Records an approval; an accepted amendment is also listed in [`Self::amendments`].
    pub fn record_approval(&mut self, record: ApprovalRecord) {
        if let ReviewDecision::ApprovedExecpolicyAmendment {
            proposed_execpolicy_amendment,
        } = &record.decision
        {
            self.amendments
                .push(proposed_execpolicy_amendment.command.clone());
        }
        self.approvals.push(record);
    }

    /// Records the `Approved` decision of configuration for a `Skip` (spec 07 step 3).
    pub fn record_config_approval(&mut self) {
        self.approvals.push(ApprovalRecord {
            phase: AttemptPhase::First,
            source: DecisionSource::Config,
            decision: ReviewDecision::Approved,
            duration_ms: 0,
            review_failure: None,
        });
    }
}
