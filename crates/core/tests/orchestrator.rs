#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `ToolOrchestrator::run` step by step (spec 07 §Algorithm) with a scripted tool runtime:
//! the runtime records every attempt it is given and returns scripted results, and the
//! reviewers are real hook / automatic-review scripts run by the approval layer. No process
//! is confined here (the end-to-end tests under the real sandbox are in `crates/cli/tests`).

use std::path::PathBuf;
use std::sync::Mutex;

use airlock_approval::ApprovalAction;
use airlock_approval::ApprovalConfig;
use airlock_approval::ApprovalSession;
use airlock_approval::CommandAction;
use airlock_approval::DecisionSource;
use airlock_approval::TurnSettings;
use airlock_core::orchestrator::Approvable;
use airlock_core::orchestrator::AttemptPhase;
use airlock_core::orchestrator::NetworkDenial;
use airlock_core::orchestrator::NoRetryReason;
use airlock_core::orchestrator::Sandboxable;
use airlock_core::orchestrator::ToolRuntime;
use airlock_core::{
    OrchestratorOutcome, SandboxAttempt, SandboxSettings, ToolCallContext, ToolEnvironment,
    ToolError, ToolOrchestrator,
};
use airlock_permissions::built_in_profile;
use airlock_protocol::{
    ApprovalsReviewer, AskForApproval, ExecApprovalRequirement, FileSystemAccessMode,
    FileSystemSandboxEntry, GranularApprovalConfig, ManagedFileSystemPermissions,
    NetworkApprovalContext, NetworkApprovalProtocol, PermissionProfile, ReviewDecision,
    SandboxPermissions,
};
use airlock_sandbox::{ExecOutput, SandboxType};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

/// What the scripted runtime returns for one attempt.
#[derive(Clone, Debug)]
enum Scripted {
    Exit(i32),
    Denied,
    NetworkDenied(Option<NetworkApprovalContext>),
}

struct FakeTool {
    requirement: Option<ExecApprovalRequirement>,
    sandbox_permissions: SandboxPermissions,
    escalate_on_failure: bool,
    first: Scripted,
    retry: Scripted,
    attempts: Mutex<Vec<SandboxAttempt>>,
}

impl FakeTool {
    fn new(requirement: Option<ExecApprovalRequirement>, first: Scripted) -> Self {
        Self {
            requirement,
            sandbox_permissions: SandboxPermissions::UseDefault,
            escalate_on_failure: true,
            first,
            retry: Scripted::Exit(0),
            attempts: Mutex::new(Vec::new()),
        }
    }

    fn attempts(&self) -> Vec<SandboxAttempt> {
        self.attempts.lock().unwrap().clone()
    }
}

struct Req;

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
        };
        match scripted {
            Scripted::Exit(code) => Ok(output(*code)),
            Scripted::Denied => Err(ToolError::SandboxDenied {
                output: output(1),
                network: None,
            }),
            Scripted::NetworkDenied(context) => Err(ToolError::SandboxDenied {
                output: output(1),
                network: Some(NetworkDenial {
                    context: context.clone(),
                }),
            }),
        }
    }
}

/// Scripted reviewers: a hook and an automatic reviewer that log each request and answer
/// with a fixed behaviour.
struct Reviewers {
    dir: TempDir,
}

impl Reviewers {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn log(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.log"))
    }

