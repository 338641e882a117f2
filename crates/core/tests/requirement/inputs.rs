//! Bad input and policy loading: conservative answers, failing closed.

use crate::support::*;

// ------------------------------------------------------------------ bad input

#[test]
fn unusable_argv_is_an_input_error() {
    let case = Case::new(
        "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n",
        AskForApproval::Never,
    );
    for command in [
        argv(&[]),
        argv(&[""]),
        argv(&["", "-lc", "ls"]),
        argv(&["ls", "a\0b"]),
    ] {
        assert!(
            matches!(
                case.try_run(&command),
                Err(RequirementError::InvalidCommand(_))
            ),
            "{command:?}"
        );
    }
}

#[test]
fn degenerate_scripts_are_conservative() {
    let case = Case::new(
        "prefix_rule(pattern=[\"bash\", \"-lc\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    );
    for script in ["", "   ", "\t\n", "ls &&", "'", ";", "echo \u{0}"] {
        let command = argv(&["bash", "-lc", script]);
        match case.try_run(&command) {
            Err(RequirementError::InvalidCommand(_)) => assert!(script.contains('\0')),
            Ok(outcome) => {
                assert!(!outcome.parsed.plain, "{script:?}");
                assert!(
                    !matches!(
                        outcome.requirement,
                        ExecApprovalRequirement::Skip {
                            bypass_sandbox: true,
                            ..
                        }
                    ),
                    "{script:?} must never bypass"
                );
                assert_eq!(outcome.requirement.proposed_execpolicy_amendment(), None);
            }
            Err(other) => panic!("{other}"),
        }
    }
}

#[test]
fn a_huge_script_is_never_allowed_without_asking() {
    let case = Case::new(
        "prefix_rule(pattern=[\"bash\", \"-lc\"], decision=\"allow\")\n",
        AskForApproval::OnRequest,
    );
    let script = "echo hi; ".repeat(200_000);
    let requirement = case.run(&["bash", "-lc", &script]);
    assert!(is_needs_approval(&requirement), "{requirement:?}");
}

// ------------------------------------------------------------- policy loading

#[test]
fn an_unloadable_rules_file_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.rules");
    std::fs::write(
        &broken,
        "prefix_rule(pattern=[\"ls\"], decision=\"maybe\")\n",
    )
    .unwrap();
    let manager = ExecPolicyManager::load_files(vec![broken]);
    assert!(manager.policy().is_none());
    assert!(manager.warnings()[0].contains("every command will need approval"));
    let fs = workspace();
    let command = argv(&["ls"]);
    let request = |approval_policy| ExecApprovalRequest {
        command: &command,
        approval_policy,
        file_system_sandbox_policy: &fs,
        sandbox_permissions: SandboxPermissions::UseDefault,
        prefix_rule: None,
        cwd: Path::new(WS),
        extra_safe_commands: &[],
    };
    let outcome = manager
        .create_exec_approval_requirement_for_command(&request(AskForApproval::OnRequest))
        .unwrap();
    assert!(is_needs_approval(&outcome.requirement));
    assert!(outcome.policy_unavailable.is_some());
    let never = manager
        .create_exec_approval_requirement_for_command(&request(AskForApproval::Never))
        .unwrap();
    assert!(matches!(
        never.requirement,
        ExecApprovalRequirement::Forbidden { .. }
    ));
    let missing = ExecPolicyManager::load_files(vec![dir.path().join("missing.rules")]);
    assert!(missing.policy().is_none());
}

