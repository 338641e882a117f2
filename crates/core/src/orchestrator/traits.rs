//! What a tool runtime implements so the orchestrator can run it (spec 07 §Traits).

use std::future::Future;
use std::path::PathBuf;

use airlock_approval::ApprovalAction;
use airlock_approval::ApprovalCategory;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxPermissions;
use airlock_sandbox::ExecOutput;
use airlock_sandbox::SandboxablePreference;

use super::attempt::SandboxAttempt;
use super::error::ToolError;

/// Where a tool call runs (spec 07 step 1): its working directory, workspace roots and the
/// canonical (symbolic) permission profile of that environment.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEnvironment {
    /// The environment id (`None` = the local host).
    pub environment_id: Option<String>,
    /// Absolute working directory; also the directory symbolic entries resolve against.
    pub cwd: PathBuf,
    /// Workspace roots (the cwd first) that `:workspace_roots` entries materialise against.
    pub workspace_roots: Vec<PathBuf>,
    /// The environment's profile, symbolic (not yet materialised).
    pub permission_profile: PermissionProfile,
}

/// The approval side of a tool (spec 07 §Traits `Approvable<Req>`).
pub trait Approvable<Req> {
    /// The sandbox override the call asks for (default `use_default`).
    fn sandbox_permissions(&self, _req: &Req) -> SandboxPermissions {
        SandboxPermissions::UseDefault
    }

    /// A requirement the runtime computed itself (shell: the exec-policy manager's); `None`
    /// → the orchestrator uses `default_exec_approval_requirement` (spec 07 step 2).
    fn exec_approval_requirement(&self, _req: &Req) -> Option<ExecApprovalRequirement> {
        None
    }

    /// The granular category of the first prompt (spec README invariant 5; spec 03 edge case
    /// 13). Default `sandbox_approval`.
    fn approval_category(&self, _req: &Req) -> ApprovalCategory {
        ApprovalCategory::SandboxApproval
    }

    /// The one description every reviewer sees (spec 06 §`ApprovalAction`).
    ///
    /// # Errors
    /// When the request cannot be described (the call is refused with an execution error).
    fn approval_action(&self, req: &Req, call_id: &str) -> std::io::Result<ApprovalAction>;

    /// Why this request must never run outside the sandbox, if so: it would run code a
    /// sandboxed command could have planted (issue 11). Default: nothing known.
    fn unsandboxed_refusal(&self, _req: &Req) -> Option<String> {
        None
    }

    /// Whether a retry may skip the second approval (spec 07 step 6; reference §3 step 3.5):
    /// default `already_approved || policy == never`.
    fn should_bypass_approval(&self, policy: AskForApproval, already_approved: bool) -> bool {
        already_approved || policy == AskForApproval::Never
    }

    /// Whether asking to run without the sandbox is allowed under `policy` (spec 07 §Traits;
    /// reference §3 step 3.3 defaults for shell): `untrusted` → yes, `on-request` → no (the
    /// network case is handled by the orchestrator), `never` → no, granular → its
    /// `sandbox_approval` switch.
    fn wants_no_sandbox_approval(&self, policy: AskForApproval) -> bool {
        match policy {
            AskForApproval::UnlessTrusted => true,
            AskForApproval::OnRequest | AskForApproval::Never => false,
            AskForApproval::Granular(granular) => granular.allows_sandbox_approval(),
        }
    }
}

/// The sandbox side of a tool (spec 07 §Traits `Sandboxable`).
pub trait Sandboxable<Req> {
    /// The tool's sandbox preference for [`airlock_sandbox::SandboxManager::should_sandbox`]
    /// (shell, unified exec and apply_patch use `Auto`, reference §3 step 2).
    fn sandbox_preference(&self) -> SandboxablePreference {
        SandboxablePreference::Auto
    }

    /// Whether a sandbox denial may lead to a retry (all built-in runtimes: `true`).
    fn escalate_on_failure(&self) -> bool {
        true
    }

    /// `true` when an executor confines the process itself (remote environment): the
    /// profile stays symbolic and no local wrapper is chosen (spec 07 steps 1 and 5).
    fn uses_executor_managed_process_sandbox(&self, _req: &Req) -> bool {
        false
    }
}

/// Runs one attempt of a tool call (spec 07 §Traits `ToolRuntime::run`).
pub trait ToolRuntime<Req>: Approvable<Req> + Sandboxable<Req> {
    /// The tool name given to reviewers and the audit log (`shell`, ...).
    fn tool_name(&self) -> &'static str;

    /// Runs `req` under `attempt`. A sandbox denial is [`ToolError::SandboxDenied`] carrying
    /// the output; a command that merely fails is `Ok` with its exit code.
    fn run(
        &self,
        req: &Req,
        attempt: &SandboxAttempt,
    ) -> impl Future<Output = Result<ExecOutput, ToolError>>;
}
