//! `Session`: one agent session's exec policy, approval layer, orchestrator and audit log —
//! the shell tool handler that feeds [`ToolOrchestrator::run`] (spec 07; spec 10 §Audit log).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::RwLock;

use airlock_approval::AmendmentTarget;
use airlock_approval::ApprovalConfig;
use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::ApprovalTurn;
use airlock_approval::TurnSettings;
use airlock_execpolicy::Policy;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::SandboxPermissions;
use airlock_sandbox::ExecOutput;
use airlock_shell::ExtraSafeCommand;
use tokio::sync::mpsc::UnboundedSender;

use crate::audit::AuditError;
use crate::audit::AuditLog;
use crate::audit::AuditRecord;
use crate::audit::CallOutcome;
use crate::audit::PolicyEvaluation;
use crate::audit::audit_now;
use crate::exec_policy_manager::ExecPolicyManager;
use crate::exec_policy_manager::PolicyState;
use crate::orchestrator::CallTrace;
use crate::orchestrator::SandboxSettings;
use crate::orchestrator::ToolCallContext;
use crate::orchestrator::ToolEnvironment;
use crate::orchestrator::ToolError;
use crate::orchestrator::ToolOrchestrator;
use crate::process::OutputMode;
use crate::requirement::ExecApprovalRequest;
use crate::requirement::create_exec_approval_requirement_for_command;
use crate::shell_runtime::ShellRequest;
use crate::shell_runtime::ShellRuntime;

mod patch;
pub use patch::{PatchCall, PatchCallOutcome, PatchResult, ShellToolOutcome};

/// What a session is configured with.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The session id (audit log, hook input).
    pub session_id: String,
    /// The approval policy of every turn.
    pub approval_policy: AskForApproval,
    /// Who answers `NeedsApproval`.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Send every action to the automatic reviewer, `Skip` included (spec 06 step 2).
    pub strict_auto_review: bool,
    /// Where commands run: cwd, workspace roots, symbolic profile (spec 07 step 1).
    pub environment: ToolEnvironment,
    /// The commands' environment variables (after `[shell_environment_policy]`). Never
    /// written to the audit log.
    pub env: BTreeMap<String, String>,
    /// `[shell] extra_safe_commands`.
    pub extra_safe_commands: Vec<ExtraSafeCommand>,
    /// How local attempts are confined.
    pub sandbox: SandboxSettings,
    /// Whether command output is also streamed to this process's stdout / stderr.
    pub output: OutputMode,
    /// Where accepted prefix amendments are appended (`$AIRLOCK_HOME/rules/default.rules`);
    /// `None` = not persisted (with a warning).
    pub amendment_file: Option<PathBuf>,
    /// The audit log file; `None` = no audit log.
    pub audit_log: Option<PathBuf>,
    /// `[exec_policy] allow_rules_bypass_sandbox` (default `true`): `false` makes allow
    /// rules skip only the prompt, never the sandbox.
    pub allow_rules_bypass_sandbox: bool,
}

/// One shell tool call as the model (or `airlock exec`) proposes it.
#[derive(Debug, Clone, Default)]
pub struct ShellCall {
    /// The tool call id; empty = [`crate::new_call_id`] assigns a fresh one.
    pub call_id: String,
    /// The argv.
    pub command: Vec<String>,
    /// The working directory (relative → against the session's cwd); `None` = the session's.
    pub cwd: Option<PathBuf>,
    /// `use_default` or `require_escalated`.
    pub sandbox_permissions: SandboxPermissions,
    /// The model's justification, shown to reviewers.
    pub justification: Option<String>,
    /// A prefix rule the model proposes for later (`prefix_rule` tool argument).
    pub prefix_rule: Option<Vec<String>>,
}

/// The result of one shell call and its audit record.
#[derive(Debug)]
pub struct ShellCallOutcome {
    /// The output, or why it did not run / was denied.
    pub result: Result<ExecOutput, ToolError>,
    /// The audit record (also appended to the audit log when there is one).
    pub record: AuditRecord,
    /// Set when the record could not be appended.
    pub audit_error: Option<AuditError>,
}

/// One agent session (spec 07; spec 06 §Session).
#[derive(Debug)]
pub struct Session {
    options: SessionOptions,
    approvals: Arc<ApprovalSession>,
    /// The live exec policy (`None` when it failed to load: fail closed). Shared with the
    /// approval layer, which adds accepted amendments to it.
    policy: Option<Arc<RwLock<Policy>>>,
    policy_unavailable: Option<String>,
    /// While the policy is unavailable: the `forbidden` rules of the files that loaded,
    /// which still refuse their commands ([`crate::exec_policy_manager::requirement_while_unavailable`]).
    forbidding: Option<Policy>,
    warnings: Vec<String>,
    orchestrator: ToolOrchestrator,
    runtime: ShellRuntime,
    audit: Option<AuditLog>,
    /// The environment's profile materialised against its workspace roots and compiled
    /// (a pure function of the options, which never change): what every call's
    /// requirement is computed against.
    fs_policy: FileSystemSandboxPolicy,
}

