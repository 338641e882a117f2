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

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_protocol::GranularApprovalConfig;

    fn granular(sandbox_approval: bool) -> AskForApproval {
        AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval,
            rules: true,
            skill_approval: false,
            request_permissions: false,
            mcp_elicitations: false,
        })
    }

    fn skip() -> ExecApprovalRequirement {
        ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            proposed_execpolicy_amendment: None,
        }
    }

    fn ask() -> ExecApprovalRequirement {
        ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_execpolicy_amendment: None,
        }
    }

    #[test]
    fn seed_matrix() {
        let restricted = FileSystemSandboxPolicy::default();
        let external = FileSystemSandboxPolicy::external_sandbox();
        let open = FileSystemSandboxPolicy::unrestricted();
        // never + restricted → Skip(bypass=false): the sandbox still applies.
        assert_eq!(
            default_exec_approval_requirement(AskForApproval::Never, &restricted),
            skip()
        );
        // granular(sandbox_approval=false) + restricted → Forbidden.
        assert_eq!(
            default_exec_approval_requirement(granular(false), &restricted),
            ExecApprovalRequirement::Forbidden {
                reason: "approval policy disallowed sandbox approval prompt".to_owned()
            }
        );
        // external sandbox + on-request → Skip.
        assert_eq!(
            default_exec_approval_requirement(AskForApproval::OnRequest, &external),
            skip()
        );
        assert_eq!(
            default_exec_approval_requirement(AskForApproval::OnRequest, &open),
            skip()
        );
        assert_eq!(
            default_exec_approval_requirement(AskForApproval::OnRequest, &restricted),
            ask()
        );
        assert_eq!(
            default_exec_approval_requirement(granular(true), &restricted),
            ask()
        );
        assert_eq!(
            default_exec_approval_requirement(granular(false), &external),
            skip()
        );
        for fs in [&restricted, &external, &open] {
            assert_eq!(
                default_exec_approval_requirement(AskForApproval::UnlessTrusted, fs),
                ask()
            );
            assert_eq!(
                default_exec_approval_requirement(AskForApproval::Never, fs),
                skip()
            );
        }
    }
}
