//! Params and results of the client's requests (spec 10 §JSON-RPC app server).

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::SandboxPermissions;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::items::FileUpdateChange;

/// Who the client is (`initialize.clientInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    /// The harness's name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The harness's version.
    pub version: String,
}

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Who the client is.
    pub client_info: ClientInfo,
    /// Accepted for Codex compatibility (`experimentalApi`, `optOutNotificationMethods`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<InitializeCapabilities>,
}

/// `initialize.capabilities`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeCapabilities {
    /// Opt in to experimental fields (Airlock sends `availableDecisions` either way).
    #[serde(default)]
    pub experimental_api: bool,
    /// Notification methods the client does not want (exact names; unknown ones ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt_out_notification_methods: Option<Vec<String>>,
}

/// `initialize` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// `airlock/<version>`.
    pub user_agent: String,
    /// `$AIRLOCK_HOME` as the server resolved it.
    pub airlock_home: PathBuf,
    /// `std::env::consts::FAMILY` (`unix`).
    pub platform_family: String,
    /// `std::env::consts::OS` (`linux`, `macos`).
    pub platform_os: String,
}

/// `thread/start` params: a thread is one core session (its own approval cache, exec policy
/// and audit session id).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadStartParams {
    /// The working directory and first workspace root (absolute; default: the server's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The approval policy (default: `approval_policy` of the config, else `on-request`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<AskForApproval>,
    /// Who answers approvals (default: `approvals_reviewer` of the config, else `user`, i.e.
    /// this client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// A permission profile id (`:workspace`, `:read-only`, a `[permissions.<id>]` table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_profile: Option<String>,
    /// `.rules` files replacing `$AIRLOCK_HOME/rules/*.rules`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<PathBuf>>,
    /// Config overrides, dotted key → TOML-compatible JSON value (as `-c key=value`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, Value>>,
}

/// A thread's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    /// The thread id (also the audit log's session id).
    pub id: String,
}

/// `thread/start` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartResponse {
    /// The new thread.
    pub thread: Thread,
    /// The approval policy in force.
    pub approval_policy: AskForApproval,
    /// The permission profile id in force.
    pub permission_profile: String,
    /// The thread's working directory.
    pub cwd: PathBuf,
}

/// Params naming one thread (`thread/end`, `turn/start`, `instructions/render`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadIdParams {
    /// The thread.
    pub thread_id: String,
}

/// A result without fields (`{}`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct EmptyResponse {}

/// How a turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    /// Running: calls may be sent.
    InProgress,
    /// Ended normally (a later `turn/start` or `thread/end`).
    Completed,
    /// Interrupted by `turn/interrupt` or a `cancel` answer.
    Interrupted,
    /// Ended by an error.
    Failed,
}

/// A turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// The turn id.
    pub id: String,
    /// Its status.
    pub status: TurnStatus,
}

/// `turn/start` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartResponse {
    /// The new turn (the thread's previous turn, if any, is completed).
    pub turn: Turn,
}

/// `turn/interrupt` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnInterruptParams {
    /// The thread.
    pub thread_id: String,
    /// The turn to interrupt.
    pub turn_id: String,
}

/// `tool/shell` params: one shell tool call as the model proposed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolShellParams {
    /// The thread.
    pub thread_id: String,
    /// The active turn of that thread.
    pub turn_id: String,
    /// The tool call id (the item id of its notifications and approval).
    pub call_id: String,
    /// The argv (non-empty).
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Working directory, relative to the thread's cwd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// A pseudo-terminal (not supported: `true` is refused with -32602).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<bool>,
    /// `use_default` or `require_escalated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Additional permissions (not supported yet: refused with -32602, never ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_permissions: Option<Value>,
    /// Why the command should run, shown to reviewers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// A prefix rule the model proposes for later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_rule: Option<Vec<String>>,
    /// Wall-clock limit in milliseconds; the command is killed after it (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolCallStatus {
    /// It ran (whatever its exit code).
    Completed,
    /// It could not run or finish: confinement impossible, timed out, interrupted while
    /// running, a patch that did not apply.
    Failed,
    /// Refused before running: forbidden by policy, or an approval was declined / cancelled.
    Declined,
}

