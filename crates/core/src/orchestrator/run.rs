//! `ToolOrchestrator::run`: the only path from a tool call to a process (spec 07 §Algorithm).

use std::path::PathBuf;
use std::time::Instant;

use airlock_approval::ApprovalAction;
use airlock_approval::ApprovalCategory;
use airlock_approval::ApprovalContext;
use airlock_approval::ApprovalResolution;
use airlock_approval::ApprovalSession;
use airlock_approval::ApprovalTurn;
use airlock_approval::DecisionSource;
use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::PermissionProfile;
use airlock_protocol::ReviewDecision;
use airlock_sandbox::ExecOutput;
use airlock_sandbox::SandboxManager;
use airlock_sandbox::SandboxType;
use airlock_sandbox::WindowsSandboxLevel;

use super::attempt::AttemptPhase;
use super::attempt::SandboxAttempt;
use super::error::DenialEvidence;
use super::error::ExecError;
use super::error::ToolError;
use super::retry::DenialFacts;
use super::retry::plan_retry;
use super::trace::ApprovalRecord;
use super::trace::AttemptRecord;
use super::trace::CallTrace;
use super::traits::ToolEnvironment;
use super::traits::ToolRuntime;
use crate::requirement::SandboxOverride;
use crate::requirement::default_exec_approval_requirement;
use crate::requirement::sandbox_override_for_first_attempt;

/// How local attempts are confined: the host-level settings of the enforcement layer.
#[derive(Debug, Clone, Default)]
pub struct SandboxSettings {
    /// The sandbox manager.
    pub manager: SandboxManager,
    /// The executable providing `airlock linux-sandbox` (`std::env::current_exe()` of the
    /// `airlock` binary). `None` makes every Linux-sandboxed attempt fail before spawn.
    pub linux_helper: Option<PathBuf>,
    /// Legacy Landlock instead of bubblewrap.
    pub use_legacy_landlock: bool,
    /// Windows sandbox level.
    pub windows_level: WindowsSandboxLevel,
    /// Whether a managed network proxy is active for this session.
    pub managed_network_active: bool,
    /// The managed network (spec 12) sandboxed attempts run behind; set together with
    /// `managed_network_active`.
    pub managed_network: Option<airlock_permissions::network::ManagedNetwork>,
    /// The socket directory of the session's proxy (which asks the session's reviewers
    /// about unlisted hosts); `None`: each launch starts a proxy of its own.
    pub network_proxy_dir: Option<PathBuf>,
}

/// Everything one call needs besides the tool and its request.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallContext<'a> {
    /// The session's approval layer.
    pub approvals: &'a ApprovalSession,
    /// The turn (its settings carry the approval policy and reviewer).
    pub turn: &'a ApprovalTurn,
    /// The tool call id.
    pub call_id: &'a str,
    /// Where the call runs.
    pub environment: &'a ToolEnvironment,
    /// Send every action to the automatic reviewer, even a `Skip` (spec 06 step 2). Ignored
    /// under `never`, which asks nobody (spec README invariant 4; Airlock decision).
    pub strict_auto_review: bool,
}

/// The result of one call and the record of how it got there.
#[derive(Debug)]
pub struct OrchestratorOutcome {
    /// The command's output, or why it did not run / was denied.
    pub result: Result<ExecOutput, ToolError>,
    /// What was decided and run, with timings (spec 07 step 7).
    pub trace: CallTrace,
}

/// Runs tool calls through requirement → approval → attempt → denial → retry (spec 07).
#[derive(Debug, Clone, Default)]
pub struct ToolOrchestrator {
    settings: SandboxSettings,
}

/// What step 1 derives from the environment.
struct Inputs {
    executor_managed: bool,
    permissions: PermissionProfile,
    symbolic: PermissionProfile,
    fs_policy: FileSystemSandboxPolicy,
    policy: AskForApproval,
    strict: bool,
}

impl ToolOrchestrator {
    /// An orchestrator confining local attempts with `settings`.
    #[must_use]
    pub const fn new(settings: SandboxSettings) -> Self {
        Self { settings }
    }

    /// The enforcement settings.
    #[must_use]
    pub const fn settings(&self) -> &SandboxSettings {
        &self.settings
    }

