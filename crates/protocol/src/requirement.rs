//! `ExecApprovalRequirement`: what a tool call needs before its first attempt.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::ExecPolicyAmendment;

/// The approval requirement computed for one tool call before it runs
/// (reference `orchestrator-and-approvals.md` §1; spec 07, spec 03).
///
/// Codex keeps this type internal; Airlock prints it (`airlock explain --json`, spec 10), so it has
/// a wire form: internally tagged by `"type"`, snake_case.
/// - `{"type":"skip","bypass_sandbox":false,"proposed_execpolicy_amendment":null}`
/// - `{"type":"needs_approval","reason":"...","proposed_execpolicy_amendment":["git","pull"]}`
/// - `{"type":"forbidden","reason":"..."}`
///
/// Optional fields are always written (as `null` when absent) and may be left out on input;
/// a missing `bypass_sandbox` reads as `false` (stay sandboxed). `forbidden` requires `reason`.
/// An unknown `type` or a missing tag fails to deserialise.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExecApprovalRequirement {
    /// No approval needed.
    Skip {
        /// `true` only when every segment is explicitly allowed by exec policy, so the first
        /// attempt may run without the sandbox (spec README invariant 3; deny-read still wins).
        #[serde(default)]
        bypass_sandbox: bool,
        /// A prefix rule that could be offered for later, if any.
        #[serde(default)]
        proposed_execpolicy_amendment: Option<ExecPolicyAmendment>,
    },
    /// A reviewer must approve before the first attempt.
    NeedsApproval {
        /// Why approval is needed, shown to the reviewer.
        #[serde(default)]
        reason: Option<String>,
        /// A prefix rule the reviewer may accept to skip such prompts later.
        #[serde(default)]
        proposed_execpolicy_amendment: Option<ExecPolicyAmendment>,
    },
    /// Rejected without asking: no process, no prompt.
    Forbidden {
        /// The message returned to the model.
        reason: String,
    },
}

impl ExecApprovalRequirement {
    /// The amendment proposed by `skip` or `needs_approval`; `None` for `forbidden`.
    #[must_use]
    pub const fn proposed_execpolicy_amendment(&self) -> Option<&ExecPolicyAmendment> {
        match self {
            Self::Skip {
                proposed_execpolicy_amendment,
                ..
            }
            | Self::NeedsApproval {
                proposed_execpolicy_amendment,
                ..
            } => proposed_execpolicy_amendment.as_ref(),
            Self::Forbidden { .. } => None,
        }
    }
}
