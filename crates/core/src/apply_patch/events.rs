//! `PatchApplyBegin` / `PatchApplyEnd` (spec 11 §Output; reference §A9): what an interface
//! tells its client about one patch. Built after the call from its result and trace; the
//! session returns them with the outcome (an app server forwards them as `EventMsg`s).

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_approval::DecisionSource;
use airlock_approval::FileChange;
use serde::Serialize;

use crate::orchestrator::CallTrace;

/// `patch_apply_begin`: the patch is about to be applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatchApplyBeginEvent {
    /// The tool call.
    pub call_id: String,
    /// The turn.
    pub turn_id: String,
    /// `true` when nobody was asked (no `apply_patch_approval_request`).
    pub auto_approved: bool,
    /// The changes per absolute path.
    pub changes: BTreeMap<PathBuf, FileChange>,
}

/// How a patch ended (`PatchApplyStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchApplyStatus {
    /// Applied.
    Completed,
    /// Applying failed (nothing changed).
    Failed,
    /// A reviewer declined it.
    Declined,
}

/// `patch_apply_end`: the patch finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatchApplyEndEvent {
    /// The tool call.
    pub call_id: String,
    /// The turn.
    pub turn_id: String,
    /// The child's stdout (the success summary).
    pub stdout: String,
    /// The error text.
    pub stderr: String,
    /// `status == completed`.
    pub success: bool,
    /// The changes per absolute path.
    pub changes: BTreeMap<PathBuf, FileChange>,
    /// How it ended.
    pub status: PatchApplyStatus,
}

/// The events of one patch call: `begin` when an attempt ran, `end` when it ran or a reviewer
/// declined it; neither for a patch refused before asking (reference §A6: a reject sends no
/// Begin/End) or one that failed verification.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PatchEvents {
    /// Sent before the first attempt.
    pub begin: Option<PatchApplyBeginEvent>,
    /// Sent when the call ended.
    pub end: Option<PatchApplyEndEvent>,
}

/// What ended the call, for [`PatchEvents::from_call`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchEnding<'a> {
    /// An attempt ran; `Ok(stdout)` applied, `Err(stderr)` failed.
    Ran(Result<&'a str, &'a str>),
    /// A reviewer was asked and declined (or aborted) with this message.
    Declined(&'a str),
    /// Refused before asking, or not verified: no events.
    Silent,
}

impl PatchEvents {
    /// The events of a call with `changes` that ended as `ending`, using `trace` to tell
    /// whether anybody was asked.
    #[must_use]
    pub fn from_call(
        call_id: &str,
        turn_id: &str,
        changes: &BTreeMap<PathBuf, FileChange>,
        trace: &CallTrace,
        ending: PatchEnding<'_>,
    ) -> Self {
        let end = |stdout: &str, stderr: &str, status: PatchApplyStatus| PatchApplyEndEvent {
            call_id: call_id.to_owned(),
            turn_id: turn_id.to_owned(),
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
            success: status == PatchApplyStatus::Completed,
            changes: changes.clone(),
            status,
        };
        match ending {
            PatchEnding::Silent => Self::default(),
            PatchEnding::Declined(message) => Self {
                begin: None,
                end: Some(end("", message, PatchApplyStatus::Declined)),
            },
            PatchEnding::Ran(result) => Self {
                begin: Some(PatchApplyBeginEvent {
                    call_id: call_id.to_owned(),
                    turn_id: turn_id.to_owned(),
                    auto_approved: trace
                        .approvals
                        .iter()
                        .all(|approval| approval.source == DecisionSource::Config),
                    changes: changes.clone(),
                }),
                end: Some(match result {
                    Ok(stdout) => end(stdout, "", PatchApplyStatus::Completed),
                    Err(stderr) => end("", stderr, PatchApplyStatus::Failed),
                }),
            },
        }
    }
}
