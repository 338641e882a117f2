//! Events the approval layer emits to whoever answers for the user (terminal prompt, app-server
//! client): approval requests, resolutions and warnings (spec 06 §User approval; reference
//! `protocol.md` §10–11).
//!
//! The request events have Codex's core JSON forms. They belong to the wire types of spec 01 and
//! live here until the protocol crate takes them over.

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::ReviewDecision;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::action::FileChange;

/// `exec_approval_request`: a person is asked to approve a command (spec 06 §User approval).
///
/// JSON (snake_case; optional fields omitted when absent): `call_id`, `approval_id?`, `turn_id`,
/// `environment_id?`, `started_at_ms` (Unix time, milliseconds), `command` (argv), `cwd`,
/// `reason?`, `network_approval_context?`, `proposed_execpolicy_amendment?` (argv prefix),
/// `proposed_network_policy_amendments?`, `additional_permissions?`, `available_decisions`,
/// `parsed_cmd`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExecApprovalRequestEvent {
    /// The tool call.
    pub call_id: String,
    /// A distinct id for this approval when one call asks more than once; else absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// The turn the request belongs to.
    #[serde(default)]
    pub turn_id: String,
    /// The environment of the command (absent = local host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_id: Option<String>,
    /// When the request was made, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub started_at_ms: u64,
    /// The argv as proposed.
    pub command: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Why approval is asked: the retry reason, else the approval reason, else the model's
    /// justification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The blocked host, for a network retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_approval_context: Option<NetworkApprovalContext>,
    /// The prefix rule offered with `approved_execpolicy_amendment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_execpolicy_amendment: Option<ExecPolicyAmendment>,
    /// The host rules offered for a network retry (allow, deny).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_network_policy_amendments: Option<Vec<NetworkPolicyAmendment>>,
    /// Additional permissions requested with the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_permissions: Option<AdditionalPermissionProfile>,
    /// The answers the client may give ([`crate::available_decisions`]).
    #[serde(default)]
    pub available_decisions: Vec<ReviewDecision>,
    /// The command split into segments, for display.
    #[serde(default)]
    pub parsed_cmd: Vec<ParsedCommandSummary>,
}

impl ExecApprovalRequestEvent {
    /// `approval_id` if present, else `call_id`: the key the answer must use.
    #[must_use]
    pub fn effective_approval_id(&self) -> &str {
        self.approval_id.as_deref().unwrap_or(&self.call_id)
    }

    /// `available_decisions`, or the list derived from the other fields when a sender left it
    /// empty (spec 06: "a client that omits the field gets the list derived from the others").
    #[must_use]
    pub fn decisions(&self) -> Vec<ReviewDecision> {
        if self.available_decisions.is_empty() {
            crate::decisions::available_decisions(
                self.network_approval_context.as_ref(),
                self.proposed_execpolicy_amendment.as_ref(),
                self.additional_permissions.as_ref(),
            )
        } else {
            self.available_decisions.clone()
        }
    }
}

/// One segment of a command for display (Codex `ParsedCommand`, only its `unknown` form).
///
/// JSON: `{"type":"unknown","cmd":"git status"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ParsedCommandSummary {
    /// A segment this layer does not classify further.
    Unknown {
        /// The segment as shell-quoted text.
        cmd: String,
    },
}

impl ParsedCommandSummary {
    /// The plain segments of `command` (a wrapper script split at `&&`, `;`, `|`...), or the
    /// whole command as one entry when it is not a plain script.
    #[must_use]
    pub fn for_command(command: &[String]) -> Vec<Self> {
        let segments = airlock_shell::parse_shell_lc_plain_commands(command)
            .unwrap_or_else(|| vec![command.to_vec()]);
        segments
            .iter()
            .map(|segment| Self::Unknown {
                cmd: crate::action::hook_command_for(segment),
            })
            .collect()
    }
}

/// `apply_patch_approval_request`: a person is asked to approve a patch (spec 06 §User approval).
///
/// JSON: `call_id`, `turn_id`, `changes` (absolute path → [`FileChange`]), `reason?`,
/// `grant_root?`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApplyPatchApprovalRequestEvent {
    /// The tool call (also the approval id).
    pub call_id: String,
    /// The turn the request belongs to.
    #[serde(default)]
    pub turn_id: String,
    /// The changes per absolute path.
    pub changes: BTreeMap<PathBuf, FileChange>,
    /// Why approval is asked (for a retry: the retry reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A root the patch asks to write under for the session (never granted by this layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_root: Option<PathBuf>,
}

/// What the approval layer tells the client.
///
/// JSON, tagged by `"type"`: `{"type":"exec_approval_request", ...}`,
/// `{"type":"apply_patch_approval_request", ...}`,
/// `{"type":"approval_resolved","id":..,"turn_id":..,"decision":..}`,
/// `{"type":"warning","message":..}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalEvent {
    /// Ask a person about a command; answer with
    /// [`crate::ApprovalSession::submit_exec_approval`].
    ExecApprovalRequest(Box<ExecApprovalRequestEvent>),
    /// Ask a person about a patch; answer with [`crate::ApprovalSession::submit_patch_approval`].
    ApplyPatchApprovalRequest(ApplyPatchApprovalRequestEvent),
    /// A pending request ended (answered, aborted, cancelled): a prompt for `id` can be closed.
    ApprovalResolved {
        /// The effective approval id.
        id: String,
        /// The turn.
        turn_id: String,
        /// How it ended (`abort` when it was cancelled or the turn was interrupted).
        decision: ReviewDecision,
    },
    /// Something went wrong but the request goes on (failed hook, unpersisted amendment,
    /// unknown approval id...).
    Warning {
        /// A one-line, human-readable message.
        message: String,
    },
}
