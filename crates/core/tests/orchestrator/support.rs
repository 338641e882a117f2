//! Scripted tool runtime, real hook / auto-review reviewers and run helpers shared by the
//! orchestrator tests.
#![allow(dead_code)]

pub use std::path::PathBuf;
pub use std::sync::Mutex;

pub use airlock_approval::ApprovalAction;
pub use airlock_approval::ApprovalConfig;
pub use airlock_approval::ApprovalSession;
pub use airlock_approval::CommandAction;
pub use airlock_approval::DecisionSource;
pub use airlock_approval::TurnSettings;
pub use airlock_core::orchestrator::Approvable;
pub use airlock_core::orchestrator::AttemptPhase;
pub use airlock_core::orchestrator::DenialEvidence;
pub use airlock_core::orchestrator::NetworkDenial;
pub use airlock_core::orchestrator::NoRetryReason;
pub use airlock_core::orchestrator::Sandboxable;
pub use airlock_core::orchestrator::ToolRuntime;
pub use airlock_core::{
    OrchestratorOutcome, SandboxAttempt, SandboxSettings, ToolCallContext, ToolEnvironment,
    ToolError, ToolOrchestrator,
};
pub use airlock_permissions::built_in_profile;
pub use airlock_protocol::{
    ApprovalsReviewer, AskForApproval, ExecApprovalRequirement, FileSystemAccessMode,
    FileSystemSandboxEntry, GranularApprovalConfig, ManagedFileSystemPermissions,
    NetworkApprovalContext, NetworkApprovalProtocol, PermissionProfile, ReviewDecision,
    SandboxPermissions,
};
pub use airlock_sandbox::{ExecOutput, SandboxType};
pub use tempfile::TempDir;

/// What the scripted runtime returns for one attempt.
#[derive(Clone, Debug)]
pub enum Scripted {
    Exit(i32),
    /// A denial Airlock observed itself (`DenialEvidence::Observed`).
    Denied,
    /// A denial inferred only from the command's output (`DenialEvidence::OutputOnly`).
    DeniedByOutput,
    NetworkDenied(Option<NetworkApprovalContext>),
}

pub struct FakeTool {
    pub requirement: Option<ExecApprovalRequirement>,
    pub sandbox_permissions: SandboxPermissions,
    pub escalate_on_failure: bool,
    pub first: Scripted,
    pub retry: Scripted,
    pub attempts: Mutex<Vec<SandboxAttempt>>,
}

impl FakeTool {
    pub fn new(requirement: Option<ExecApprovalRequirement>, first: Scripted) -> Self {
        Self {
            requirement,
            sandbox_permissions: SandboxPermissions::UseDefault,
            escalate_on_failure: true,
            first,
            retry: Scripted::Exit(0),
            attempts: Mutex::new(Vec::new()),
        }
    }

    pub fn attempts(&self) -> Vec<SandboxAttempt> {
        self.attempts.lock().unwrap().clone()
    }
}

pub struct Req;

impl Approvable<Req> for FakeTool {
    fn sandbox_permissions(&self, _req: &Req) -> SandboxPermissions {
        self.sandbox_permissions
    }

    fn exec_approval_requirement(&self, _req: &Req) -> Option<ExecApprovalRequirement> {
        self.requirement.clone()
    }

    fn approval_action(&self, _req: &Req, call_id: &str) -> std::io::Result<ApprovalAction> {
        Ok(ApprovalAction::Shell(CommandAction::new(
            call_id,
            vec!["touch".to_owned(), "/elsewhere/file".to_owned()],
            "/work",
        )))
    }
}

impl Sandboxable<Req> for FakeTool {
    fn escalate_on_failure(&self) -> bool {
        self.escalate_on_failure
    }
}

