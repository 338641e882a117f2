//! The requirement of a tool call that computes none itself (spec 07
//! §`default_exec_approval_requirement`).

use airlock_protocol::{
    AskForApproval, ExecApprovalRequirement, FileSystemSandboxKind, FileSystemSandboxPolicy,
};

/// The reason of the `Forbidden` produced when granular policy forbids sandbox prompts
/// (spec 07 §`default_exec_approval_requirement`).
pub const SANDBOX_APPROVAL_DISALLOWED: &str = "approval policy disallowed sandbox approval prompt";

/// Spec 07 §`default_exec_approval_requirement`:
/// `never` → no approval; `on-request`/granular → approval when the filesystem kind is
/// `Restricted`; `untrusted` → approval. Approval under granular with
/// `sandbox_approval = false` → `Forbidden` with [`SANDBOX_APPROVAL_DISALLOWED`].
/// Otherwise `Skip { bypass_sandbox: false }`: the sandbox still applies (invariant 4).
#[must_use]
pub fn default_exec_approval_requirement(
    policy: AskForApproval,
    fs_policy: &FileSystemSandboxPolicy,
) -> ExecApprovalRequirement {
    let restricted = fs_policy.kind == FileSystemSandboxKind::Restricted;
    let needs = match policy {
        AskForApproval::Never => false,
        AskForApproval::OnRequest | AskForApproval::Granular(_) => restricted,
        AskForApproval::UnlessTrusted => true,
    };
    match policy {
        AskForApproval::Granular(config) if needs && !config.allows_sandbox_approval() => {
            ExecApprovalRequirement::Forbidden {
                reason: SANDBOX_APPROVAL_DISALLOWED.to_owned(),
            }
        }
        _ if needs => ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_execpolicy_amendment: None,
        },
        _ => ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            proposed_execpolicy_amendment: None,
        },
    }
}
