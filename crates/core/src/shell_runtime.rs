//! The local `shell` tool: one argv run to completion (spec 07 §Traits; reference §3 shell
//! runtime).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use airlock_approval::ApprovalAction;
use airlock_approval::ApprovalCategory;
use airlock_approval::CommandAction;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::SandboxPermissions;
use airlock_sandbox::ExecOutput;
use airlock_sandbox::SandboxManager;
use airlock_sandbox::SandboxTransformRequest;
use airlock_sandbox::is_likely_sandbox_denied;

use crate::orchestrator::Approvable;
use crate::orchestrator::SandboxAttempt;
use crate::orchestrator::Sandboxable;
use crate::orchestrator::ToolError;
use crate::orchestrator::ToolRuntime;
use crate::process::OutputMode;
use crate::process::spawn_and_collect;
use crate::remote::ExecServerClient;
use crate::requirement::PromptSource;
use crate::requirement::RequirementOutcome;

/// One `shell` call, with the requirement its handler computed (Codex's shell handler stores
/// the exec-policy manager's requirement in the request; spec 07 step 2).
#[derive(Debug, Clone)]
pub struct ShellRequest {
    /// The argv as proposed.
    pub command: Vec<String>,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// The command's environment (after `[shell_environment_policy]`).
    pub env: BTreeMap<String, String>,
    /// The environment id (`None` = local host).
    pub environment_id: Option<String>,
    /// The sandbox override the call asks for.
    pub sandbox_permissions: SandboxPermissions,
    /// The model's justification, if any.
    pub justification: Option<String>,
    /// The exec-policy requirement and what led to it.
    pub requirement: RequirementOutcome,
    /// For a command that starts confined: its review, computed if it comes to run outside
    /// the sandbox (then `requirement.unsandboxed` is empty); `None` when the review was
    /// made up front (see [`crate::unsandboxed::leaves_by_requirement`]).
    pub deferred_review: Option<crate::unsandboxed::DeferredReview>,
}

impl ShellRequest {
    /// The review of running this command outside the sandbox (computed now if it was
    /// deferred).
    #[must_use]
    pub fn unsandboxed_review(&self) -> &crate::unsandboxed::UnsandboxedReview {
        self.deferred_review.as_ref().map_or(
            &self.requirement.unsandboxed,
            crate::unsandboxed::DeferredReview::get,
        )
    }
}

/// The shell tool runtime: confines with the [`SandboxManager`] transform and runs the
/// launch as a child process.
/// With a remote environment ([`ShellRuntime::with_remote`]) the exec-server confines the
/// process itself and nothing is run locally (spec 09 §Client side).
///
/// With a launch cache ([`ShellRuntime::with_launch_cache`], a long-running server's
/// thread) bubblewrap is started by this process itself where the design allows, from
/// the per-profile values the cache keeps (see `airlock_sandbox::LaunchCache`); every
/// other launch goes through the `airlock linux-sandbox` helper.
#[derive(Debug, Clone, Default)]
pub struct ShellRuntime {
    manager: SandboxManager,
    output: OutputMode,
    remote: Option<Arc<ExecServerClient>>,
    #[cfg(target_os = "linux")]
    launch_cache: Option<Arc<airlock_sandbox::LaunchCache>>,
}

impl ShellRuntime {
    /// A runtime using `manager`; `output` says whether output is also streamed.
    #[must_use]
    pub const fn new(manager: SandboxManager, output: OutputMode) -> Self {
        Self {
            manager,
            output,
            remote: None,
            #[cfg(target_os = "linux")]
            launch_cache: None,
        }
    }

    /// This runtime, launching bubblewrap itself from a cache of what it computed for
    /// each profile before (a long-running server; no effect off Linux).
    #[must_use]
    pub fn with_launch_cache(self) -> Self {
        #[cfg(target_os = "linux")]
        {
            let mut this = self;
            this.launch_cache = Some(Arc::default());
            this
        }
        #[cfg(not(target_os = "linux"))]
        self
    }

    /// This runtime, running every command on the exec-server of `client` instead.
    #[must_use]
    pub fn with_remote(mut self, client: Arc<ExecServerClient>) -> Self {
        self.remote = Some(client);
        self
    }

    /// The remote environment's client, if commands run on an exec-server.
    #[must_use]
    pub fn remote(&self) -> Option<&Arc<ExecServerClient>> {
        self.remote.as_ref()
    }
}

impl Approvable<ShellRequest> for ShellRuntime {
    fn sandbox_permissions(&self, req: &ShellRequest) -> SandboxPermissions {
        req.sandbox_permissions
    }

    fn exec_approval_requirement(&self, req: &ShellRequest) -> Option<ExecApprovalRequirement> {
        Some(req.requirement.requirement.clone())
    }