/// Who decided and what (the approval part of a call's trace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionSummary {
    /// `skip`, `needs_approval` or `forbidden` (spec 03).
    pub requirement: String,
    /// The reviewer that was asked (`user`, `auto_review`), or absent when nobody was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// The final decision (`approved`, `approved_for_session`, `denied`, `abort`, ...).
    pub decision: String,
    /// Where it came from (`config`, `hook`, `user`, `cache`, `auto_review`).
    pub source: String,
}

/// One execution attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptSummary {
    /// `none`, `linuxSeccomp`, `macosSeatbelt`.
    pub sandbox_type: String,
    /// The exit code, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether the failure was attributed to the sandbox.
    pub sandbox_denied: bool,
    /// Why it could not start, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// `tool/shell` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolShellResponse {
    /// How the call ended.
    pub status: ToolCallStatus,
    /// The command's exit code, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Captured stdout (first MiB).
    pub stdout: String,
    /// Captured stderr (first MiB).
    pub stderr: String,
    /// Bytes of stdout past the first MiB, not in `stdout` (they were streamed as output
    /// deltas); absent when nothing was cut.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stdout_truncated_bytes: u64,
    /// As `stdoutTruncatedBytes`, for stderr.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stderr_truncated_bytes: u64,
    /// The sandbox of the last attempt (`none` when nothing ran).
    pub sandbox_type: String,
    /// The decision trace.
    pub decision: DecisionSummary,
    /// Attempts in order (at most two).
    pub attempts: Vec<AttemptSummary>,
    /// Why it was declined or failed (model-visible text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `tool/applyPatch` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolApplyPatchParams {
    /// The thread.
    pub thread_id: String,
    /// The active turn.
    pub turn_id: String,
    /// The tool call id.
    pub call_id: String,
    /// The patch text (`*** Begin Patch` ... `*** End Patch`).
    pub patch: String,
    /// The directory relative paths resolve against (relative to the thread's cwd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

/// `tool/applyPatch` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolApplyPatchResponse {
    /// `completed` (applied), `failed` (did not apply), `declined` (refused).
    pub status: ToolCallStatus,
    /// `Success. Updated the following files:` ... when applied.
    pub stdout: String,
    /// The failure or refusal message.
    pub stderr: String,
    /// The changes, sorted by path.
    pub changes: Vec<FileUpdateChange>,
}

/// `policy/explain` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyExplainParams {
    /// The thread whose policy explains.
    pub thread_id: String,
    /// The argv.
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Working directory, relative to the thread's cwd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// `use_default` or `require_escalated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_permissions: Option<SandboxPermissions>,
}

/// `instructions/render` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstructionsRenderResponse {
    /// The `<permissions instructions>` text for the model.
    pub text: String,
    /// The snapshot to diff later updates against.
    pub snapshot: Value,
}

/// `command/exec` params: one command under the sandbox only (no policy, no approval, as
/// Codex's `command/exec`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandExecParams {
    /// The argv (non-empty).
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Working directory (relative to the server's cwd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The permission profile id (default: the configured one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_profile: Option<String>,
    /// Wall-clock limit in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `command/exec` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecResponse {
    /// The exit code (`128 + N` for signal N).
    pub exit_code: i32,
    /// Captured stdout (first MiB, as Codex's default `outputBytesCap`).
    pub stdout: String,
    /// Captured stderr (first MiB).
    pub stderr: String,
    /// Bytes of stdout past the first MiB, read and dropped; absent when nothing was cut.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stdout_truncated_bytes: u64,
    /// As `stdoutTruncatedBytes`, for stderr.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stderr_truncated_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
