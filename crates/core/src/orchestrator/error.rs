//! The errors of one tool call (spec 07 §Errors).

use airlock_protocol::NetworkApprovalContext;
use airlock_sandbox::ExecOutput;
use airlock_sandbox::SandboxTransformError;

/// How a tool call failed (spec 07 §Errors).
///
/// - [`ToolError::Rejected`]: approval refused, forbidden by policy, or aborted — no process
///   ran for the refused attempt; the message is model-visible text.
/// - [`ToolError::Execution`]: the command could not be started confined (transform failure
///   such as a missing Linux helper or bubblewrap, bad cwd, spawn failure). A transform failure
///   happens before spawn and never falls back to running unconfined.
/// - [`ToolError::SandboxDenied`]: the command ran and the sandbox most likely blocked it
///   (spec 05 §Denial detection); carries the output.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// Refused before running (spec 07 §Errors `ToolError::Rejected(String)`).
    #[error("{message}")]
    Rejected {
        /// The model-visible text ("rejected by user", the forbidden reason, ...).
        message: String,
        /// `true` for `abort`: the whole turn is interrupted (spec README invariant 8).
        interrupts_turn: bool,
    },
    /// Could not run the command confined (spec 07 §Errors, execution error).
    #[error(transparent)]
    Execution(#[from] ExecError),
    /// The sandbox denied the command (spec 07 §Errors `SandboxDenied { output }`).
    #[error("the sandbox denied the command (exit code {})", output.exit_code)]
    SandboxDenied {
        /// What the command printed and its exit code.
        output: ExecOutput,
        /// Set when the denial was a network-policy decision (managed network only).
        network: Option<NetworkDenial>,
        /// Who saw the refusal: only a refusal Airlock observed itself lets an unsandboxed
        /// retry skip the second approval (spec 07 step 6, Airlock addition).
        evidence: DenialEvidence,
    },
}

/// Why a run counts as a sandbox denial (spec 07 step 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialEvidence {
    /// Inferred from the command's output text or exit code (spec 05 §Denial detection),
    /// which the command controls: the unsandboxed retry is always asked again.
    OutputOnly,
    /// Airlock itself observed the refusal (a seccomp notification, a network-proxy
    /// decision, an errno on a path the mount plan denies), not the command's word.
    Observed,
}

impl ToolError {
    /// A rejection that lets the turn go on.
    #[must_use]
    pub fn rejected(message: impl Into<String>) -> Self {
        Self::Rejected {
            message: message.into(),
            interrupts_turn: false,
        }
    }
}

/// A sandbox denial caused by the managed network policy (spec 07 step 6, first bullet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkDenial {
    /// The blocked host and protocol when the proxy's decision was an approvable "ask";
    /// `None` when nobody may be asked (the denial is returned as is).
    pub context: Option<NetworkApprovalContext>,
}

/// Why a command could not be started (spec 07 §Errors, execution error).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The sandbox transform failed; nothing was started (spec 05 §Types `transform`).
    #[error("cannot confine the command: {0}")]
    Transform(#[from] SandboxTransformError),
    /// The tool could not describe its action for the reviewers.
    #[error("cannot describe the action for approval: {0}")]
    Action(#[source] std::io::Error),
    /// The process could not be spawned.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program (after the sandbox transform).
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The sandbox's own set-up failed (bubblewrap could not create a namespace or a
    /// mount, the helper refused the launch): the command never ran, and this is never
    /// retried without the sandbox (spec 07 step 6).
    #[error(
        "could not start the sandbox: {cause}; nothing ran. Run `airlock doctor` to see what this host is missing and how to fix it"
    )]
    SandboxSetup {
        /// What the helper or bubblewrap reported.
        cause: String,
    },
    /// The exec-server of a remote environment could not be reached, refused the start, or
    /// the connection was lost (spec 09: never a local fallback).
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    /// Waiting for the process or reading its output failed.
    #[error("lost track of the running command: {0}")]
    Wait(#[source] std::io::Error),
}