    /// `rules` when every reason to ask is an exec-policy `prompt` rule, otherwise
    /// `sandbox_approval` (spec 03 edge case 13).
    fn approval_category(&self, req: &ShellRequest) -> ApprovalCategory {
        let causes = &req.requirement.prompt_causes;
        if !causes.is_empty()
            && causes
                .iter()
                .all(|cause| cause.source == PromptSource::Rule)
        {
            ApprovalCategory::Rules
        } else {
            ApprovalCategory::SandboxApproval
        }
    }

    fn unsandboxed_refusal(&self, req: &ShellRequest) -> Option<String> {
        req.unsandboxed_review().refused.clone()
    }

    fn approval_action(
        &self,
        req: &ShellRequest,
        call_id: &str,
    ) -> std::io::Result<ApprovalAction> {
        let mut action = CommandAction::new(call_id, req.command.clone(), req.cwd.clone());
        action.environment_id.clone_from(&req.environment_id);
        action.sandbox_permissions = req.sandbox_permissions;
        action.justification.clone_from(&req.justification);
        action.proposed_execpolicy_amendment = req
            .requirement
            .requirement
            .proposed_execpolicy_amendment()
            .cloned();
        Ok(ApprovalAction::Shell(action))
    }
}

impl Sandboxable<ShellRequest> for ShellRuntime {
    fn uses_executor_managed_process_sandbox(&self, _req: &ShellRequest) -> bool {
        self.remote.is_some()
    }
}

impl ToolRuntime<ShellRequest> for ShellRuntime {
    fn tool_name(&self) -> &'static str {
        "shell"
    }

    /// Transforms the command for `attempt.sandbox` (a failure starts nothing), spawns it,
    /// and reports a likely sandbox denial as [`ToolError::SandboxDenied`].
    async fn run(
        &self,
        req: &ShellRequest,
        attempt: &SandboxAttempt,
    ) -> Result<ExecOutput, ToolError> {
        if let Some(client) = &self.remote {
            return crate::remote::run_remote(client, req, attempt, self.output).await;
        }
        let mut env = req.env.clone();
        if attempt.sandbox == airlock_sandbox::SandboxType::None {
            // Outside the sandbox git is pinned to the repository the review checked
            // (`unsandboxed::git_pin`): no repository swapped in since is used.
            env.extend(req.unsandboxed_review().git_env.clone());
        }
        let request = attempt.transform_request(req.command.clone(), req.cwd.clone(), env, None);
        #[cfg(target_os = "linux")]
        if let Some(output) = self.run_direct(&request).await? {
            return denial_checked(attempt.sandbox, output);
        }
        let launch = self
            .manager
            .transform(request)
            .map_err(crate::orchestrator::ExecError::from)?;
        let output = spawn_and_collect(&launch, self.output).await?;
        denial_checked(launch.sandbox, output)
    }
}

/// `output`, or [`ToolError::SandboxDenied`] when it looks like a sandbox denial.
fn denial_checked(
    sandbox: airlock_sandbox::SandboxType,
    output: ExecOutput,
) -> Result<ExecOutput, ToolError> {
    if is_likely_sandbox_denied(sandbox, &output) {
        // Text and exit code only: the command could have printed them itself.
        return Err(ToolError::SandboxDenied {
            output,
            network: None,
            evidence: crate::orchestrator::DenialEvidence::OutputOnly,
        });
    }
    Ok(output)
}

#[cfg(target_os = "linux")]
impl ShellRuntime {
    /// Runs `request` with bubblewrap started by this process, when there is a launch
    /// cache and the launch needs no helper; `None` otherwise (nothing ran).
    async fn run_direct(
        &self,
        request: &SandboxTransformRequest,
    ) -> Result<Option<ExecOutput>, ToolError> {
        use crate::orchestrator::ExecError;
        let Some(cache) = &self.launch_cache else {
            return Ok(None);
        };
        if request.sandbox != airlock_sandbox::SandboxType::LinuxSeccomp {
            return Ok(None);
        }
        let status = airlock_sandbox::StatusPipe::open().map_err(|source| ExecError::Spawn {
            program: "bwrap".to_owned(),
            source,
        })?;
        let direct = match self
            .manager
            .transform_direct(request, cache, status.writer_fd())
        {
            Ok(Some(direct)) => direct,
            Ok(None) => return Ok(None),
            Err(airlock_sandbox::DirectTransformError::Transform(error)) => {
                return Err(ExecError::from(error).into());
            }
            Err(airlock_sandbox::DirectTransformError::Launch(error)) => {
                return Err(ExecError::SandboxSetup {
                    cause: error.to_string(),
                }
                .into());
            }
        };
        Ok(Some(
            crate::process::spawn_direct(direct, status, self.output).await?,
        ))
    }
}
