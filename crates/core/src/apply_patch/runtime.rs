//! The `apply_patch` tool runtime: the patch is applied by a sandboxed child `airlock` process
//! through [`ToolOrchestrator::run`](crate::ToolOrchestrator::run), so denial → re-approval →
//! retry works as for commands (spec 11 §Enforcement; reference §A7).

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_approval::ApprovalAction;
use airlock_approval::FileChange;
use airlock_approval::PatchAction;
use airlock_patch::ChangeKind;
use airlock_patch::VerifiedPatch;
use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPermissions;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_sandbox::ExecOutput;
use airlock_sandbox::SandboxManager;
use airlock_sandbox::SandboxType;
use airlock_sandbox::is_likely_sandbox_denied;

use super::helper::APPLY_PATCH_HELPER_SUBCOMMAND;
use super::helper::HelperRequest;
use crate::orchestrator::Approvable;
use crate::orchestrator::ExecError;
use crate::orchestrator::SandboxAttempt;
use crate::orchestrator::Sandboxable;
use crate::orchestrator::ToolError;
use crate::orchestrator::ToolRuntime;

/// Environment variables the child keeps (reference §A7: the fs helper's environment).
const CHILD_ENV: [&str; 4] = ["PATH", "TMPDIR", "TMP", "TEMP"];

/// One verified `apply_patch` call and its assessment.
#[derive(Debug, Clone)]
pub struct PatchRequest {
    /// The verified patch (its cwd is the patch's working directory).
    pub verified: VerifiedPatch,
    /// The environment id (`None` = local host).
    pub environment_id: Option<String>,
    /// From [`assess_patch_safety`](super::assess_patch_safety).
    pub requirement: ExecApprovalRequirement,
    /// Directories added as writable for an approved outside write (still sandboxed).
    pub extra_writable_dirs: Vec<PathBuf>,
    /// The session's environment; the child gets only `PATH`, `TMPDIR`, `TMP`, `TEMP`.
    pub env: BTreeMap<String, String>,
    /// Where each affected path really leads, as judged before approval
    /// ([`real_paths_of`](super::real_paths_of)); the child writes exactly there or not at
    /// all (issue 11, finding F6).
    pub real_paths: BTreeMap<PathBuf, PathBuf>,
}

impl PatchRequest {
    /// The changes per absolute path as reviewers see them (spec 01 `FileChange`); an update
    /// is keyed by its source.
    #[must_use]
    pub fn file_changes(&self) -> BTreeMap<PathBuf, FileChange> {
        self.verified
            .changes
            .iter()
            .map(|change| {
                let wire = match &change.kind {
                    ChangeKind::Add { content } => FileChange::Add {
                        content: content.clone(),
                    },
                    ChangeKind::Delete { content } => FileChange::Delete {
                        content: content.clone(),
                    },
                    ChangeKind::Update {
                        unified_diff,
                        move_path,
                        ..
                    } => FileChange::Update {
                        unified_diff: unified_diff.clone(),
                        move_path: move_path.clone(),
                    },
                };
                (change.path.clone(), wire)
            })
            .collect()
    }
}

/// The files an approval covers (the session-cache keys, spec 11 §Approval): every affected
/// path as the patch names it, plus the real path of each one a symlink sends elsewhere, so
/// that an approval given before a link was planted does not cover where it now leads.
fn approval_files(req: &PatchRequest) -> Vec<PathBuf> {
    let mut files = req.verified.affected_paths();
    for (path, real) in &req.real_paths {
        if path != real && !files.contains(real) {
            files.push(real.clone());
        }
    }
    files.sort();
    files
}

/// The changes as a reviewer sees them: [`PatchRequest::file_changes`] keyed (and moved) by
/// where each path really leads, so that a write through a symlink shows the real path
/// (issue 11, finding F6: "the approval names the resolved path").
fn approval_changes(req: &PatchRequest) -> BTreeMap<PathBuf, FileChange> {
    let real = |path: &PathBuf| req.real_paths.get(path).unwrap_or(path).clone();
    req.file_changes()
        .into_iter()
        .map(|(path, change)| {
            let change = match change {
                FileChange::Update {
                    unified_diff,
                    move_path,
                } => FileChange::Update {
                    unified_diff,
                    move_path: move_path.as_ref().map(real),
                },
                other => other,
            };
            (real(&path), change)
        })
        .collect()
}

