//! The inputs of the requirement computation.

use std::path::Path;

use airlock_protocol::{AskForApproval, FileSystemSandboxPolicy, SandboxPermissions};
use airlock_shell::ExtraSafeCommand;

/// One proposed command and the settings that decide its requirement (Codex's
/// `ExecApprovalRequest`, reference §6–8).
#[derive(Debug, Clone, Copy)]
pub struct ExecApprovalRequest<'a> {
    /// The argv exactly as the model sent it.
    pub command: &'a [String],
    /// The turn's approval policy.
    pub approval_policy: AskForApproval,
    /// The runtime filesystem policy of the environment the command runs in (symbolic
    /// or materialised; only its kind, its deny entries and its writable roots are read).
    pub file_system_sandbox_policy: &'a FileSystemSandboxPolicy,
    /// What the tool call asks for (`use_default`, `require_escalated`,
    /// `with_additional_permissions`).
    pub sandbox_permissions: SandboxPermissions,
    /// The model-requested amendment prefix (`prefix_rule` tool argument), if any.
    pub prefix_rule: Option<&'a [String]>,
    /// The command's working directory: relative program paths resolve against it, and
    /// symbolic writable roots materialise against it.
    pub cwd: &'a Path,
    /// `[shell] extra_safe_commands` from the configuration (spec 03 "Known-safe").
    pub extra_safe_commands: &'a [ExtraSafeCommand],
}
