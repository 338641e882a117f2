//! Shared set-up of the requirement tests: policies, filesystem profiles and `Case`,
//! a builder for one requirement computation.

pub(crate) use std::path::{Path, PathBuf};

pub(crate) use airlock_core::requirement::{NEVER_ESCALATION, RequirementOutcome};
pub(crate) use airlock_core::{
    ExecApprovalRequest, ExecPolicyManager, RequirementError,
    create_exec_approval_requirement_for_command,
};
pub(crate) use airlock_execpolicy::{Policy, PolicyParser};
pub(crate) use airlock_protocol::{
    AskForApproval, ExecApprovalRequirement, FileSystemAccessMode, FileSystemSandboxEntry,
    FileSystemSandboxPolicy, FileSystemSpecialPath, GranularApprovalConfig, SandboxPermissions,
};

pub(crate) const WS: &str = "/work/ws";

pub(crate) fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| (*word).to_owned()).collect()
}

pub(crate) fn policy(rules: &str) -> Policy {
    let mut parser = PolicyParser::new();
    parser.parse("test.rules", rules).unwrap();
    parser.build()
}

/// `:workspace`-like: read everything, write the workspace.
pub(crate) fn workspace() -> FileSystemSandboxPolicy {
    FileSystemSandboxPolicy::restricted(vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
        FileSystemSandboxEntry::path(WS, FileSystemAccessMode::Write),
    ])
}

pub(crate) fn deny_read() -> FileSystemSandboxPolicy {
    let mut fs = workspace();
    fs.entries.push(FileSystemSandboxEntry::path(
        "/secret",
        FileSystemAccessMode::Deny,
    ));
    fs
}

pub(crate) fn granular(sandbox_approval: bool, rules: bool) -> AskForApproval {
    AskForApproval::Granular(GranularApprovalConfig {
        sandbox_approval,
        rules,
        skill_approval: false,
        request_permissions: false,
        mcp_elicitations: false,
    })
}

pub(crate) struct Case<'a> {
    rules: &'a str,
    policy: AskForApproval,
    fs: FileSystemSandboxPolicy,
    permissions: SandboxPermissions,
    prefix_rule: Option<Vec<String>>,
    cwd: PathBuf,
}

impl<'a> Case<'a> {
    pub(crate) fn new(rules: &'a str, policy: AskForApproval) -> Self {
        Self {
            rules,
            policy,
            fs: workspace(),
            permissions: SandboxPermissions::UseDefault,
            prefix_rule: None,
            cwd: PathBuf::from(WS),
        }
    }

    pub(crate) fn fs(mut self, fs: FileSystemSandboxPolicy) -> Self {
        self.fs = fs;
        self
    }

    pub(crate) fn escalated(mut self) -> Self {
        self.permissions = SandboxPermissions::RequireEscalated;
        self
    }

    pub(crate) fn prefix(mut self, words: &[&str]) -> Self {
        self.prefix_rule = Some(argv(words));
        self
    }

    pub(crate) fn cwd(mut self, cwd: &Path) -> Self {
        self.cwd = cwd.to_path_buf();
        self
    }

    pub(crate) fn try_run(
        &self,
        command: &[String],
    ) -> Result<RequirementOutcome, RequirementError> {
        let policy = policy(self.rules);
        create_exec_approval_requirement_for_command(
            Some(&policy),
            &ExecApprovalRequest {
                command,
                approval_policy: self.policy,
                file_system_sandbox_policy: &self.fs,
                sandbox_permissions: self.permissions,
                prefix_rule: self.prefix_rule.as_deref(),
                cwd: &self.cwd,
                extra_safe_commands: &[],
            },
        )
    }

    pub(crate) fn run(&self, command: &[&str]) -> ExecApprovalRequirement {
        self.try_run(&argv(command)).unwrap().requirement
    }
}

pub(crate) fn skip(bypass_sandbox: bool, amendment: Option<&[&str]>) -> ExecApprovalRequirement {
    ExecApprovalRequirement::Skip {
        bypass_sandbox,
        proposed_execpolicy_amendment: amendment.map(|words| argv(words).into()),
    }
}

pub(crate) fn is_needs_approval(requirement: &ExecApprovalRequirement) -> bool {
    matches!(requirement, ExecApprovalRequirement::NeedsApproval { .. })
}

pub(crate) fn forbidden_reason(requirement: &ExecApprovalRequirement) -> &str {
    match requirement {
        ExecApprovalRequirement::Forbidden { reason } => reason,
        other => panic!("expected forbidden, got {other:?}"),
    }
}

impl Case<'_> {
    pub(crate) fn clone_with_prefix(&self, words: &[&str]) -> Case<'_> {
        Case {
            rules: self.rules,
            policy: self.policy,
            fs: self.fs.clone(),
            permissions: self.permissions,
            prefix_rule: None,
            cwd: self.cwd.clone(),
        }
        .prefix(words)
    }
}
