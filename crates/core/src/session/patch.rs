//! `Session::apply_patch`: one `apply_patch` call through pre-checks, verification, the safety
//! assessment and [`ToolOrchestrator::run`](crate::ToolOrchestrator::run) (spec 11).

use std::path::PathBuf;

use airlock_approval::ApprovalTurn;
use airlock_patch::ApplyPatchInvocation;
use airlock_patch::IMPLICIT_INVOCATION_MESSAGE;
use airlock_patch::VerifyError;
use airlock_patch::maybe_parse_apply_patch;
use airlock_patch::normalize_lexically;
use airlock_patch::parse_patch;
use airlock_patch::verify_patch;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_sandbox::ExecOutput;
use airlock_sandbox::get_platform_sandbox;

use super::Session;
use super::ShellCall;
use super::ShellCallOutcome;
use crate::apply_patch::PATCH_REJECTED_PREFIX;
use crate::apply_patch::PatchAuditRecord;
use crate::apply_patch::PatchEnding;
use crate::apply_patch::PatchEvents;
use crate::apply_patch::PatchFileRecord;
use crate::apply_patch::PatchPolicy;
use crate::apply_patch::PatchRequest;
use crate::apply_patch::PatchRuntime;
use crate::apply_patch::PolicyFiles;
use crate::apply_patch::assess_patch_safety;
use crate::apply_patch::named_paths;
use crate::apply_patch::real_paths_of;
use crate::apply_patch::refusal_before_reading;
use crate::audit::AuditError;
use crate::audit::CallOutcome;
use crate::audit::audit_now;
use crate::orchestrator::CallTrace;
use crate::orchestrator::ToolCallContext;
use crate::orchestrator::ToolError;

/// One `apply_patch` call (the CLI's, or one recognised in a shell-tool argv).
#[derive(Debug, Clone, Default)]
pub struct PatchCall {
    /// The tool call id.
    pub call_id: String,
    /// The patch text.
    pub patch: String,
    /// The directory relative paths resolve against (relative → against the session's cwd;
    /// the `cd DIR` of a shell-wrapped call); `None` = the session's cwd.
    pub workdir: Option<PathBuf>,
}

/// How an `apply_patch` call ended (spec 11 §Output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchResult {
    /// Applied: `stdout` is `Success. Updated the following files:` ….
    Applied {
        /// The child's output.
        output: ExecOutput,
        /// The sandbox blocked the first attempt and an approved retry ran without it.
        retried_without_sandbox: bool,
    },
    /// The patch did not apply (parse, match, verification or write failure); nothing changed
    /// unless the message says otherwise. CLI exit 1.
    Failed {
        /// The model-visible message (`apply_patch verification failed: …`, …).
        message: String,
    },
    /// Refused before anything was written: forbidden, denied, protected metadata, deny-read,
    /// empty patch, or no way to confine it. CLI exit 125.
    Refused {
        /// The model-visible reason.
        message: String,
        /// `true` for an abort (the turn is interrupted).
        interrupts_turn: bool,
    },
}

/// The result of one patch call and its audit record.
#[derive(Debug)]
pub struct PatchCallOutcome {
    /// How it ended.
    pub result: PatchResult,
    /// The audit record (also appended to the audit log when there is one).
    pub record: PatchAuditRecord,
    /// Set when the record could not be appended.
    pub audit_error: Option<AuditError>,
    /// `PatchApplyBegin` / `PatchApplyEnd` for the client (spec 11 §Output).
    pub events: PatchEvents,
}

/// What a shell-tool call turned out to be ([`Session::shell_tool`]).
#[derive(Debug)]
pub enum ShellToolOutcome {
    /// An ordinary command, run by [`Session::exec`].
    Command(ShellCallOutcome),
    /// An `apply_patch` call, run by [`Session::apply_patch`].
    Patch(PatchCallOutcome),
    /// A bare patch without the `apply_patch` command: refused with Codex's message (nothing
    /// ran, nothing was asked).
    ImplicitPatch {
        /// `patch detected without explicit call to apply_patch. ...`
        message: &'static str,
    },
}

fn refused(message: impl Into<String>) -> PatchResult {
    PatchResult::Refused {
        message: message.into(),
        interrupts_turn: false,
    }
}

