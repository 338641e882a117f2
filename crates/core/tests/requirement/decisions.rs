//! The seeds' matrix, rules and the deny view, heuristics.

use crate::support::*;

// ----------------------------------------------------------------- the seeds' matrix

#[test]
fn seed_never_restricted_skips_without_bypass() {
    let requirement = Case::new("", AskForApproval::Never).run(&["cargo", "build"]);
    assert_eq!(requirement, skip(false, Some(&["cargo", "build"])));
}

#[test]
fn seed_granular_without_sandbox_approval_forbids_sandbox_prompts() {
    let requirement = Case::new("", granular(false, true))
        .escalated()
        .run(&["cargo", "build"]);
    assert_eq!(
        forbidden_reason(&requirement),
        "approval policy disallowed sandbox approval prompt"
    );
}

#[test]
fn seed_external_sandbox_on_request_skips() {
    let requirement = Case::new("", AskForApproval::OnRequest)
        .fs(FileSystemSandboxPolicy::external_sandbox())
        .run(&["cargo", "build"]);
    assert_eq!(requirement, skip(false, Some(&["cargo", "build"])));
}

#[test]
fn seed_partial_allow_of_a_multi_segment_script_does_not_bypass() {
    let case = Case::new(
        "prefix_rule(pattern=[\"git\", \"pull\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    );
    assert_eq!(
        case.run(&["bash", "-lc", "git pull && cargo build"]),
        skip(false, None)
    );
    assert_eq!(case.run(&["bash", "-lc", "git pull"]), skip(true, None));
    assert_eq!(
        case.run(&["bash", "-lc", "git pull && git pull"]),
        skip(true, None)
    );
}

// ------------------------------------------------------------ rules and deny view

#[test]
fn forbidden_reason_names_the_most_specific_rule() {
    let case = Case::new(
        "prefix_rule(pattern=[\"git\"], decision=\"forbidden\")\n\
         prefix_rule(pattern=[\"git\", \"push\"], decision=\"forbidden\", justification=\"no pushes\")\n",
        AskForApproval::OnRequest,
    );
    assert_eq!(
        forbidden_reason(&case.run(&["git", "push", "origin"])),
        "`git push origin` rejected: no pushes"
    );
    assert_eq!(
        forbidden_reason(&case.run(&["git", "status"])),
        "`git status` rejected: policy forbids commands starting with `git`"
    );
}

#[test]
fn prompt_rule_reason_and_no_amendment() {
    let case = Case::new(
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")\n",
        AskForApproval::OnRequest,
    );
    assert_eq!(
        case.run(&["git", "push"]),
        ExecApprovalRequirement::NeedsApproval {
            reason: Some("`git push` requires approval by policy".to_owned()),
            proposed_execpolicy_amendment: None,
        }
    );
}

#[test]
fn deny_view_finds_forbidden_commands_anywhere_but_never_allows() {
    let case = Case::new(
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"forbidden\")\n",
        AskForApproval::OnRequest,
    );
    for script in [
        "(git push)",
        "echo $(git push)",
        "timeout 5 git push",
        "FOO=1 git push",
        "if true; then git push; fi",
        "sh -c 'bash -lc \"git push\"'",
    ] {
        let requirement = case.run(&["bash", "-lc", script]);
        assert!(
            matches!(requirement, ExecApprovalRequirement::Forbidden { .. }),
            "{script}: {requirement:?}"
        );
    }
    // Basename matching ignores host_executable in the deny view (edge case 4).
    let gated = Case::new(
        "host_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n\
         prefix_rule(pattern=[\"git\", \"push\"], decision=\"forbidden\")\n",
        AskForApproval::OnRequest,
    );
    assert!(matches!(
        gated.run(&["/tmp/git", "push"]),
        ExecApprovalRequirement::Forbidden { .. }
    ));
    let allow = Case::new(
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"allow\")\n",
        AskForApproval::UnlessTrusted,
    );
    assert!(is_needs_approval(
        &allow.run(&["timeout", "5", "git", "push"])
    ));
}

#[test]
fn the_outer_wrapper_of_a_segmented_script_is_transport_only() {
    // Decision recorded in `deny.rs`: an exact wrapper whose script was segmented is not
    // matched itself, as Codex treats it; non-plain wrappers are matched as a whole.
    let case = Case::new(
        "prefix_rule(pattern=[\"bash\"], decision=\"forbidden\")\n",
        AskForApproval::OnRequest,
    );
    assert_eq!(case.run(&["bash", "-lc", "ls"]), skip(false, Some(&["ls"])));
    assert!(matches!(
        case.run(&["bash", "-lc", "(ls)"]),
        ExecApprovalRequirement::Forbidden { .. }
    ));
    assert!(matches!(
        case.run(&["bash", "-lc", "bash -c ls"]),
        ExecApprovalRequirement::Forbidden { .. }
    ));
}

// ------------------------------------------------------------------- heuristics

#[test]
fn dangerous_commands_prompt_or_forbid() {
    let on_request = Case::new("", AskForApproval::OnRequest);
    assert!(is_needs_approval(&on_request.run(&["rm", "-rf", "build"])));
    assert!(is_needs_approval(&on_request.run(&[
        "bash",
        "-lc",
        "(rm -rf /tmp/x)"
    ])));
    let never = Case::new("", AskForApproval::Never);
    assert!(
        forbidden_reason(&never.run(&["git", "reset", "--hard"])).contains("blocked by policy")
    );
    let never_open =
        Case::new("", AskForApproval::Never).fs(FileSystemSandboxPolicy::unrestricted());
    assert_eq!(never_open.run(&["rm", "-rf", "/tmp/x"]), skip(false, None));
}

#[test]
fn a_dangerous_command_inside_a_rule_allowed_segment_still_prompts() {
    // Edge cases 7 and 19: the allow rule names `timeout`, not `rm`.
    let case = Case::new(
        "prefix_rule(pattern=[\"timeout\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    );
    assert!(is_needs_approval(
        &case.run(&["timeout", "5", "rm", "-rf", "x"])
    ));
    // A rule naming exactly the dangerous command is the user's explicit choice.
    let exact = Case::new(
        "prefix_rule(pattern=[\"rm\", \"-rf\", \"build\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    );
    assert_eq!(exact.run(&["rm", "-rf", "build"]), skip(true, None));
}

#[test]
fn code_loading_assignments_always_prompt() {
    let case = Case::new(
        "prefix_rule(pattern=[\"env\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    );
    for command in [
        argv(&["env", "LD_PRELOAD=/tmp/x.so", "ls"]),
        argv(&["bash", "-lc", "export GIT_SSH_COMMAND=/tmp/x; git fetch"]),
    ] {
        let outcome = case.try_run(&command).unwrap();
        assert!(is_needs_approval(&outcome.requirement), "{command:?}");
        assert!(!outcome.code_loading_variables.is_empty());
    }
    let forbidding = Case::new("", granular(false, true));
    assert!(matches!(
        forbidding.run(&["env", "LD_PRELOAD=/tmp/x.so", "ls"]),
        ExecApprovalRequirement::Forbidden { .. }
    ));
}

#[test]
fn granular_checks_each_prompt_against_its_own_category() {
    let rules = "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")\n";
    let script = ["bash", "-lc", "git push && rm -rf build"];
    assert!(is_needs_approval(
        &Case::new(rules, granular(true, true)).run(&script)
    ));
    assert!(matches!(
        Case::new(rules, granular(true, false)).run(&script),
        ExecApprovalRequirement::Forbidden { .. }
    ));
    assert!(matches!(
        Case::new(rules, granular(false, true)).run(&script),
        ExecApprovalRequirement::Forbidden { .. }
    ));
    assert!(is_needs_approval(
        &Case::new(rules, granular(false, true)).run(&["git", "push"])
    ));
}

#[test]
fn danger_inside_a_rule_prompted_segment_is_a_rules_prompt_only() {
    // Spec 03 decision 13 (clarified): the rule already prompts, so the dangerous-command
    // heuristic adds no `sandbox_approval` prompt source.
    let rules = "prefix_rule(pattern=[\"rm\"], decision=\"prompt\")\n";
    for command in [
        argv(&["rm", "-rf", "x"]),
        argv(&["bash", "-lc", "rm -rf x && rm -rf y"]),
    ] {
        let outcome = Case::new(rules, granular(false, true))
            .try_run(&command)
            .unwrap();
        assert!(is_needs_approval(&outcome.requirement), "{command:?}");
        assert!(outcome.dangerous.is_none(), "{command:?}");
        // With rules prompts rejected it is forbidden as a rules prompt.
        assert!(matches!(
            Case::new(rules, granular(true, false))
                .try_run(&command)
                .unwrap()
                .requirement,
            ExecApprovalRequirement::Forbidden { .. }
        ));
    }
    // An unmatched dangerous segment next to the prompted one still raises the decision.
    let mixed = argv(&["bash", "-lc", "rm -rf x && git reset --hard"]);
    let outcome = Case::new(rules, granular(false, true))
        .try_run(&mixed)
        .unwrap();
    assert!(outcome.dangerous.is_some());
    assert!(matches!(
        outcome.requirement,
        ExecApprovalRequirement::Forbidden { .. }
    ));
    // A danger under an allow rule for a wrapper still counts (decision 19).
    let wrapper = "prefix_rule(pattern=[\"timeout\"], decision=\"allow\")\n";
    assert!(matches!(
        Case::new(wrapper, granular(false, true)).run(&["timeout", "5", "rm", "-rf", "x"]),
        ExecApprovalRequirement::Forbidden { .. }
    ));
}