/// Issue 17: while one file fails to load, the `forbidden` rules of the files that did
/// load still refuse (naming the rule and the failed load); their `allow` and `prompt`
/// rules do not apply, so everything else needs approval; a forbidden rule of the broken
/// file itself is not used.
#[test]
fn forbidden_rules_of_loaded_files_survive_a_broken_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.rules");
    std::fs::write(
        &good,
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no deleting\")\n\
         prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n",
    )
    .unwrap();
    let broken = dir.path().join("broken.rules");
    std::fs::write(
        &broken,
        "prefix_rule(pattern=[\"cat\"], decision=\"forbidden\")\nprefix_rule(pattern=[\"x\"], decision=\"maybe\")\n",
    )
    .unwrap();
    let manager = ExecPolicyManager::load_files(vec![good, broken]);
    assert!(manager.policy().is_none());
    let fs = workspace();
    let decide = |words: &[&str]| {
        let command = argv(words);
        manager
            .create_exec_approval_requirement_for_command(&ExecApprovalRequest {
                command: &command,
                approval_policy: AskForApproval::OnRequest,
                file_system_sandbox_policy: &fs,
                sandbox_permissions: SandboxPermissions::UseDefault,
                prefix_rule: None,
                cwd: Path::new(WS),
                extra_safe_commands: &[],
            })
            .unwrap()
    };
    let rm = decide(&["rm", "-rf", "x"]);
    let ExecApprovalRequirement::Forbidden { reason } = &rm.requirement else {
        panic!("{:?}", rm.requirement);
    };
    assert!(reason.contains("no deleting"), "{reason}");
    assert!(reason.contains("forbidden by rule [\"rm\"]"), "{reason}");
    assert!(
        reason.contains("another rules file failed to load"),
        "{reason}"
    );
    assert!(rm.policy_unavailable.is_some());
    // Inside a script too (the deny view).
    assert!(matches!(
        decide(&["bash", "-lc", "echo hi && rm -rf x"]).requirement,
        ExecApprovalRequirement::Forbidden { .. }
    ));
    let ls = decide(&["ls"]);
    assert!(is_needs_approval(&ls.requirement), "{:?}", ls.requirement);
    assert!(ls.policy_unavailable.is_some());
    assert!(is_needs_approval(&decide(&["cat", "f"]).requirement));
}

#[test]
fn explicit_rules_replace_the_configured_ones() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rules")).unwrap();
    std::fs::write(home.path().join("rules/a.rules"), "this is not starlark(\n").unwrap();
    let explicit = home.path().join("explicit.rules");
    std::fs::write(
        &explicit,
        "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n",
    )
    .unwrap();
    let sources = airlock_core::ExecPolicySources {
        airlock_home: Some(home.path().to_path_buf()),
        trusted_project: None,
        explicit_rules: vec![explicit.clone()],
    };
    let manager = ExecPolicyManager::load(&sources);
    assert!(manager.policy().is_some());
    assert_eq!(manager.files(), [explicit]);
    let configured = ExecPolicyManager::load(&airlock_core::ExecPolicySources {
        explicit_rules: Vec::new(),
        ..sources
    });
    assert!(configured.policy().is_none());
}

#[test]
fn prompt_causes_list_every_reason_with_its_category() {
    use airlock_core::PromptSource;
    use airlock_core::requirement::PromptKind;
    let case = Case::new(
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\")\n",
        AskForApproval::UnlessTrusted,
    );
    let outcome = case
        .try_run(&argv(&["bash", "-lc", "git push && make && rm -rf x"]))
        .unwrap();
    let kinds: Vec<(PromptKind, PromptSource)> = outcome
        .prompt_causes
        .iter()
        .map(|cause| (cause.kind, cause.source))
        .collect();
    assert_eq!(
        kinds,
        [
            (PromptKind::Rule, PromptSource::Rule),
            (PromptKind::Fallback, PromptSource::Heuristic),
            (PromptKind::Fallback, PromptSource::Heuristic),
            (PromptKind::Dangerous, PromptSource::Heuristic),
        ]
    );
    let only_rule = case.try_run(&argv(&["git", "push"])).unwrap();
    assert!(
        only_rule
            .prompt_causes
            .iter()
            .all(|cause| cause.source == PromptSource::Rule)
    );
    assert!(!only_rule.prompt_causes.is_empty());
}