impl Session {
    /// The shell tool's entry point (spec 11 §Where a patch comes from): an `apply_patch` /
    /// `applypatch` argv or a `bash -lc "[cd DIR && ]apply_patch <<'EOF' …"` script goes
    /// through [`Session::apply_patch`] (never runs as a command); a bare patch is refused;
    /// anything else is [`Session::exec`].
    pub async fn shell_tool(&self, turn: &ApprovalTurn, call: ShellCall) -> ShellToolOutcome {
        match maybe_parse_apply_patch(&call.command) {
            ApplyPatchInvocation::Patch { patch, workdir } => {
                let workdir = match (call.cwd, workdir) {
                    (Some(cwd), Some(dir)) => Some(cwd.join(dir)),
                    (cwd, dir) => dir.or(cwd),
                };
                ShellToolOutcome::Patch(
                    self.apply_patch(
                        turn,
                        PatchCall {
                            call_id: call.call_id,
                            patch,
                            workdir,
                        },
                    )
                    .await,
                )
            }
            ApplyPatchInvocation::Implicit => ShellToolOutcome::ImplicitPatch {
                message: IMPLICIT_INVOCATION_MESSAGE,
            },
            ApplyPatchInvocation::NotApplyPatch => {
                ShellToolOutcome::Command(self.exec(turn, call).await)
            }
        }
    }

    /// Runs one `apply_patch` call in `turn` (spec 11): parse; refuse protected metadata and
    /// deny-read paths before reading anything; verify against the files (new contents and
    /// diffs); assess (`Skip` / `NeedsApproval` / `Forbidden`); then
    /// [`ToolOrchestrator::run`](crate::ToolOrchestrator::run) with [`PatchRuntime`], whose
    /// sandboxed child applies the patch atomically. Appends the audit record (paths only).
    pub async fn apply_patch(&self, turn: &ApprovalTurn, call: PatchCall) -> PatchCallOutcome {
        let environment = &self.options.environment;
        let cwd = call.workdir.as_ref().map_or_else(
            || environment.cwd.clone(),
            |dir| normalize_lexically(&environment.cwd, dir),
        );
        let permissions = materialize_project_roots_with_workspace_roots(
            &environment.permission_profile,
            &environment.workspace_roots,
        );
        let fs_policy = file_system_sandbox_policy(&permissions);
        let policy = PatchPolicy {
            permissions: &permissions,
            fs_policy: &fs_policy,
            policy_cwd: &environment.cwd,
            workspace_roots: &environment.workspace_roots,
        };
        let mut trace = CallTrace::new("apply_patch");
        let mut files = Vec::new();
        let mut events = PatchEvents::default();
        let result = 'call: {
            let parsed = match parse_patch(&call.patch) {
                Ok(parsed) => parsed,
                Err(error) => {
                    break 'call PatchResult::Failed {
                        message: format!("apply_patch verification failed: {error}"),
                    };
                }
            };
            if parsed.hunks.is_empty() {
                break 'call refused(format!(
                    "{PATCH_REJECTED_PREFIX}{}",
                    VerifyError::EmptyPatch
                ));
            }
            if let Some(reason) = refusal_before_reading(&named_paths(&parsed, &cwd), &policy) {
                break 'call refused(format!("{PATCH_REJECTED_PREFIX}{reason}"));
            }
            // Read with the sandbox's view, never the parent's (the verifier must not be an
            // oracle for what the sandbox hides).
            let reader = PolicyFiles::new(&fs_policy, &environment.cwd);
            let verified = match verify_patch(&call.patch, &cwd, &reader) {
                Ok(verified) => verified,
                Err(error) => {
                    break 'call PatchResult::Failed {
                        message: format!("apply_patch verification failed: {error}"),
                    };
                }
            };
            files = PatchFileRecord::from_verified(&verified);
            // Where every path really leads, judged now and written exactly there (F6).
            let real_paths = match real_paths_of(&verified) {
                Ok(real_paths) => real_paths,
                Err(error) => {
                    break 'call refused(format!(
                        "{PATCH_REJECTED_PREFIX}refusing to write: {error}"
                    ));
                }
            };
            let platform_sandbox =
                get_platform_sandbox(self.options.sandbox.manager.windows_sandbox_enabled)
                    .is_some();
            let assessment = assess_patch_safety(
                &verified.affected_paths(),
                turn.settings().approval_policy,
                &policy,
                platform_sandbox,
            );
            let request = PatchRequest {
                verified,
                environment_id: environment.environment_id.clone(),
                requirement: assessment.requirement,
                extra_writable_dirs: assessment.extra_writable_dirs,
                env: self.options.env.clone(),
                real_paths,
            };
            let ctx = ToolCallContext {
                approvals: &self.approvals,
                turn,
                call_id: &call.call_id,
                environment,
                strict_auto_review: self.options.strict_auto_review,
            };
            let runtime = PatchRuntime::new(self.options.sandbox.manager.clone());
            let run = self.orchestrator.run(&runtime, &request, &ctx).await;
            trace = run.trace;
            let result = patch_result(run.result, &trace);
            events = PatchEvents::from_call(
                &call.call_id,
                turn.turn_id(),
                &request.file_changes(),
                &trace,
                ending_of(&result, &trace),
            );
            result
        };
        let record = PatchAuditRecord {
            time: audit_now(),
            session_id: self.approvals.session_id().to_owned(),
            turn_id: turn.turn_id().to_owned(),
            call_id: call.call_id,
            cwd,
            command: vec!["apply_patch".to_owned()],
            files,
            outcome: call_outcome(&result),
            trace,
        };
        let audit_error = self
            .audit
            .as_ref()
            .and_then(|audit| audit.append(&record).err());
        PatchCallOutcome {
            result,
            record,
            audit_error,
            events,
        }
    }
}

