//! Whether the first attempt may leave the sandbox (spec 07 step 4).

use airlock_permissions::FileSystemPolicyQueries;
use airlock_protocol::{ExecApprovalRequirement, FileSystemSandboxPolicy, SandboxPermissions};
use serde::Serialize;

/// The first attempt's sandbox override (spec 07 step 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxOverride {
    /// Sandbox as the profile and the manager decide.
    NoOverride,
    /// Run the first attempt without the sandbox.
    BypassSandboxFirstAttempt,
}

/// Spec 07 step 4, in order:
/// - any deny-read entry (`unsandboxed_execution_allowed() == false`) → `NoOverride`
///   (spec README invariant 2: deny-read is sticky);
/// - `Skip { bypass_sandbox: true }` → `BypassSandboxFirstAttempt` (invariant 3);
/// - the call requires escalated permissions → `BypassSandboxFirstAttempt` (it was
///   approved, or is forbidden and never runs);
/// - otherwise `NoOverride`.
#[must_use]
pub fn sandbox_override_for_first_attempt(
    sandbox_permissions: SandboxPermissions,
    requirement: &ExecApprovalRequirement,
    fs_policy: &FileSystemSandboxPolicy,
) -> SandboxOverride {
    if !fs_policy.unsandboxed_execution_allowed() {
        return SandboxOverride::NoOverride;
    }
    if matches!(
        requirement,
        ExecApprovalRequirement::Skip {
            bypass_sandbox: true,
            ..
        }
    ) || sandbox_permissions.requires_escalated_permissions()
    {
        SandboxOverride::BypassSandboxFirstAttempt
    } else {
        SandboxOverride::NoOverride
    }
}

/// Whether the first attempt (after any approval) would run inside the platform sandbox:
/// the `sandbox_requested` of spec 07 step 5. `None` for `Forbidden` (nothing runs).
///
/// `BypassSandboxFirstAttempt` → `false`; otherwise
/// [`SandboxManager::should_sandbox`](airlock_sandbox::SandboxManager::should_sandbox)
/// with preference `Auto` (an `External` profile → `false`, spec 05). This is policy
/// intent, independent of whether the host has a sandbox backend (invariant 11).
#[must_use]
pub fn first_attempt_sandboxed(
    sandbox_permissions: SandboxPermissions,
    requirement: &ExecApprovalRequirement,
    fs_policy: &FileSystemSandboxPolicy,
    profile: &airlock_protocol::PermissionProfile,
    managed_network: bool,
) -> Option<bool> {
    if matches!(requirement, ExecApprovalRequirement::Forbidden { .. }) {
        return None;
    }
    match sandbox_override_for_first_attempt(sandbox_permissions, requirement, fs_policy) {
        SandboxOverride::BypassSandboxFirstAttempt => Some(false),
        SandboxOverride::NoOverride => {
            Some(airlock_sandbox::SandboxManager::default().should_sandbox(
                profile,
                airlock_sandbox::SandboxablePreference::Auto,
                managed_network,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use super::*;
    use airlock_protocol::{FileSystemAccessMode, FileSystemSandboxEntry, FileSystemSpecialPath};

    fn skip(bypass_sandbox: bool) -> ExecApprovalRequirement {
        ExecApprovalRequirement::Skip {
            bypass_sandbox,
            proposed_execpolicy_amendment: None,
        }
    }

    fn with_deny_read() -> FileSystemSandboxPolicy {
        FileSystemSandboxPolicy::restricted(vec![
            FileSystemSandboxEntry::special(
                FileSystemSpecialPath::Root,
                FileSystemAccessMode::Read,
            ),
            FileSystemSandboxEntry::path("/secret", FileSystemAccessMode::Deny),
        ])
    }

    #[test]
    fn deny_read_is_sticky() {
        let fs = with_deny_read();
        for permissions in [
            SandboxPermissions::UseDefault,
            SandboxPermissions::RequireEscalated,
        ] {
            assert_eq!(
                sandbox_override_for_first_attempt(permissions, &skip(true), &fs),
                SandboxOverride::NoOverride
            );
        }
    }

    #[test]
    fn bypass_only_for_an_explicit_allow_or_an_escalation() {
        let fs = FileSystemSandboxPolicy::default();
        let ask = ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_execpolicy_amendment: None,
        };
        let use_default = SandboxPermissions::UseDefault;
        assert_eq!(
            sandbox_override_for_first_attempt(use_default, &skip(true), &fs),
            SandboxOverride::BypassSandboxFirstAttempt
        );
        assert_eq!(
            sandbox_override_for_first_attempt(use_default, &skip(false), &fs),
            SandboxOverride::NoOverride
        );
        assert_eq!(
            sandbox_override_for_first_attempt(use_default, &ask, &fs),
            SandboxOverride::NoOverride
        );
        assert_eq!(
            sandbox_override_for_first_attempt(SandboxPermissions::RequireEscalated, &ask, &fs),
            SandboxOverride::BypassSandboxFirstAttempt
        );
        assert_eq!(
            sandbox_override_for_first_attempt(
                SandboxPermissions::WithAdditionalPermissions,
                &ask,
                &fs
            ),
            SandboxOverride::NoOverride
        );
    }

    #[test]
    fn first_attempt_sandboxed_follows_the_override_and_the_profile() {
        let fs = FileSystemSandboxPolicy::default();
        let managed = airlock_permissions::built_in_profile(airlock_permissions::WORKSPACE)
            .expect("built-in");
        let external = airlock_permissions::built_in_profile(airlock_permissions::EXTERNAL_SANDBOX)
            .expect("built-in");
        let forbidden = ExecApprovalRequirement::Forbidden {
            reason: "no".to_owned(),
        };
        let use_default = SandboxPermissions::UseDefault;
        assert_eq!(
            first_attempt_sandboxed(use_default, &forbidden, &fs, &managed, false),
            None
        );
        assert_eq!(
            first_attempt_sandboxed(use_default, &skip(false), &fs, &managed, false),
            Some(true)
        );
        assert_eq!(
            first_attempt_sandboxed(use_default, &skip(true), &fs, &managed, false),
            Some(false)
        );
        let external_fs = FileSystemSandboxPolicy::external_sandbox();
        assert_eq!(
            first_attempt_sandboxed(use_default, &skip(false), &external_fs, &external, false),
            Some(false)
        );
    }
}