    /// Requests a reviewer received, one JSON object per line.
    fn requests(&self, name: &str) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.log(name))
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// A hook answering `behavior` (`allow`, `deny`) or nothing (`none`).
    fn hook(&self, behavior: &str) -> String {
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

    /// An automatic reviewer answering `outcome` (`allow`, `deny`).
    fn auto_review(&self, outcome: &str) -> String {
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

fn config(text: &str) -> ApprovalConfig {
    let table: toml::Table = text.parse().unwrap();
    ApprovalConfig::from_config_table(&table, "test config.toml", None).unwrap()
}

fn workspace_profile() -> PermissionProfile {
    built_in_profile(":workspace").unwrap()
}

/// `:workspace` plus a deny-read entry (spec README invariant 2).
fn deny_read_profile() -> PermissionProfile {
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

fn environment(profile: PermissionProfile) -> ToolEnvironment {
    ToolEnvironment {
        environment_id: None,
        cwd: PathBuf::from("/work"),
        workspace_roots: vec![PathBuf::from("/work")],
        permission_profile: profile,
    }
}

struct Run {
    policy: AskForApproval,
    profile: PermissionProfile,
    strict: bool,
    approval_config: ApprovalConfig,
    reviewer: ApprovalsReviewer,
}

impl Run {
    fn new(policy: AskForApproval, approval_config: ApprovalConfig) -> Self {
        Self {
            policy,
            profile: workspace_profile(),
            strict: false,
            approval_config,
            reviewer: ApprovalsReviewer::User,
        }
    }

    async fn go(self, tool: &FakeTool) -> OrchestratorOutcome {
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

fn needs_approval() -> Option<ExecApprovalRequirement> {
    Some(ExecApprovalRequirement::NeedsApproval {
        reason: Some("rule says ask".to_owned()),
        proposed_execpolicy_amendment: None,
    })
}

fn skip(bypass_sandbox: bool) -> Option<ExecApprovalRequirement> {
    Some(ExecApprovalRequirement::Skip {
        bypass_sandbox,
        proposed_execpolicy_amendment: None,
    })
}

fn platform_sandbox() -> SandboxType {
    airlock_sandbox::get_platform_sandbox(false).unwrap_or(SandboxType::None)
}

fn sources(outcome: &OrchestratorOutcome) -> Vec<(AttemptPhase, DecisionSource)> {
    outcome
        .trace
        .approvals
        .iter()
        .map(|a| (a.phase, a.source))
        .collect()
}

#[tokio::test]
async fn forbidden_runs_nothing_and_asks_nobody() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(
        Some(ExecApprovalRequirement::Forbidden {
            reason: "blocked by rule".to_owned(),
        }),
        Scripted::Exit(0),
    );
    let outcome = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert!(matches!(
        &outcome.result,
        Err(ToolError::Rejected { message, interrupts_turn: false }) if message == "blocked by rule"
    ));
    assert!(tool.attempts().is_empty());
    assert!(reviewers.requests("hook").is_empty());
    assert!(outcome.trace.approvals.is_empty());
}

/// Scenario row 1: restricted filesystem + `on-request` → the default requirement is
/// `NeedsApproval`; the attempt is sandboxed (`sandbox_requested = true`).
#[tokio::test]
async fn default_requirement_on_request_restricted_needs_approval_and_sandboxes() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(None, Scripted::Exit(0));
    let outcome = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert_eq!(outcome.result.as_ref().unwrap().exit_code, 0);
    assert_eq!(
        outcome.trace.requirement,
        Some(ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_execpolicy_amendment: None
        })
    );
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Hook)]
    );
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 1);
    assert!(attempts[0].sandbox_requested);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
}

/// Scenario row 2: `never` + restricted → `Skip { bypass_sandbox: false }`, nobody asked,
/// the restricted attempt still runs sandboxed; a denial is returned (never retried).
#[tokio::test]
async fn never_skips_approval_but_keeps_the_sandbox() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(None, Scripted::Denied);
    let outcome = Run::new(AskForApproval::Never, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert_eq!(
        outcome.trace.requirement,
        skip(false),
        "the default requirement under never"
    );
    assert!(matches!(
        outcome.result,
        Err(ToolError::SandboxDenied { .. })
    ));
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::PolicyDisallowsUnsandboxedApproval)
    );
    assert!(reviewers.requests("hook").is_empty());
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 1);
    assert!(attempts[0].sandbox_requested);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Config)]
    );
}

