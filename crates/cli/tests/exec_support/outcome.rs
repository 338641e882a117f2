//! Helpers for inspecting library-session outcomes: scripted answers, attempts, sources.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use airlock_approval::ApprovalEvent;
use airlock_approval::DecisionSource;
use airlock_core::AuditRecord;
use airlock_core::ShellCallOutcome;
use airlock_core::ToolError;
use airlock_protocol::ReviewDecision;
use airlock_sandbox::SandboxType;

use super::Answer;
use super::Dirs;

/// The Linux platform sandbox.
pub const LINUX: SandboxType = SandboxType::LinuxSeccomp;

/// A scripted user giving `decision` to every prompt.
pub fn approve(decision: ReviewDecision) -> Box<Answer> {
    Box::new(move |_| Some(decision.clone()))
}

/// A scripted user accepting the amendment each prompt offers.
pub fn approve_amendment() -> Box<Answer> {
    Box::new(|event| match event {
        ApprovalEvent::ExecApprovalRequest(request) => request
            .decisions()
            .into_iter()
            .find(|d| matches!(d, ReviewDecision::ApprovedExecpolicyAmendment { .. })),
        _ => None,
    })
}

/// (sandbox type, denied) per attempt.
pub fn sandboxes(record: &AuditRecord) -> Vec<(SandboxType, bool)> {
    record
        .trace
        .attempts
        .iter()
        .map(|a| (a.sandbox, a.sandbox_denied))
        .collect()
}

/// Who decided, per approval.
pub fn sources(record: &AuditRecord) -> Vec<DecisionSource> {
    record.trace.approvals.iter().map(|a| a.source).collect()
}

/// The exit code of a call that ran (panics otherwise).
pub fn exit_code(outcome: &ShellCallOutcome) -> i32 {
    match &outcome.result {
        Ok(output) => output.exit_code,
        Err(error) => panic!("expected the command to run, got {error:?}"),
    }
}

/// (message, interrupts_turn) of a rejected call (panics otherwise).
pub fn rejection(outcome: &ShellCallOutcome) -> (String, bool) {
    match &outcome.result {
        Err(ToolError::Rejected {
            message,
            interrupts_turn,
        }) => (message.clone(), *interrupts_turn),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

/// The symbolic `secretive` profile of [`Dirs::deny_read_profile_toml`].
pub fn deny_read_profile(dirs: &Dirs) -> airlock_protocol::PermissionProfile {
    let env = airlock_permissions::ConfigEnv {
        airlock_home: dirs.home.clone(),
        home: None,
    };
    let config = airlock_permissions::AirlockConfig::from_toml_str(
        &dirs.deny_read_profile_toml(),
        &dirs.home.join("config.toml"),
        &env,
    )
    .unwrap();
    airlock_permissions::select_permission_profile(&config, None, &dirs.ws)
        .unwrap()
        .symbolic()
        .clone()
}