/// Which events a call that reached the orchestrator sends: `Ran` once an attempt ran,
/// `Declined` when a reviewer was asked and refused, nothing for a `Forbidden` requirement.
fn ending_of<'a>(result: &'a PatchResult, trace: &CallTrace) -> PatchEnding<'a> {
    let asked = trace
        .approvals
        .iter()
        .any(|approval| approval.source != airlock_approval::DecisionSource::Config);
    match result {
        _ if !trace.attempts.is_empty() => PatchEnding::Ran(match result {
            PatchResult::Applied { output, .. } => Ok(output.stdout.as_str()),
            PatchResult::Failed { message } | PatchResult::Refused { message, .. } => {
                Err(message.as_str())
            }
        }),
        PatchResult::Refused { message, .. } if asked => PatchEnding::Declined(message),
        _ => PatchEnding::Silent,
    }
}

fn patch_result(result: Result<ExecOutput, ToolError>, trace: &CallTrace) -> PatchResult {
    match result {
        Ok(output) if output.exit_code == 0 => PatchResult::Applied {
            output,
            retried_without_sandbox: trace.attempts.len() > 1,
        },
        Ok(output) => PatchResult::Failed {
            message: output.stderr.trim_end().to_owned(),
        },
        Err(ToolError::SandboxDenied { output, .. }) => {
            let why = trace
                .no_retry
                .map_or("", crate::orchestrator::NoRetryReason::describe);
            PatchResult::Failed {
                message: format!(
                    "the sandbox blocked the patch; not retried: {why}\n{}",
                    output.stderr.trim_end()
                ),
            }
        }
        Err(ToolError::Rejected {
            message,
            interrupts_turn,
        }) => PatchResult::Refused {
            message,
            interrupts_turn,
        },
        Err(error @ ToolError::Execution(_)) => refused(error.to_string()),
    }
}

fn call_outcome(result: &PatchResult) -> CallOutcome {
    match result {
        PatchResult::Applied { output, .. } => CallOutcome::Ran {
            exit_code: output.exit_code,
        },
        // Only the first line: the rest of a match error repeats the patch's lines, and the
        // audit log never holds file contents.
        PatchResult::Failed { message } => CallOutcome::Error {
            message: message.lines().next().unwrap_or_default().to_owned(),
        },
        PatchResult::Refused {
            message,
            interrupts_turn,
        } => CallOutcome::Rejected {
            message: message.clone(),
            interrupts_turn: *interrupts_turn,
        },
    }
}
