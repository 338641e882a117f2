//! The items of a turn (`commandExecution`, `fileChange`), as `item/started` and
//! `item/completed` carry them.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// How a command item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionStatus {
    /// Waiting for approval or running.
    InProgress,
    /// Ran to its end.
    Completed,
    /// Could not run or finish.
    Failed,
    /// Refused.
    Declined,
}

/// How a file-change item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PatchApplyStatus {
    /// Waiting for approval or being applied.
    InProgress,
    /// Applied.
    Completed,
    /// Did not apply.
    Failed,
    /// Refused.
    Declined,
}

/// What a patch does to one path (Codex `PatchChangeKind`, tagged `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    /// A new file.
    Add,
    /// A removed file.
    Delete,
    /// An edited file, moved when `move_path` is set.
    Update {
        /// The new path (snake_case, as Codex).
        move_path: Option<PathBuf>,
    },
}

/// One changed path: `diff` is the whole text for add and delete, a unified diff for update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileUpdateChange {
    /// Absolute path.
    pub path: PathBuf,
    /// What happens to it.
    pub kind: PatchChangeKind,
    /// The content or the unified diff.
    pub diff: String,
}

/// An item of a turn, tagged `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItem {
    /// A shell tool call.
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        /// The call id.
        id: String,
        /// The command as one shell-quoted string.
        command: String,
        /// Its working directory.
        cwd: PathBuf,
        /// How it stands.
        status: CommandExecutionStatus,
        /// The exit code once it ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// Wall time once it ended, in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    /// An apply_patch call.
    #[serde(rename_all = "camelCase")]
    FileChange {
        /// The call id.
        id: String,
        /// The changes, sorted by path (empty until the patch is verified).
        changes: Vec<FileUpdateChange>,
        /// How it stands.
        status: PatchApplyStatus,
    },
}