impl Session {
    /// A session. `events` receives user prompts and warnings (`None`: nobody can answer,
    /// prompts routed to the user are denied, spec 10 fail closed).
    #[must_use]
    pub fn new(
        options: SessionOptions,
        approval_config: ApprovalConfig,
        exec_policy: ExecPolicyManager,
        events: Option<UnboundedSender<ApprovalEvent>>,
    ) -> Self {
        let mut warnings: Vec<String> = approval_config.warnings.clone();
        warnings.extend(exec_policy.warnings().iter().cloned());
        let (policy, policy_unavailable) = match exec_policy.state() {
            PolicyState::Loaded(policy) => (Some(Arc::new(RwLock::new(policy.clone()))), None),
            PolicyState::Unavailable { reason, .. } => (None, Some(reason.clone())),
        };
        let forbidding = match exec_policy.state() {
            PolicyState::Loaded(_) => None,
            PolicyState::Unavailable { forbidding, .. } => Some(forbidding.clone()),
        };
        let mut approvals =
            ApprovalSession::new(options.session_id.clone(), approval_config, events);
        if let Some(file) = &options.amendment_file {
            // With an unavailable policy the rule is still persisted, but the live policy
            // stays unavailable (fail closed until the files load again).
            let live = policy
                .clone()
                .unwrap_or_else(|| Arc::new(RwLock::new(Policy::empty())));
            approvals = approvals.with_amendment_target(AmendmentTarget::new(file.clone(), live));
        }
        let orchestrator = ToolOrchestrator::new(options.sandbox.clone());
        let runtime = ShellRuntime::new(options.sandbox.manager.clone(), options.output);
        let audit = options.audit_log.as_ref().map(AuditLog::new);
        let fs_policy =
            file_system_sandbox_policy(&materialize_project_roots_with_workspace_roots(
                &options.environment.permission_profile,
                &options.environment.workspace_roots,
            ));
        Self {
            fs_policy,
            options,
            approvals: Arc::new(approvals),
            policy,
            policy_unavailable,
            forbidding,
            warnings,
            orchestrator,
            runtime,
            audit,
        }
    }

    /// This session, running its shell calls on the exec-server of `client` (a remote
    /// environment, spec 09): the profile stays symbolic and the executor applies it.
    #[must_use]
    pub fn with_remote_environment(
        mut self,
        client: std::sync::Arc<crate::remote::ExecServerClient>,
    ) -> Self {
        self.runtime = self.runtime.with_remote(client);
        self
    }

    /// This session, starting bubblewrap itself where it can and keeping what it computed
    /// for each profile across calls (a long-running server, see
    /// [`ShellRuntime::with_launch_cache`]); what a command can change is still computed
    /// for every launch.
    #[must_use]
    pub fn with_launch_cache(mut self) -> Self {
        self.runtime = self.runtime.with_launch_cache();
        self
    }

    /// The approval layer (answer user prompts with its `submit_*` methods).
    #[must_use]
    pub const fn approvals(&self) -> &Arc<ApprovalSession> {
        &self.approvals
    }

    /// Problems found while setting up (config warnings, an exec policy that failed to load).
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Why the exec policy is unavailable, if it is (every command then needs approval).
    #[must_use]
    pub fn policy_unavailable(&self) -> Option<&str> {
        self.policy_unavailable.as_deref()
    }

    /// The options.
    #[must_use]
    pub const fn options(&self) -> &SessionOptions {
        &self.options
    }

    /// The audit log, if enabled.
    #[must_use]
    pub const fn audit_log(&self) -> Option<&AuditLog> {
        self.audit.as_ref()
    }

    /// Starts a turn with the session's policy and reviewer (the previous turn, if any, is
    /// interrupted).
    pub fn start_turn(&self, turn_id: impl Into<String>) -> Arc<ApprovalTurn> {
        self.approvals.start_turn(TurnSettings {
            turn_id: turn_id.into(),
            approval_policy: self.options.approval_policy,
            approvals_reviewer: self.options.approvals_reviewer,
            model: String::new(),
        })
    }

