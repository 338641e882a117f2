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

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_protocol::{
        FileSystemAccessMode, FileSystemSandboxEntry, FileSystemSpecialPath, GranularApprovalConfig,
    };

    fn restricted() -> FileSystemSandboxPolicy {
        FileSystemSandboxPolicy::restricted(vec![
            FileSystemSandboxEntry::special(
                FileSystemSpecialPath::Root,
                FileSystemAccessMode::Read,
            ),
            FileSystemSandboxEntry::path("/work", FileSystemAccessMode::Write),
        ])
    }

    fn full_write() -> FileSystemSandboxPolicy {
        FileSystemSandboxPolicy::restricted(vec![FileSystemSandboxEntry::special(
            FileSystemSpecialPath::Root,
            FileSystemAccessMode::Write,
        )])
    }

    fn granular() -> AskForApproval {
        AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval: true,
            rules: true,
            skill_approval: false,
            request_permissions: false,
            mcp_elicitations: false,
        })
    }

    const USE: SandboxPermissions = SandboxPermissions::UseDefault;
    const ESC: SandboxPermissions = SandboxPermissions::RequireEscalated;
    const ADD: SandboxPermissions = SandboxPermissions::WithAdditionalPermissions;

    fn decide(
        policy: AskForApproval,
        fs: &FileSystemSandboxPolicy,
        permissions: SandboxPermissions,
        safe: bool,
        dangerous: bool,
    ) -> Decision {
        render_decision_for_unmatched_command(policy, fs, permissions, safe, dangerous)
    }

    #[test]
    fn branch_1_known_safe_allows_under_every_policy() {
        for policy in [
            AskForApproval::Never,
            AskForApproval::UnlessTrusted,
            AskForApproval::OnRequest,
            granular(),
        ] {
            assert_eq!(
                decide(policy, &restricted(), USE, true, false),
                Decision::Allow
            );
            assert_eq!(
                decide(policy, &restricted(), ESC, true, false),
                Decision::Allow
            );
        }
    }

    #[test]
    fn branch_2_dangerous_under_never_depends_on_the_filesystem() {
        let never = AskForApproval::Never;
        assert_eq!(
            decide(never, &restricted(), USE, false, true),
            Decision::Forbidden
        );
        assert_eq!(
            decide(never, &full_write(), USE, false, true),
            Decision::Allow
        );
        let external = FileSystemSandboxPolicy::external_sandbox();
        assert_eq!(decide(never, &external, USE, false, true), Decision::Allow);
        let open = FileSystemSandboxPolicy::unrestricted();
        assert_eq!(decide(never, &open, USE, false, true), Decision::Allow);
    }

    #[test]
    fn branch_2_dangerous_prompts_under_other_policies() {
        for policy in [
            AskForApproval::UnlessTrusted,
            AskForApproval::OnRequest,
            granular(),
        ] {
            for fs in [restricted(), FileSystemSandboxPolicy::unrestricted()] {
                assert_eq!(decide(policy, &fs, USE, false, true), Decision::Prompt);
            }
        }
    }

    #[test]
    fn branch_2_a_known_safe_flag_does_not_hide_danger() {
        assert_eq!(
            decide(AskForApproval::Never, &restricted(), USE, true, true),
            Decision::Forbidden
        );
    }

    #[test]
    fn branch_3_by_policy() {
        assert_eq!(
            decide(AskForApproval::Never, &restricted(), USE, false, false),
            Decision::Allow
        );
        assert_eq!(
            decide(AskForApproval::Never, &restricted(), ESC, false, false),
            Decision::Allow
        );
        let open = FileSystemSandboxPolicy::unrestricted();
        assert_eq!(
            decide(AskForApproval::UnlessTrusted, &open, USE, false, false),
            Decision::Prompt
        );
        for policy in [AskForApproval::OnRequest, granular()] {
            assert_eq!(decide(policy, &open, ESC, false, false), Decision::Allow);
            let external = FileSystemSandboxPolicy::external_sandbox();
            assert_eq!(
                decide(policy, &external, ESC, false, false),
                Decision::Allow
            );
            assert_eq!(
                decide(policy, &restricted(), ESC, false, false),
                Decision::Prompt
            );
            assert_eq!(
                decide(policy, &restricted(), ADD, false, false),
                Decision::Prompt
            );
            assert_eq!(
                decide(policy, &restricted(), USE, false, false),
                Decision::Allow
            );
        }
    }
}