impl ToolRuntime<Req> for FakeTool {
    fn tool_name(&self) -> &'static str {
        "fake"
    }

    async fn run(&self, _req: &Req, attempt: &SandboxAttempt) -> Result<ExecOutput, ToolError> {
        self.attempts.lock().unwrap().push(attempt.clone());
        let scripted = match attempt.phase {
            AttemptPhase::First => &self.first,
            AttemptPhase::Retry => &self.retry,
        };
        let output = |exit_code| ExecOutput {
            exit_code,
            stdout: String::new(),
            stderr: "touch: cannot touch '/elsewhere/file': Read-only file system\n".to_owned(),
            ..ExecOutput::default()
        };
        match scripted {
            Scripted::Exit(code) => Ok(output(*code)),
            Scripted::Denied => Err(ToolError::SandboxDenied {
                output: output(1),
                network: None,
                evidence: DenialEvidence::Observed,
            }),
            Scripted::DeniedByOutput => Err(ToolError::SandboxDenied {
                output: output(1),
                network: None,
                evidence: DenialEvidence::OutputOnly,
            }),
            Scripted::NetworkDenied(context) => Err(ToolError::SandboxDenied {
                output: output(1),
                network: Some(NetworkDenial {
                    context: context.clone(),
                }),
                evidence: DenialEvidence::Observed,
            }),
        }
    }
}

/// Scripted reviewers: a hook and an automatic reviewer that log each request and answer
/// with a fixed behaviour.
pub struct Reviewers {
    pub dir: TempDir,
}

impl Reviewers {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn log(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.log"))
    }

    /// Requests a reviewer received, one JSON object per line.
    pub fn requests(&self, name: &str) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.log(name))
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// A hook answering `behavior` (`allow`, `deny`) or nothing (`none`).
    pub fn hook(&self, behavior: &str) -> String {
        let script = self.dir.path().join("hook.sh");
        let answer = match behavior {
            "none" => String::new(),
            other => format!(
                "echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{{\"behavior\":\"{other}\"}}}}}}'"
            ),
        };
        std::fs::write(
            &script,
            format!(
                "tr -d '\\n' >> '{}'\necho >> '{}'\n{answer}\n",
                self.log("hook").display(),
                self.log("hook").display()
            ),
        )
        .unwrap();
        format!(
            "[[hooks.permission_request]]\nmatcher = \"*\"\ncommand = \"sh '{}'\"\ntimeout = 10\n",
            script.display()
        )
    }

    /// A `PreToolUse` hook (issue 18 item 7) that logs each call and answers `answer`:
    /// `deny-json` (permissionDecision deny), `deny-exit2` (exit 2 with a reason),
    /// `allow-json` (unsupported: ignored), `fail` (exit 1) or `none`.
    pub fn pre_tool_use(&self, answer: &str) -> String {
        let script = self.dir.path().join("pre.sh");
        let answer = match answer {
            "deny-json" => "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no pushes on Fridays\"}}'".to_owned(),
            "deny-exit2" => "echo 'blocked by policy script' >&2\nexit 2".to_owned(),
            "allow-json" => "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'".to_owned(),
            "fail" => "exit 1".to_owned(),
            _ => String::new(),
        };
        std::fs::write(
            &script,
            format!(
                "tr -d '\\n' >> '{log}'\necho >> '{log}'\n{answer}\n",
                log = self.log("pre").display()
            ),
        )
        .unwrap();
        format!(
            "[[hooks.pre_tool_use]]\nmatcher = \"^Bash$\"\ncommand = \"sh '{}'\"\ntimeout = 10\n",
            script.display()
        )
    }

    /// A hook that allows the first request it receives and denies every later one (the
    /// retry's), logging each like [`Reviewers::hook`].
    pub fn hook_allow_first_deny_retry(&self) -> String {
        let script = self.dir.path().join("hook.sh");
        let answer = |behavior: &str| {
            format!(
                "echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{{\"behavior\":\"{behavior}\"}}}}}}'"
            )
        };
        std::fs::write(
            &script,
            format!(
                "seen=$(cat '{log}' 2>/dev/null | wc -l)\ntr -d '\\n' >> '{log}'\necho >> '{log}'\nif [ \"$seen\" -eq 0 ]; then {allow}; else {deny}; fi\n",
                log = self.log("hook").display(),
                deny = answer("deny"),
                allow = answer("allow"),
            ),
        )
        .unwrap();
        format!(
            "[[hooks.permission_request]]\nmatcher = \"*\"\ncommand = \"sh '{}'\"\ntimeout = 10\n",
            script.display()
        )
    }

    /// An automatic reviewer answering `outcome` (`allow`, `deny`).
    pub fn auto_review(&self, outcome: &str) -> String {
        let script = self.dir.path().join("review.sh");
        std::fs::write(
            &script,
            format!(
                "tr -d '\\n' >> '{log}'\necho >> '{log}'\necho '{{\"outcome\":\"{outcome}\",\"rationale\":\"scripted\"}}'\n",
                log = self.log("review").display()
            ),
        )
        .unwrap();
        format!(
            "[auto_review]\ncommand = [\"sh\", \"{}\"]\ntimeout_secs = 10\n",
            script.display()
        )
    }
}