/// Scenario row 3: exec-policy allow on every segment → the first attempt bypasses the
/// sandbox, unless a deny-read entry exists.
#[tokio::test]
async fn explicit_allow_bypasses_the_sandbox_unless_reads_are_denied() {
    let tool = FakeTool::new(skip(true), Scripted::Exit(0));
    Run::new(AskForApproval::OnRequest, ApprovalConfig::default())
        .go(&tool)
        .await
        .result
        .unwrap();
    let attempt = &tool.attempts()[0];
    assert_eq!(attempt.sandbox, SandboxType::None);
    assert!(!attempt.sandbox_requested);

    let tool = FakeTool::new(skip(true), Scripted::Exit(0));
    let mut run = Run::new(AskForApproval::OnRequest, ApprovalConfig::default());
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    assert_eq!(
        outcome.trace.first_attempt_override,
        Some(airlock_core::SandboxOverride::NoOverride)
    );
    let attempt = &tool.attempts()[0];
    assert_eq!(attempt.sandbox, platform_sandbox());
    assert!(attempt.sandbox_requested);
}

/// Scenario row 4: escalation requested + deny-read → approved, but the override is forced
/// back to `NoOverride`: the filesystem sandbox is kept.
#[tokio::test]
async fn escalation_with_deny_read_keeps_the_filesystem_sandbox() {
    let reviewers = Reviewers::new();
    let mut tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    tool.sandbox_permissions = SandboxPermissions::RequireEscalated;
    let mut run = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")));
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert_eq!(reviewers.requests("hook").len(), 1, "approved once");
    assert_eq!(tool.attempts()[0].sandbox, platform_sandbox());

    // Without deny-read the same approved escalation runs unsandboxed.
    let mut tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    tool.sandbox_permissions = SandboxPermissions::RequireEscalated;
    Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await
        .result
        .unwrap();
    assert_eq!(tool.attempts()[0].sandbox, SandboxType::None);
}

/// Scenario row 5: `External` profile → no prompt for filesystem limits under `on-request`,
/// no outer sandbox, and `sandbox_requested = false`.
#[tokio::test]
async fn external_profile_adds_no_outer_sandbox_and_no_prompt() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(None, Scripted::Exit(0));
    let mut run = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("deny")));
    run.profile = built_in_profile(":external-sandbox").unwrap();
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert_eq!(outcome.trace.requirement, skip(false));
    assert!(reviewers.requests("hook").is_empty());
    let attempt = &tool.attempts()[0];
    assert_eq!(attempt.sandbox, SandboxType::None);
    assert!(!attempt.sandbox_requested);
    assert!(matches!(
        attempt.permissions,
        PermissionProfile::External { .. }
    ));
}

/// Scenario row 6 under `untrusted`: the approved command is denied by the sandbox, and the
/// retry runs without the sandbox without asking again (it was already approved).
#[tokio::test]
async fn untrusted_denial_retries_unsandboxed_without_asking_again() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Denied);
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    )
    .go(&tool)
    .await;
    assert_eq!(outcome.result.as_ref().unwrap().exit_code, 0);
    assert_eq!(reviewers.requests("hook").len(), 1);
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
    assert_eq!(attempts[1].phase, AttemptPhase::Retry);
    assert_eq!(attempts[1].sandbox, SandboxType::None);
    assert!(!attempts[1].sandbox_requested);
    assert_eq!(
        outcome.trace.retry_reason.as_deref(),
        Some(
            "command failed in the sandbox; retry without sandbox? (touch: cannot touch '/elsewhere/file': Read-only file system)"
        )
    );
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Hook)]
    );
}

/// Under `untrusted`, a command that needed no approval (`Skip`) is asked about before the
/// unsandboxed retry; the hook sees the retry id and a denial ends the call.
#[tokio::test]
async fn untrusted_skip_asks_before_the_unsandboxed_retry() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("deny")),
    )
    .go(&tool)
    .await;
    assert!(matches!(
        &outcome.result,
        Err(ToolError::Rejected { message, .. }) if message == "PermissionRequest hook denied approval"
    ));
    assert_eq!(tool.attempts().len(), 1, "the retry never ran");
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::Config),
            (AttemptPhase::Retry, DecisionSource::Hook)
        ]
    );
    assert_eq!(reviewers.requests("hook").len(), 1);
}