    /// Runs `req` with `tool` (spec 07 §Algorithm, steps 1–7). Never panics; every failure is
    /// in [`OrchestratorOutcome::result`], every decision in its trace. An `abort` interrupts
    /// the turn (every other pending approval of the turn resolves to `abort`).
    pub async fn run<Req, T: ToolRuntime<Req>>(
        &self,
        tool: &T,
        req: &Req,
        ctx: &ToolCallContext<'_>,
    ) -> OrchestratorOutcome {
        let started = Instant::now();
        let mut trace = CallTrace::new(tool.tool_name());
        let result = self.run_steps(tool, req, ctx, &mut trace).await;
        if let Err(ToolError::Rejected {
            interrupts_turn: true,
            ..
        }) = &result
            && ctx
                .approvals
                .active_turn()
                .is_some_and(|active| std::ptr::eq(&*active, ctx.turn))
        {
            // Only the call's own turn: a newer turn must not be interrupted by a late abort.
            ctx.approvals.interrupt_turn();
        }
        trace.duration_ms = millis(started);
        OrchestratorOutcome { result, trace }
    }

    async fn run_steps<Req, T: ToolRuntime<Req>>(
        &self,
        tool: &T,
        req: &Req,
        ctx: &ToolCallContext<'_>,
        trace: &mut CallTrace,
    ) -> Result<ExecOutput, ToolError> {
        // Step 1: inputs.
        let inputs = self.inputs(tool, req, ctx);
        trace.strict_auto_review = inputs.strict;
        // Step 2: requirement.
        let requirement = tool
            .exec_approval_requirement(req)
            .unwrap_or_else(|| default_exec_approval_requirement(inputs.policy, &inputs.fs_policy));
        trace.requirement = Some(requirement.clone());
        // Codex's `PreToolUse` hooks run for every call that may run, whatever it needs
        // (issue 18 item 7); they can only block.
        if !matches!(requirement, ExecApprovalRequirement::Forbidden { .. }) {
            self.pre_tool_use(tool, req, ctx, trace).await?;
        }
        // Step 3: first approval.
        let approval_reason = match &requirement {
            ExecApprovalRequirement::NeedsApproval { reason, .. } => reason.clone(),
            ExecApprovalRequirement::Skip { .. } | ExecApprovalRequirement::Forbidden { .. } => {
                None
            }
        };
        let already_approved = match &requirement {
            ExecApprovalRequirement::Forbidden { reason } => {
                return Err(ToolError::rejected(reason.clone()));
            }
            ExecApprovalRequirement::NeedsApproval { .. } => {
                let approval = ApprovalRequest {
                    phase: AttemptPhase::First,
                    category: tool.approval_category(req),
                    approval_reason: approval_reason.clone(),
                    retry_reason: None,
                    network: None,
                };
                self.approve(tool, req, ctx, &inputs, approval, trace)
                    .await?;
                true
            }
            ExecApprovalRequirement::Skip { .. } if inputs.strict => {
                let approval = ApprovalRequest {
                    phase: AttemptPhase::First,
                    category: ApprovalCategory::SandboxApproval,
                    approval_reason: None,
                    retry_reason: None,
                    network: None,
                };
                self.approve(tool, req, ctx, &inputs, approval, trace)
                    .await?;
                true
            }
            ExecApprovalRequirement::Skip { .. } => {
                trace.record_config_approval();
                false
            }
        };
        // Step 4: first-attempt override.
        let mut sandbox_override = sandbox_override_for_first_attempt(
            tool.sandbox_permissions(req),
            &requirement,
            &inputs.fs_policy,
        );
        // Asked only where the answer matters: a deferred review is computed then.
        if sandbox_override == SandboxOverride::BypassSandboxFirstAttempt
            && let Some(reason) = &tool.unsandboxed_refusal(req)
        {
            // Issue 11: it stays confined, and the record says why.
            sandbox_override = SandboxOverride::NoOverride;
            trace.unsandboxed_refused = Some(reason.clone());
        }
        trace.first_attempt_override = Some(sandbox_override);
        // Step 5: the first attempt.
        let preference = tool.sandbox_preference();
        let managed_network = self.settings.managed_network_active;
        let sandbox_requested = sandbox_override != SandboxOverride::BypassSandboxFirstAttempt
            && self.settings.manager.should_sandbox(
                &inputs.permissions,
                preference,
                managed_network,
            );
        let initial_sandbox = if sandbox_requested && !inputs.executor_managed {
            self.settings
                .manager
                .select_initial(&inputs.permissions, preference, managed_network)
        } else {
            SandboxType::None
        };
        let first = self.attempt(
            AttemptPhase::First,
            initial_sandbox,
            sandbox_requested,
            &inputs,
            ctx.environment,
        );
        let (output, network, evidence) = match run_attempt(tool, req, &first, trace).await {
            Err(ToolError::SandboxDenied {
                output,
                network,
                evidence,
            }) => (output, network, evidence),
            other => return other,
        };
        // Step 6: the denial.
        let network_context = network.as_ref().and_then(|n| n.context.clone());
        let facts = DenialFacts {
            network_decision: network.is_some(),
            network_context: network_context.as_ref(),
            escalate_on_failure: tool.escalate_on_failure(),
            wants_no_sandbox_approval: tool.wants_no_sandbox_approval(inputs.policy),
            policy: inputs.policy,
            default_requirement_needs_approval: matches!(
                default_exec_approval_requirement(inputs.policy, &inputs.fs_policy),
                ExecApprovalRequirement::NeedsApproval { .. }
            ),
            unsandboxed_execution_allowed: inputs.fs_policy.unsandboxed_execution_allowed(),
            strict_auto_review: inputs.strict,
            should_bypass_approval: tool.should_bypass_approval(inputs.policy, already_approved),
            denial_observed: evidence == DenialEvidence::Observed,
        };
        let plan = plan_retry(&facts, &output).map(|plan| {
            let refusal = (!plan.keep_sandbox)
                .then(|| tool.unsandboxed_refusal(req))
                .flatten();
            (plan, refusal)
        });
        let plan = match plan {
            Ok((_, Some(refusal))) => {
                trace.unsandboxed_refused = Some(refusal);
                trace.no_retry = Some(super::trace::NoRetryReason::PlantedCode);
                return Err(ToolError::SandboxDenied {
                    output,
                    network,
                    evidence,
                });
            }
            Ok((plan, None)) => plan,
            Err(reason) => {
                trace.no_retry = Some(reason);
                return Err(ToolError::SandboxDenied {
                    output,
                    network,
                    evidence,
                });
            }
        };
        trace.retry_reason = Some(plan.retry_reason.clone());
        if !plan.bypass_retry_approval {
            let approval = ApprovalRequest {
                phase: AttemptPhase::Retry,
                category: ApprovalCategory::SandboxApproval,
                approval_reason,
                retry_reason: Some(plan.retry_reason.clone()),
                network: network_context,
            };
            self.approve(tool, req, ctx, &inputs, approval, trace)
                .await?;
        }
        let retry_sandbox = if plan.keep_sandbox {
            first.sandbox
        } else {
            SandboxType::None
        };
        let retry = self.attempt(
            AttemptPhase::Retry,
            retry_sandbox,
            plan.keep_sandbox,
            &inputs,
            ctx.environment,
        );
        run_attempt(tool, req, &retry, trace).await
    }

