//! The approval requirement of one proposed command (spec 03 "Policy evaluation over
//! segments", "Fallback decision", "Amendment proposals", edge cases 1–23; spec 07
//! §`default_exec_approval_requirement` and step 4).
//!
//! Entry point: [`create_exec_approval_requirement_for_command`], which returns the
//! [`ExecApprovalRequirement`](airlock_protocol::ExecApprovalRequirement) together with
//! everything `airlock explain` and the audit log show ([`RequirementOutcome`]).
//! The orchestrator then asks [`sandbox_override_for_first_attempt`] whether the first
//! attempt may leave the sandbox.

mod amendment;
mod canonical;
mod compute;
mod danger;
mod default;
mod deny;
mod error;
mod fallback;
mod first_attempt;
mod outcome;
mod program;
mod reason;
mod rejection;
mod request;
mod segments;
mod settings;

pub use canonical::canonicalize_command_for_approval;
pub use compute::create_exec_approval_requirement_for_command;
pub use default::{SANDBOX_APPROVAL_DISALLOWED, default_exec_approval_requirement};
pub use error::RequirementError;
pub use fallback::render_decision_for_unmatched_command;
pub use first_attempt::{
    SandboxOverride, first_attempt_sandboxed, sandbox_override_for_first_attempt,
};
pub use outcome::{
    DangerSummary, InnerRuleMatch, PromptCause, PromptKind, RequirementOutcome, SegmentVerdict,
};
pub use reason::NEVER_ESCALATION;
pub use rejection::{
    NEVER_REJECTS_PROMPT, PromptSource, RULES_APPROVAL_DISALLOWED, prompt_is_rejected_by_policy,
};
pub use request::ExecApprovalRequest;
pub use settings::{extra_safe_commands_from_config, trusted_project};

/// Prefixes never offered as an amendment, whoever proposes them (reference §8, spec 03
/// edge cases 11 and 21). Compared for equality with the whole proposal.
pub const BANNED_PREFIX_SUGGESTIONS: &[&[&str]] = &[
    &["python3"],
    &["python3", "-"],
    &["python3", "-c"],
    &["python"],
    &["python", "-"],
    &["python", "-c"],
    &["py"],
    &["py", "-3"],
    &["pythonw"],
    &["pyw"],
    &["pypy"],
    &["pypy3"],
    &["git"],
    &["bash"],
    &["bash", "-lc"],
    &["sh"],
    &["sh", "-c"],
    &["sh", "-lc"],
    &["zsh"],
    &["zsh", "-lc"],
    &["/bin/zsh"],
    &["/bin/zsh", "-lc"],
    &["/bin/bash"],
    &["/bin/bash", "-lc"],
    &["pwsh"],
    &["pwsh", "-Command"],
    &["pwsh", "-c"],
    &["powershell"],
    &["powershell", "-Command"],
    &["powershell", "-c"],
    &["powershell.exe"],
    &["powershell.exe", "-Command"],
    &["powershell.exe", "-c"],
    &["env"],
    &["sudo"],
    &["node"],
    &["node", "-e"],
    &["perl"],
    &["perl", "-e"],
    &["ruby"],
    &["ruby", "-e"],
    &["php"],
    &["php", "-r"],
    &["lua"],
    &["lua", "-e"],
    &["osascript"],
];