/// Scenario row 6 under `on-request`: the denial is returned, no retry, nobody asked.
#[tokio::test]
async fn on_request_returns_the_denial_without_retry() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Denied);
    let outcome = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert!(matches!(
        outcome.result,
        Err(ToolError::SandboxDenied { .. })
    ));
    assert_eq!(tool.attempts().len(), 1);
    assert_eq!(
        reviewers.requests("hook").len(),
        1,
        "only the first approval"
    );
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::PolicyDisallowsUnsandboxedApproval)
    );
}

/// Deny-read is sticky: even under `untrusted` nothing is retried without the sandbox.
#[tokio::test]
async fn deny_read_is_never_retried_unsandboxed() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Denied);
    let mut run = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    );
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    assert!(matches!(
        outcome.result,
        Err(ToolError::SandboxDenied { .. })
    ));
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::DenyReadIsSticky)
    );
    let attempts = tool.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].sandbox, platform_sandbox());
}

/// Granular: the retry follows `sandbox_approval` — with `false` the denial is returned, with
/// `true` the retry of a command nobody approved yet is asked about first.
#[tokio::test]
async fn granular_sandbox_approval_switch_governs_the_retry() {
    let granular = |sandbox_approval| {
        AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval,
            rules: true,
            skill_approval: false,
            request_permissions: false,
            mcp_elicitations: false,
        })
    };
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let outcome = Run::new(granular(false), config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::PolicyDisallowsUnsandboxedApproval)
    );
    assert!(reviewers.requests("hook").is_empty());
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let outcome = Run::new(granular(true), config(&reviewers.hook("allow")))
        .go(&tool)
        .await;
    outcome.result.as_ref().unwrap();
    assert_eq!(tool.attempts().len(), 2);
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::Config),
            (AttemptPhase::Retry, DecisionSource::Hook)
        ]
    );
}

/// Strict auto review: a `Skip` is still reviewed, and the unsandboxed retry is reviewed
/// again (spec README invariant 7) even though the first review approved.
#[tokio::test]
async fn strict_auto_review_covers_skip_and_is_never_reused_for_the_retry() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(skip(false), Scripted::Denied);
    let mut run = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.auto_review("allow")),
    );
    run.strict = true;
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    let requests = reviewers.requests("review");
    assert_eq!(requests.len(), 2, "first attempt and retry: {requests:#?}");
    assert!(requests[0].get("retry_reason").is_none());
    assert!(requests[1]["retry_reason"].is_string());
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::AutoReview),
            (AttemptPhase::Retry, DecisionSource::AutoReview)
        ]
    );
}

/// Hooks first: a hook allow is final even under strict auto review (invariant 6).
#[tokio::test]
async fn hook_allow_beats_strict_auto_review() {
    let reviewers = Reviewers::new();
    let text = format!(
        "{}{}",
        reviewers.hook("allow"),
        reviewers.auto_review("deny")
    );
    let tool = FakeTool::new(skip(false), Scripted::Exit(0));
    let mut run = Run::new(AskForApproval::OnRequest, config(&text));
    run.strict = true;
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert!(reviewers.requests("review").is_empty());
    assert_eq!(
        sources(&outcome),
        vec![(AttemptPhase::First, DecisionSource::Hook)]
    );
}

/// A denial from the automatic reviewer ends the call with its text; the turn goes on.
#[tokio::test]
async fn auto_review_denial_is_a_rejection_that_does_not_interrupt() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    let mut run = Run::new(
        AskForApproval::OnRequest,
        config(&reviewers.auto_review("deny")),
    );
    run.reviewer = ApprovalsReviewer::AutoReview;
    let outcome = run.go(&tool).await;
    assert!(matches!(
        outcome.result,
        Err(ToolError::Rejected {
            interrupts_turn: false,
            ..
        })
    ));
    assert!(tool.attempts().is_empty());
}