/// The `apply_patch` runtime: runs `<airlock> __apply-patch` (the attempt's Linux helper
/// executable, which is the `airlock` binary) under the attempt's sandbox.
#[derive(Debug, Clone, Default)]
pub struct PatchRuntime {
    manager: SandboxManager,
}

impl PatchRuntime {
    /// A runtime confining with `manager`.
    #[must_use]
    pub const fn new(manager: SandboxManager) -> Self {
        Self { manager }
    }
}

impl Approvable<PatchRequest> for PatchRuntime {
    fn exec_approval_requirement(&self, req: &PatchRequest) -> Option<ExecApprovalRequirement> {
        Some(req.requirement.clone())
    }

    fn approval_action(
        &self,
        req: &PatchRequest,
        call_id: &str,
    ) -> std::io::Result<ApprovalAction> {
        Ok(ApprovalAction::ApplyPatch(PatchAction {
            id: call_id.to_owned(),
            environment_id: req.environment_id.clone(),
            cwd: req.verified.cwd.clone(),
            files: approval_files(req),
            patch: req.verified.patch.clone(),
            changes: approval_changes(req),
            permissions_preapproved: false,
        }))
    }

    /// Reference §A7: `on-request` and `untrusted` may ask to retry without the sandbox,
    /// `never` may not, granular follows `sandbox_approval`.
    fn wants_no_sandbox_approval(&self, policy: AskForApproval) -> bool {
        match policy {
            AskForApproval::UnlessTrusted | AskForApproval::OnRequest => true,
            AskForApproval::Never => false,
            AskForApproval::Granular(granular) => granular.allows_sandbox_approval(),
        }
    }
}

impl Sandboxable<PatchRequest> for PatchRuntime {}

impl ToolRuntime<PatchRequest> for PatchRuntime {
    fn tool_name(&self) -> &'static str {
        "apply_patch"
    }

    /// Starts the child under `attempt` (with the extra writable directories when sandboxed),
    /// sends the request on stdin, and reports a likely sandbox denial as
    /// [`ToolError::SandboxDenied`].
    async fn run(
        &self,
        req: &PatchRequest,
        attempt: &SandboxAttempt,
    ) -> Result<ExecOutput, ToolError> {
        let helper = attempt
            .linux_helper
            .clone()
            .ok_or_else(|| ExecError::Spawn {
                program: "airlock".to_owned(),
                source: std::io::Error::other(
                    "the airlock executable that applies patches is not configured",
                ),
            })?;
        let additional_permissions = (attempt.sandbox != SandboxType::None
            && !req.extra_writable_dirs.is_empty())
        .then(|| AdditionalPermissionProfile {
            network: None,
            file_system: Some(FileSystemPermissions {
                entries: req
                    .extra_writable_dirs
                    .iter()
                    .map(|dir| {
                        FileSystemSandboxEntry::path(dir.clone(), FileSystemAccessMode::Write)
                    })
                    .collect(),
                glob_scan_max_depth: None,
            }),
        });
        let env = req
            .env
            .iter()
            .filter(|(name, _)| CHILD_ENV.contains(&name.as_str()))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let launch = self
            .manager
            .transform(attempt.transform_request(
                vec![
                    helper.display().to_string(),
                    APPLY_PATCH_HELPER_SUBCOMMAND.to_owned(),
                ],
                // The environment's cwd, which exists; the patch's own directory (a `cd DIR`
                // that an Add creates, say) travels in the request.
                attempt.sandbox_policy_cwd.clone(),
                env,
                additional_permissions,
            ))
            .map_err(ExecError::from)?;
        let request = HelperRequest {
            cwd: req.verified.cwd.clone(),
            patch: req.verified.patch.clone(),
            changes: req.verified.changes.clone(),
            real_paths: req.real_paths.clone(),
        };
        let input = serde_json::to_vec(&request)
            .map_err(|error| ExecError::Action(std::io::Error::other(error)))?;
        let output = crate::process::spawn_with_input(&launch, &input).await?;
        if is_likely_sandbox_denied(launch.sandbox, &output) {
            // Text and exit code only: the helper's output could be shaped by what it read.
            return Err(ToolError::SandboxDenied {
                output,
                network: None,
                evidence: crate::orchestrator::DenialEvidence::OutputOnly,
            });
        }
        Ok(output)
    }
}
