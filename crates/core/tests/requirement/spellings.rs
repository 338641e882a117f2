//! Spellings that must not get a command past a `forbidden` or `prompt` rule
//! (issue 18; field log entries named per test).

use crate::support::*;

const PYTHON_ALLOWED: &str = "prefix_rule(pattern=[\"python3\"], decision=\"allow\")\n";
const PYTHON_ALLOWED_RM_FORBIDDEN: &str = "prefix_rule(pattern=[\"python3\"], decision=\"allow\")\n\
     prefix_rule(pattern=[\"rm\"], decision=\"forbidden\")\n";

fn is_forbidden(requirement: &ExecApprovalRequirement) -> bool {
    matches!(requirement, ExecApprovalRequirement::Forbidden { .. })
}

// --------------------------------------------------------- item 1: heredocs (BL-08)

#[test]
fn heredoc_body_backticks_are_not_allowed_by_the_interpreter_rule() {
    let untrusted = Case::new(PYTHON_ALLOWED, AskForApproval::UnlessTrusted);
    for script in [
        "python3 <<PY\n`rm -rf /ws/x`\nPY",
        "python3 - <<PY\nprint(\"`touch ~/pwned`\")\nPY",
    ] {
        let requirement = untrusted.run(&["bash", "-lc", script]);
        assert!(is_needs_approval(&requirement), "{script:?}: {requirement:?}");
    }
    let forbidding = Case::new(PYTHON_ALLOWED_RM_FORBIDDEN, AskForApproval::OnRequest);
    for script in [
        "python3 <<PY\n`rm -rf /ws/x`\nPY",
        // BL-08 as filed: the `$(...)` spelling.
        "python3 - <<PY\n$(rm -rf /ws/x)\nPY",
    ] {
        let requirement = forbidding.run(&["bash", "-lc", script]);
        assert!(is_forbidden(&requirement), "{script:?}: {requirement:?}");
    }
}

#[test]
fn quoted_heredoc_keeps_the_single_command_form() {
    // Control: a quoted delimiter makes the body data; the python3 rule applies
    // (matching only: no bypass, decision 5).
    let untrusted = Case::new(PYTHON_ALLOWED, AskForApproval::UnlessTrusted);
    assert_eq!(
        untrusted.run(&["bash", "-lc", "python3 <<'PY'\nprint(`x`)\nPY"]),
        skip(false, None)
    );
}

#[test]
fn heredoc_followed_by_a_command_on_the_operator_line() {
    let forbidding = Case::new(PYTHON_ALLOWED_RM_FORBIDDEN, AskForApproval::OnRequest);
    let untrusted = Case::new(PYTHON_ALLOWED, AskForApproval::UnlessTrusted);
    for script in [
        "python3 <<PY ; rm -rf x\nprint(1)\nPY",
        "python3 <<PY && rm -rf x\nprint(1)\nPY",
        // BL-08's second variant: the command on the line after the terminator.
        "python3 - <<'PY'\nprint(1)\nPY\nrm -rf /ws/x",
    ] {
        let requirement = forbidding.run(&["bash", "-lc", script]);
        assert!(is_forbidden(&requirement), "{script:?}: {requirement:?}");
        let requirement = untrusted.run(&["bash", "-lc", script]);
        assert!(is_needs_approval(&requirement), "{script:?}: {requirement:?}");
    }
}