pub fn config(text: &str) -> ApprovalConfig {
    let table: toml::Table = text.parse().unwrap();
    ApprovalConfig::from_config_table(&table, "test config.toml", None).unwrap()
}

pub fn workspace_profile() -> PermissionProfile {
    built_in_profile(":workspace").unwrap()
}

/// `:workspace` plus a deny-read entry (spec README invariant 2).
pub fn deny_read_profile() -> PermissionProfile {
    let mut profile = workspace_profile();
    if let PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted { entries, .. },
        ..
    } = &mut profile
    {
        entries.push(FileSystemSandboxEntry::path(
            "/work/secrets",
            FileSystemAccessMode::Deny,
        ));
    }
    profile
}

pub fn environment(profile: PermissionProfile) -> ToolEnvironment {
    ToolEnvironment {
        environment_id: None,
        cwd: PathBuf::from("/work"),
        workspace_roots: vec![PathBuf::from("/work")],
        permission_profile: profile,
    }
}

pub struct Run {
    pub policy: AskForApproval,
    pub profile: PermissionProfile,
    pub strict: bool,
    pub approval_config: ApprovalConfig,
    pub reviewer: ApprovalsReviewer,
}

impl Run {
    pub fn new(policy: AskForApproval, approval_config: ApprovalConfig) -> Self {
        Self {
            policy,
            profile: workspace_profile(),
            strict: false,
            approval_config,
            reviewer: ApprovalsReviewer::User,
        }
    }

    pub async fn go(self, tool: &FakeTool) -> OrchestratorOutcome {
        let approvals = ApprovalSession::new("session-1", self.approval_config, None);
        let turn = approvals.start_turn(TurnSettings {
            turn_id: "turn-1".to_owned(),
            approval_policy: self.policy,
            approvals_reviewer: self.reviewer,
            model: String::new(),
        });
        let environment = environment(self.profile);
        let ctx = ToolCallContext {
            approvals: &approvals,
            turn: &turn,
            call_id: "call-1",
            environment: &environment,
            strict_auto_review: self.strict,
        };
        let orchestrator = ToolOrchestrator::new(SandboxSettings {
            linux_helper: Some(PathBuf::from("/usr/bin/airlock")),
            ..SandboxSettings::default()
        });
        orchestrator.run(tool, &Req, &ctx).await
    }
}

pub fn needs_approval() -> Option<ExecApprovalRequirement> {
    Some(ExecApprovalRequirement::NeedsApproval {
        reason: Some("rule says ask".to_owned()),
        proposed_execpolicy_amendment: None,
    })
}

pub fn skip(bypass_sandbox: bool) -> Option<ExecApprovalRequirement> {
    Some(ExecApprovalRequirement::Skip {
        bypass_sandbox,
        proposed_execpolicy_amendment: None,
    })
}

pub fn platform_sandbox() -> SandboxType {
    airlock_sandbox::get_platform_sandbox(false).unwrap_or(SandboxType::None)
}

pub fn sources(outcome: &OrchestratorOutcome) -> Vec<(AttemptPhase, DecisionSource)> {
    outcome
        .trace
        .approvals
        .iter()
        .map(|a| (a.phase, a.source))
        .collect()
}