    /// Runs one shell call in `turn`: computes its requirement from the live exec policy
    /// (spec 03), runs it through [`ToolOrchestrator::run`] (spec 07), and appends the audit
    /// record (spec 10 §Audit log). An unusable argv is rejected without running anything. A
    /// call without an id gets a fresh one ([`crate::new_call_id`]).
    pub async fn exec(&self, turn: &ApprovalTurn, mut call: ShellCall) -> ShellCallOutcome {
        if call.call_id.is_empty() {
            call.call_id = crate::new_call_id();
        }
        let environment = &self.options.environment;
        let cwd = call
            .cwd
            .as_ref()
            .map_or_else(|| environment.cwd.clone(), |dir| environment.cwd.join(dir));
        let fs_policy = &self.fs_policy;
        let request = ExecApprovalRequest {
            command: &call.command,
            approval_policy: turn.settings().approval_policy,
            file_system_sandbox_policy: fs_policy,
            sandbox_permissions: call.sandbox_permissions,
            prefix_rule: call.prefix_rule.as_deref(),
            cwd: &cwd,
            extra_safe_commands: &self.options.extra_safe_commands,
        };
        let computed = {
            let guard = self
                .policy
                .as_ref()
                .map(|policy| policy.read().unwrap_or_else(PoisonError::into_inner));
            match (&guard, &self.forbidding) {
                (None, Some(forbidding)) => {
                    crate::exec_policy_manager::requirement_while_unavailable(forbidding, &request)
                }
                _ => create_exec_approval_requirement_for_command(guard.as_deref(), &request),
            }
        };
        let (result, trace, policy) = match computed {
            Err(error) => (
                Err(ToolError::rejected(error.to_string())),
                CallTrace::new(self.runtime_tool_name()),
                None,
            ),
            Ok(mut outcome) => {
                let review_ctx = crate::unsandboxed::ReviewContext {
                    cwd: &cwd,
                    env: &self.options.env,
                    fs_policy,
                    pins_git: true,
                };
                let escalation = call.sandbox_permissions.requests_sandbox_override();
                // A command that starts confined is reviewed only if it leaves the sandbox
                // (see `unsandboxed::DeferredReview`).
                let deferred_review = if crate::unsandboxed::leaves_by_requirement(
                    &outcome.requirement,
                    escalation,
                ) {
                    let review = crate::unsandboxed::review_command(&outcome.parsed, &review_ctx);
                    outcome.unsandboxed = crate::unsandboxed::apply_review(
                        &mut outcome.requirement,
                        review,
                        self.options.allow_rules_bypass_sandbox,
                        escalation,
                    );
                    None
                } else {
                    Some(crate::unsandboxed::DeferredReview::new(
                        &outcome.parsed,
                        &review_ctx,
                    ))
                };
                let mut evaluation = PolicyEvaluation::from_outcome(&outcome);
                let request = ShellRequest {
                    command: call.command.clone(),
                    cwd: cwd.clone(),
                    env: self.options.env.clone(),
                    environment_id: environment.environment_id.clone(),
                    sandbox_permissions: call.sandbox_permissions,
                    justification: call.justification.clone(),
                    requirement: outcome,
                    deferred_review,
                };
                let ctx = ToolCallContext {
                    approvals: &self.approvals,
                    turn,
                    call_id: &call.call_id,
                    environment,
                    strict_auto_review: self.options.strict_auto_review,
                };
                let run = self.orchestrator.run(&self.runtime, &request, &ctx).await;
                if let Some(review) = request
                    .deferred_review
                    .as_ref()
                    .and_then(crate::unsandboxed::DeferredReview::computed)
                {
                    evaluation.unsandboxed = review.clone();
                }
                (run.result, run.trace, Some(evaluation))
            }
        };
        let record = AuditRecord {
            time: audit_now(),
            session_id: self.approvals.session_id().to_owned(),
            turn_id: turn.turn_id().to_owned(),
            call_id: call.call_id,
            cwd,
            command: call.command,
            policy,
            amendment_file: (!trace.amendments.is_empty())
                .then(|| self.options.amendment_file.clone())
                .flatten(),
            outcome: CallOutcome::from_result(&result),
            trace,
        };
        let audit_error = self
            .audit
            .as_ref()
            .and_then(|audit| audit.append(&record).err());
        ShellCallOutcome {
            result,
            record,
            audit_error,
        }
    }

    /// Records a call whose program cannot be started at all (not found: 127, not
    /// executable: 126), found before policy and sandbox: it gets a call id (a fresh one
    /// when `call` has none) and an audit line like every other call (spec 10 §Audit log),
    /// with no policy evaluation and no attempts.
    pub fn record_unrunnable(
        &self,
        turn: &ApprovalTurn,
        mut call: ShellCall,
        exit_code: i32,
        message: String,
    ) -> (AuditRecord, Option<AuditError>) {
        if call.call_id.is_empty() {
            call.call_id = crate::new_call_id();
        }
        let environment = &self.options.environment;
        let cwd = call
            .cwd
            .as_ref()
            .map_or_else(|| environment.cwd.clone(), |dir| environment.cwd.join(dir));
        let record = AuditRecord {
            time: audit_now(),
            session_id: self.approvals.session_id().to_owned(),
            turn_id: turn.turn_id().to_owned(),
            call_id: call.call_id,
            cwd,
            command: call.command,
            policy: None,
            trace: CallTrace::new(self.runtime_tool_name()),
            amendment_file: None,
            outcome: CallOutcome::Unrunnable { exit_code, message },
        };
        let audit_error = self
            .audit
            .as_ref()
            .and_then(|audit| audit.append(&record).err());
        (record, audit_error)
    }

    fn runtime_tool_name(&self) -> &'static str {
        use crate::orchestrator::ToolRuntime;
        self.runtime.tool_name()
    }
}
