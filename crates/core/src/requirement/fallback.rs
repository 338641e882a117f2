//! The decision for a segment no rule matched (spec 03 "Fallback decision for an
//! unmatched segment", reference §6).

use airlock_execpolicy::Decision;
use airlock_permissions::FileSystemPolicyQueries;
use airlock_protocol::{
    AskForApproval, FileSystemSandboxKind, FileSystemSandboxPolicy, SandboxPermissions,
};

/// Spec 03 "Fallback decision for an unmatched segment":
/// 1. known-safe and plain → `allow`;
/// 2. dangerous → under `never`: `allow` only with full-disk write access or an external
///    sandbox, else `forbidden`; under any other policy `prompt`;
/// 3. otherwise by policy: `never` → `allow` (the sandbox enforces); `untrusted` →
///    `prompt`; `on-request`/granular → `allow` when the filesystem is unrestricted or
///    external, else `prompt` when the call requests a sandbox override, else `allow`.
///
/// `known_safe` must already account for plainness (a non-plain command is never safe).
#[must_use]
pub fn render_decision_for_unmatched_command(
    approval_policy: AskForApproval,
    fs_policy: &FileSystemSandboxPolicy,
    sandbox_permissions: SandboxPermissions,
    known_safe: bool,
    dangerous: bool,
) -> Decision {
    if known_safe && !dangerous {
        return Decision::Allow;
    }
    if dangerous {
        return match approval_policy {
            AskForApproval::Never => {
                if fs_policy.kind == FileSystemSandboxKind::ExternalSandbox
                    || fs_policy.has_full_disk_write_access()
                {
                    Decision::Allow
                } else {
                    Decision::Forbidden
                }
            }
            _ => Decision::Prompt,
        };
    }
    match approval_policy {
        AskForApproval::Never => Decision::Allow,
        AskForApproval::UnlessTrusted => Decision::Prompt,
        AskForApproval::OnRequest | AskForApproval::Granular(_) => {
            if fs_policy.kind != FileSystemSandboxKind::Restricted {
                Decision::Allow
            } else if sandbox_permissions.requests_sandbox_override() {
                Decision::Prompt
            } else {
                Decision::Allow
            }
        }
    }
}