/// Network denials (spec 07 step 6): without an approvable context they are returned; with
/// one, under `on-request` and a restricted filesystem, the retry asks again with the host
/// in the reason — and with deny-read the retry keeps the filesystem sandbox.
#[tokio::test]
async fn network_denials_follow_step_six() {
    let reviewers = Reviewers::new();
    let tool = FakeTool::new(needs_approval(), Scripted::NetworkDenied(None));
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    )
    .go(&tool)
    .await;
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::NetworkDecisionWithoutContext)
    );

    let context = NetworkApprovalContext {
        host: "example.com".to_owned(),
        protocol: NetworkApprovalProtocol::Https,
    };
    let tool = FakeTool::new(
        needs_approval(),
        Scripted::NetworkDenied(Some(context.clone())),
    );
    let mut run = Run::new(AskForApproval::OnRequest, config(&reviewers.hook("allow")));
    run.profile = deny_read_profile();
    let outcome = run.go(&tool).await;
    outcome.result.as_ref().unwrap();
    assert_eq!(
        outcome.trace.retry_reason.as_deref(),
        Some("Network access to \"example.com\" is blocked by policy.")
    );
    assert_eq!(
        sources(&outcome),
        vec![
            (AttemptPhase::First, DecisionSource::Hook),
            (AttemptPhase::Retry, DecisionSource::Hook)
        ],
        "a network retry is always asked again"
    );
    let attempts = tool.attempts();
    assert_eq!(
        attempts[1].sandbox,
        platform_sandbox(),
        "deny-read keeps it"
    );
}

/// A tool that does not escalate on failure returns the denial.
#[tokio::test]
async fn a_tool_without_escalation_returns_the_denial() {
    let mut tool = FakeTool::new(needs_approval(), Scripted::Denied);
    tool.escalate_on_failure = false;
    let reviewers = Reviewers::new();
    let outcome = Run::new(
        AskForApproval::UnlessTrusted,
        config(&reviewers.hook("allow")),
    )
    .go(&tool)
    .await;
    assert_eq!(
        outcome.trace.no_retry,
        Some(NoRetryReason::ToolDoesNotEscalate)
    );
}

/// Abort interrupts the turn: the call is rejected with `interrupts_turn` and later
/// requests of the turn are aborted at once (spec README invariant 8). Here nobody can
/// answer because the event channel is closed.
#[tokio::test]
async fn abort_interrupts_the_turn() {
    let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
    drop(events_rx);
    let approvals = ApprovalSession::new("s", ApprovalConfig::default(), Some(events_tx));
    let turn = approvals.start_turn(TurnSettings {
        turn_id: "t".to_owned(),
        approval_policy: AskForApproval::OnRequest,
        approvals_reviewer: ApprovalsReviewer::User,
        model: String::new(),
    });
    let environment = environment(workspace_profile());
    let ctx = ToolCallContext {
        approvals: &approvals,
        turn: &turn,
        call_id: "call-1",
        environment: &environment,
        strict_auto_review: false,
    };
    let tool = FakeTool::new(needs_approval(), Scripted::Exit(0));
    let outcome = ToolOrchestrator::default().run(&tool, &Req, &ctx).await;
    assert!(matches!(
        &outcome.result,
        Err(ToolError::Rejected { message, interrupts_turn: true }) if message == "approval request aborted"
    ));
    assert!(turn.is_interrupted());
    assert_eq!(outcome.trace.approvals[0].decision, ReviewDecision::Abort);
    assert!(tool.attempts().is_empty());
}

#[test]
fn retry_reason_quotes_the_last_line_of_output() {
    let output = ExecOutput {
        exit_code: 1,
        stdout: "x".repeat(10),
        stderr: format!("first\n{}\n\n", "y".repeat(300)),
    };
    let reason = airlock_core::orchestrator::sandbox_retry_reason(&output);
    assert_eq!(
        reason,
        format!(
            "command failed in the sandbox; retry without sandbox? ({}…)",
            "y".repeat(200)
        )
    );
    let silent = ExecOutput {
        exit_code: 159,
        ..ExecOutput::default()
    };
    assert_eq!(
        airlock_core::orchestrator::sandbox_retry_reason(&silent),
        "command failed in the sandbox (exit code 159); retry without sandbox?"
    );
}