    /// Step 1: the profile (materialised unless an executor manages the sandbox), its
    /// filesystem policy, the approval policy and whether strict review applies.
    fn inputs<Req, T: ToolRuntime<Req>>(
        &self,
        tool: &T,
        req: &Req,
        ctx: &ToolCallContext<'_>,
    ) -> Inputs {
        let environment = ctx.environment;
        let executor_managed = tool.uses_executor_managed_process_sandbox(req);
        let symbolic = environment.permission_profile.clone();
        let permissions = if executor_managed {
            symbolic.clone()
        } else {
            materialize_project_roots_with_workspace_roots(&symbolic, &environment.workspace_roots)
        };
        let fs_policy = file_system_sandbox_policy(&permissions);
        let policy = ctx.turn.settings().approval_policy;
        Inputs {
            executor_managed,
            permissions,
            symbolic,
            fs_policy,
            policy,
            strict: ctx.strict_auto_review && policy != AskForApproval::Never,
        }
    }

    fn attempt(
        &self,
        phase: AttemptPhase,
        sandbox: SandboxType,
        sandbox_requested: bool,
        inputs: &Inputs,
        environment: &ToolEnvironment,
    ) -> SandboxAttempt {
        SandboxAttempt {
            phase,
            sandbox,
            sandbox_requested,
            permissions: inputs.permissions.clone(),
            exec_server_permissions: inputs.symbolic.clone(),
            enforce_managed_network: self.settings.managed_network_active,
            managed_network: self.settings.managed_network.clone(),
            network_proxy_dir: self.settings.network_proxy_dir.clone(),
            sandbox_policy_cwd: environment.cwd.clone(),
            workspace_roots: environment.workspace_roots.clone(),
            linux_helper: self.settings.linux_helper.clone(),
            use_legacy_landlock: self.settings.use_legacy_landlock,
            windows_level: self.settings.windows_level,
        }
    }

