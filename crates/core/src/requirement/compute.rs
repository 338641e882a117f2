//! `create_exec_approval_requirement_for_command` (spec 03 "Policy evaluation over
//! segments", reference §7).

use airlock_execpolicy::Policy;

use super::error::RequirementError;
use super::outcome::RequirementOutcome;
use super::request::ExecApprovalRequest;

/// Computes the requirement of `request.command` under `policy` (`None` = the exec policy
/// is unavailable: every command needs approval, spec 02 fail closed).
///
/// # Errors
/// [`RequirementError::InvalidCommand`] for an empty argv, an empty program or a NUL byte
/// (spec 03 edge case 16).
pub fn create_exec_approval_requirement_for_command(
    policy: Option<&Policy>,
    request: &ExecApprovalRequest<'_>,
) -> Result<RequirementOutcome, RequirementError> {
    let _ = (policy, request);
    todo_requirement(request)
}

fn todo_requirement(
    request: &ExecApprovalRequest<'_>,
) -> Result<RequirementOutcome, RequirementError> {
    let parsed = airlock_shell::parse_command(request.command)?;
    Ok(RequirementOutcome {
        parsed,
        segments: Vec::new(),
        deny_view_matches: Vec::new(),
        dangerous: None,
        code_loading_variables: Vec::new(),
        prompt_causes: Vec::new(),
        decision: airlock_execpolicy::Decision::Prompt,
        policy_unavailable: None,
        requirement: airlock_protocol::ExecApprovalRequirement::NeedsApproval {
            reason: Some("not implemented yet".to_owned()),
            proposed_execpolicy_amendment: None,
        },
    })
}
