//! Server-to-client approval requests and the client's v2 decisions (spec 10; reference
//! `codex/app-server.md` §B4).

use std::path::PathBuf;

use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkPolicyAmendment;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::items::FileUpdateChange;

/// An answer to a command approval (Codex `CommandExecutionApprovalDecision`). Variant names
/// are camelCase; the payload keys stay snake_case, as in Codex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalDecision {
    /// Run it this once.
    Accept,
    /// Run it, and do not ask again for the same command in this thread.
    AcceptForSession,
    /// Run it, and save the proposed prefix rule so matching commands are allowed.
    AcceptWithExecpolicyAmendment {
        /// The argv prefix to allow (must be the proposed one).
        #[allow(clippy::struct_field_names)]
        execpolicy_amendment: Vec<String>,
    },
    /// Save a network host rule (`allow` continues, `deny` refuses).
    ApplyNetworkPolicyAmendment {
        /// The host rule (must be one of the proposed ones).
        network_policy_amendment: NetworkPolicyAmendment,
    },
    /// Refuse; the turn goes on.
    Decline,
    /// Refuse and interrupt the turn.
    Cancel,
}

/// `item/commandExecution/requestApproval` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The tool call id.
    pub item_id: String,
    /// Set when one call asks more than once (e.g. the retry without the sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// Why approval is asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The command as one shell-quoted string (Codex's shape).
    pub command: String,
    /// The argv as proposed (Airlock addition).
    pub command_argv: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// The prefix rule offered with `acceptWithExecpolicyAmendment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_execpolicy_amendment: Option<Vec<String>>,
    /// The blocked host, for a network retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_approval_context: Option<NetworkApprovalContext>,
    /// The host rules offered for a network retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_network_policy_amendments: Option<Vec<NetworkPolicyAmendment>>,
    /// Additional permissions requested with the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_permissions: Option<Value>,
    /// The answers the client may give; anything else is treated as `decline`.
    pub available_decisions: Vec<CommandExecutionApprovalDecision>,
}

/// `item/commandExecution/requestApproval` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalResponse {
    /// The answer.
    pub decision: CommandExecutionApprovalDecision,
}

/// An answer to a file-change approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeApprovalDecision {
    /// Apply it.
    Accept,
    /// Apply it and do not ask again for these paths in this thread.
    AcceptForSession,
    /// Refuse; the turn goes on.
    Decline,
    /// Refuse and interrupt the turn.
    Cancel,
}

/// `item/fileChange/requestApproval` params (Airlock sends the changes, which Codex omits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The patch call id.
    pub item_id: String,
    /// Why approval is asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The changes, sorted by path.
    pub changes: Vec<FileUpdateChange>,
}

/// `item/fileChange/requestApproval` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalResponse {
    /// The answer.
    pub decision: FileChangeApprovalDecision,
}