    /// Runs the `PreToolUse` hooks; a block is recorded as a hook denial of the first
    /// approval and is the call's `ToolError::Rejected`.
    async fn pre_tool_use<Req, T: ToolRuntime<Req>>(
        &self,
        tool: &T,
        req: &Req,
        ctx: &ToolCallContext<'_>,
        trace: &mut CallTrace,
    ) -> Result<(), ToolError> {
        if ctx.approvals.config().pre_tool_use_hooks.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let action: ApprovalAction = tool
            .approval_action(req, ctx.call_id)
            .map_err(|error| ToolError::Execution(ExecError::Action(error)))?;
        let Some(message) = ctx.approvals.run_pre_tool_use(ctx.turn, &action).await else {
            return Ok(());
        };
        let resolution = ApprovalResolution::new(
            ReviewDecision::denied_with_reason(message),
            DecisionSource::Hook,
            started.elapsed(),
        );
        trace.record_approval(ApprovalRecord::from_resolution(
            AttemptPhase::First,
            &resolution,
        ));
        resolution
            .into_tool_result()
            .map(|_| ())
            .map_err(|rejected| ToolError::Rejected {
                message: rejected.message,
                interrupts_turn: rejected.interrupts_turn,
            })
    }

    /// Asks for approval (spec 07 steps 3 and 6) and records it; a refusal is the call's
    /// `ToolError::Rejected`.
    async fn approve<Req, T: ToolRuntime<Req>>(
        &self,
        tool: &T,
        req: &Req,
        ctx: &ToolCallContext<'_>,
        inputs: &Inputs,
        request: ApprovalRequest,
        trace: &mut CallTrace,
    ) -> Result<(), ToolError> {
        let action: ApprovalAction = tool
            .approval_action(req, ctx.call_id)
            .map_err(|error| ToolError::Execution(ExecError::Action(error)))?;
        let approval_ctx = ApprovalContext {
            call_id: ctx.call_id.to_owned(),
            // The retry is a new request of the same call: its own pending id, and hooks see
            // `<call_id>:retry` (reference §5).
            approval_id: (request.phase == AttemptPhase::Retry)
                .then(|| format!("{}:retry", ctx.call_id)),
            category: request.category,
            strict_auto_review: inputs.strict,
            approval_reason: request.approval_reason,
            retry_reason: request.retry_reason,
            network_approval_context: request.network,
            permission_profile: Some(inputs.permissions.clone()),
            grant_root: None,
        };
        let resolution = ctx
            .approvals
            .request_approval(ctx.turn, &action, &approval_ctx)
            .await;
        trace.record_approval(ApprovalRecord::from_resolution(request.phase, &resolution));
        resolution
            .into_tool_result()
            .map(|_| ())
            .map_err(|rejected| ToolError::Rejected {
                message: rejected.message,
                interrupts_turn: rejected.interrupts_turn,
            })
    }
}

/// One approval the orchestrator asks for.
struct ApprovalRequest {
    phase: AttemptPhase,
    category: ApprovalCategory,
    approval_reason: Option<String>,
    retry_reason: Option<String>,
    network: Option<NetworkApprovalContext>,
}

/// Runs one attempt and records it (spec 07 step 7).
async fn run_attempt<Req, T: ToolRuntime<Req>>(
    tool: &T,
    req: &Req,
    attempt: &SandboxAttempt,
    trace: &mut CallTrace,
) -> Result<ExecOutput, ToolError> {
    let started = Instant::now();
    let mut record = AttemptRecord::started(attempt);
    let result = tool.run(req, attempt).await;
    record.duration_ms = millis(started);
    match &result {
        Ok(output) => record.exit_code = Some(output.exit_code),
        Err(ToolError::SandboxDenied {
            output, evidence, ..
        }) => {
            record.exit_code = Some(output.exit_code);
            record.sandbox_denied = true;
            record.denial_evidence = Some(*evidence);
        }
        Err(error) => record.error = Some(error.to_string()),
    }
    trace.attempts.push(record);
    result
}

fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
