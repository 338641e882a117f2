//! Escalation (spec 03 edge case 19), program paths (edge case 18 and the red-team
//! rule) and amendments.

use crate::support::*;

// ------------------------------------------------------------------- escalation

#[test]
fn escalation_under_never_is_forbidden_first() {
    let case = Case::new(
        "prefix_rule(pattern=[\"cargo\"], decision=\"allow\")\n",
        AskForApproval::Never,
    )
    .escalated();
    assert_eq!(
        forbidden_reason(&case.run(&["cargo", "build"])),
        NEVER_ESCALATION
    );
}

#[test]
fn escalation_needs_approval_unless_every_plain_segment_is_rule_allowed() {
    let case = Case::new(
        "prefix_rule(pattern=[\"cargo\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    )
    .escalated();
    assert_eq!(case.run(&["cargo", "build"]), skip(true, None));
    // Edge case 19: known-safe commands and untrusted alike.
    assert!(is_needs_approval(&case.run(&["ls", "/root"])));
    assert!(is_needs_approval(&case.run(&[
        "bash",
        "-lc",
        "cargo build && ls"
    ])));
    assert!(is_needs_approval(&case.run(&[
        "bash",
        "-lc",
        "(cargo build)"
    ])));
    let untrusted = Case::new("", AskForApproval::UnlessTrusted).escalated();
    assert!(is_needs_approval(&untrusted.run(&["ls"])));
    // Under granular an escalation is a sandbox-approval prompt whatever rules matched.
    let rule_prompt = Case::new(
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")\n",
        granular(false, true),
    )
    .escalated();
    assert!(matches!(
        rule_prompt.run(&["git", "push"]),
        ExecApprovalRequirement::Forbidden { .. }
    ));
}

#[test]
fn escalation_on_an_unrestricted_or_external_filesystem_follows_the_fallback() {
    for fs in [
        FileSystemSandboxPolicy::unrestricted(),
        FileSystemSandboxPolicy::external_sandbox(),
    ] {
        let case = Case::new("", AskForApproval::OnRequest).fs(fs).escalated();
        assert_eq!(
            case.run(&["cargo", "build"]),
            skip(false, Some(&["cargo", "build"]))
        );
    }
}

#[test]
fn deny_read_does_not_change_the_requirement() {
    let case = Case::new(
        "prefix_rule(pattern=[\"cargo\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    )
    .fs(deny_read());
    assert_eq!(case.run(&["cargo", "build"]), skip(true, None));
}

// -------------------------------------------- program paths (edge case 18, red team)

#[test]
fn allow_rules_reach_path_spelled_programs_only_when_trusted() {
    let rules = "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n\
                 prefix_rule(pattern=[\"git\"], decision=\"allow\")\n";
    let case = Case::new(rules, AskForApproval::UnlessTrusted);
    // Trusted directory: the allow applies and the program may bypass.
    assert_eq!(case.run(&["/usr/bin/git", "status"]), skip(true, None));
    // Untrusted paths: the allow rule does not apply; heuristics decide.
    assert!(is_needs_approval(&case.run(&["/tmp/ls", "-la"])));
    assert!(is_needs_approval(&case.run(&["./git", "status"])));
    let on_request = Case::new(rules, AskForApproval::OnRequest);
    assert_eq!(
        on_request.run(&["/tmp/ls"]),
        skip(false, Some(&["/tmp/ls"]))
    );
}

#[test]
fn a_planted_program_in_a_writable_root_never_bypasses() {
    let ws = tempfile::tempdir().unwrap();
    let planted = ws.path().join("git");
    std::fs::write(&planted, "#!/bin/sh\n").unwrap();
    let planted = planted.display().to_string();
    let rules = format!(
        "host_executable(name=\"git\", paths=[\"{planted}\"])\n\
         prefix_rule(pattern=[\"git\"], decision=\"allow\")\n\
         prefix_rule(pattern=[\"./git\"], decision=\"allow\")\n"
    );
    let fs = FileSystemSandboxPolicy::restricted(vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
        FileSystemSandboxEntry::path(ws.path(), FileSystemAccessMode::Write),
    ]);
    let case = Case::new(&rules, AskForApproval::OnRequest)
        .fs(fs)
        .cwd(ws.path());
    // Registered with host_executable: the allow applies (edge case 18) but, inside a
    // writable root, it never unsandboxes the command.
    assert_eq!(case.run(&[&planted, "status"]), skip(false, None));
    // Relative spellings never bypass, even with an exact rule for them.
    assert_eq!(case.run(&["./git", "status"]), skip(false, None));
    // A bare name matches as Codex does.
    assert_eq!(case.run(&["git", "status"]), skip(true, None));
}

// --------------------------------------------------------------------- amendments

#[test]
fn model_prefix_rules_are_accepted_only_when_they_allow_every_segment() {
    let case = Case::new("", AskForApproval::UnlessTrusted);
    let requirement =
        case.clone_with_prefix(&["cargo"])
            .run(&["bash", "-lc", "cargo build && cargo test"]);
    assert_eq!(
        requirement
            .proposed_execpolicy_amendment()
            .map(|a| a.command().to_vec()),
        Some(argv(&["cargo"]))
    );
    // Does not cover `make test`: falls back to the heuristic proposal.
    let partial =
        case.clone_with_prefix(&["cargo"])
            .run(&["bash", "-lc", "cargo build && make test"]);
    assert_eq!(
        partial
            .proposed_execpolicy_amendment()
            .map(|a| a.command().to_vec()),
        Some(argv(&["cargo", "build"]))
    );
    // Banned and exec-wrapper prefixes are refused.
    for prefix in [&["python3"][..], &["sudo", "cargo"], &["bash", "-lc"]] {
        let refused = case.clone_with_prefix(prefix).run(&["python3", "x.py"]);
        assert_ne!(
            refused
                .proposed_execpolicy_amendment()
                .map(|a| a.command().to_vec()),
            Some(argv(prefix))
        );
    }
}

#[test]
fn heuristic_proposals_never_fall_back_to_a_later_segment() {
    let case = Case::new("", AskForApproval::UnlessTrusted);
    let requirement = case.run(&["bash", "-lc", "rm -rf build && make test"]);
    assert!(is_needs_approval(&requirement));
    assert_eq!(requirement.proposed_execpolicy_amendment(), None);
    let non_plain = case.run(&["bash", "-lc", "make test > log"]);
    assert_eq!(non_plain.proposed_execpolicy_amendment(), None);
}
