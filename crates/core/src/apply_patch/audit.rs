//! The audit record of one `apply_patch` call: which paths changed and how, never their
//! contents (spec 10 §Audit log; issue 12).

use std::path::PathBuf;

use airlock_patch::ChangeKind;
use airlock_patch::VerifiedPatch;
use serde::Serialize;

use crate::audit::CallOutcome;
use crate::orchestrator::CallTrace;

/// One line of the audit log for a patch. JSON: `time`, `session_id`, `turn_id`, `call_id`,
/// `cwd`, `command` (`["apply_patch"]`), `files` (`[{"path","change":"add|delete|update","move_path"?}]`, empty when the
/// patch did not verify), the orchestrator trace fields (`tool` is `"apply_patch"`; no
/// requirement or attempts when the patch never reached the orchestrator), and `outcome`.
#[derive(Debug, Clone, Serialize)]
pub struct PatchAuditRecord {
    /// When the call ended (RFC 3339, UTC).
    pub time: String,
    /// The session id.
    pub session_id: String,
    /// The turn id.
    pub turn_id: String,
    /// The tool call id.
    pub call_id: String,
    /// The patch's working directory.
    pub cwd: PathBuf,
    /// Always `["apply_patch"]` (the shape of a command record; never the patch text).
    pub command: Vec<String>,
    /// The affected files (paths only).
    pub files: Vec<PatchFileRecord>,
    /// Requirement, approvals and attempts (empty when the patch never reached the
    /// orchestrator: parse, verification or pre-check failure).
    #[serde(flatten)]
    pub trace: CallTrace,
    /// How the call ended.
    pub outcome: CallOutcome,
}

/// One affected file in the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatchFileRecord {
    /// Absolute path (an update's source).
    pub path: PathBuf,
    /// `add`, `delete` or `update`.
    pub change: &'static str,
    /// The destination of a move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_path: Option<PathBuf>,
}

impl PatchFileRecord {
    /// The records of every change of `verified`, in patch order.
    #[must_use]
    pub fn from_verified(verified: &VerifiedPatch) -> Vec<Self> {
        verified
            .changes
            .iter()
            .map(|change| {
                let (kind, move_path) = match &change.kind {
                    ChangeKind::Add { .. } => ("add", None),
                    ChangeKind::Delete { .. } => ("delete", None),
                    ChangeKind::Update { move_path, .. } => ("update", move_path.clone()),
                };
                Self {
                    path: change.path.clone(),
                    change: kind,
                    move_path,
                }
            })
            .collect()
    }
}
