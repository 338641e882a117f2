//! Airlock's core: one tool call through the three layers (spec `07-orchestrator.md`).
//!
//! Owns:
//! - the **approval requirement** of a command ([`requirement`]): segments and deny view
//!   from `airlock-shell`, rule matches from `airlock-execpolicy`, the heuristics fallback,
//!   the strictest decision, the `never`/granular rejections, amendment proposals, the
//!   default requirement and the first-attempt sandbox override (spec 03, spec 07);
//! - the **exec-policy manager** ([`exec_policy_manager`]): which `.rules` files are in
//!   use and what happens when one fails to load (fail closed, spec 02);
//! - the review of runs that would leave the sandbox ([`unsandboxed`]): a repository a
//!   sandboxed command could have planted code in keeps `git` confined (issue 11);
//! - the orchestrator, sessions and the audit log (spec 07, spec 10);
//! - the `apply_patch` tool's safety assessment, sandboxed runtime and atomic writer
//!   ([`apply_patch`], spec 11; the patch language itself is crate `airlock-patch`).
//!
//! Must not: spawn processes outside the orchestrator, or widen anything a previous step
//! decided (spec README invariant 1).

#![deny(missing_docs)]

pub mod exec_policy_manager;
pub mod requirement;

pub mod apply_patch;
pub mod audit;
mod audit_time;
mod call_id;
pub mod orchestrator;
pub mod process;
pub mod remote;
pub mod session;
pub mod session_config;
pub mod shell_runtime;
pub mod unsandboxed;

pub use exec_policy_manager::{ExecPolicyManager, ExecPolicySources, PolicyState};
pub use requirement::{
    BANNED_PREFIX_SUGGESTIONS, ExecApprovalRequest, PromptSource, RequirementError,
    RequirementOutcome, SandboxOverride, canonicalize_command_for_approval,
    create_exec_approval_requirement_for_command, default_exec_approval_requirement,
    extra_safe_commands_from_config, first_attempt_sandboxed, prompt_is_rejected_by_policy,
    render_decision_for_unmatched_command, sandbox_override_for_first_attempt, trusted_project,
};

pub use audit::{AuditLog, AuditRecord, CallOutcome};
pub use audit_time::rfc3339_utc;
pub use call_id::new_call_id;
pub use orchestrator::{
    OrchestratorOutcome, SandboxAttempt, SandboxSettings, ToolCallContext, ToolEnvironment,
    ToolError, ToolOrchestrator,
};
#[cfg(target_os = "linux")]
pub use process::launch_kill::kill_all as kill_all_launches;
pub use process::{
    OUTPUT_SINK_CHUNKS, OutputChunk, OutputMode, OutputStreamKind, with_output_sink,
};
pub use session::{
    PatchCall, PatchCallOutcome, PatchResult, Session, SessionOptions, ShellCall, ShellCallOutcome,
    ShellToolOutcome,
};
pub use session_config::SessionConfig;
pub use shell_runtime::{ShellRequest, ShellRuntime};
