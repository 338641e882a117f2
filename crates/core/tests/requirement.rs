#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The requirement computation end to end: the seeds' matrix of issue 5, every decision
//! source, spec 03 edge cases 12, 18 and 19, the red-team rule on program paths,
//! amendments and bad input.

use std::path::{Path, PathBuf};

use airlock_core::requirement::{NEVER_ESCALATION, RequirementOutcome};
use airlock_core::{
    ExecApprovalRequest, ExecPolicyManager, RequirementError,
    create_exec_approval_requirement_for_command,
};
use airlock_execpolicy::{Policy, PolicyParser};
use airlock_protocol::{
    AskForApproval, ExecApprovalRequirement, FileSystemAccessMode, FileSystemSandboxEntry,
    FileSystemSandboxPolicy, FileSystemSpecialPath, GranularApprovalConfig, SandboxPermissions,
};

const WS: &str = "/work/ws";

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| (*word).to_owned()).collect()
}

fn policy(rules: &str) -> Policy {
    let mut parser = PolicyParser::new();
    parser.parse("test.rules", rules).unwrap();
    parser.build()
}

/// `:workspace`-like: read everything, write the workspace.
fn workspace() -> FileSystemSandboxPolicy {
    FileSystemSandboxPolicy::restricted(vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
        FileSystemSandboxEntry::path(WS, FileSystemAccessMode::Write),
    ])
}

fn deny_read() -> FileSystemSandboxPolicy {
    let mut fs = workspace();
    fs.entries.push(FileSystemSandboxEntry::path(
        "/secret",
        FileSystemAccessMode::Deny,
    ));
    fs
}

fn granular(sandbox_approval: bool, rules: bool) -> AskForApproval {
    AskForApproval::Granular(GranularApprovalConfig {
        sandbox_approval,
        rules,
        skill_approval: false,
        request_permissions: false,
        mcp_elicitations: false,
    })
}

struct Case<'a> {
    rules: &'a str,
    policy: AskForApproval,
    fs: FileSystemSandboxPolicy,
    permissions: SandboxPermissions,
    prefix_rule: Option<Vec<String>>,
    cwd: PathBuf,
}

impl<'a> Case<'a> {
    fn new(rules: &'a str, policy: AskForApproval) -> Self {
        Self {
            rules,
            policy,
            fs: workspace(),
            permissions: SandboxPermissions::UseDefault,
            prefix_rule: None,
            cwd: PathBuf::from(WS),
        }
    }

    fn fs(mut self, fs: FileSystemSandboxPolicy) -> Self {
        self.fs = fs;
        self
    }

    fn escalated(mut self) -> Self {
        self.permissions = SandboxPermissions::RequireEscalated;
        self
    }

    fn prefix(mut self, words: &[&str]) -> Self {
        self.prefix_rule = Some(argv(words));
        self
    }

    fn cwd(mut self, cwd: &Path) -> Self {
        self.cwd = cwd.to_path_buf();
        self
    }

    fn try_run(&self, command: &[String]) -> Result<RequirementOutcome, RequirementError> {
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

    fn run(&self, command: &[&str]) -> ExecApprovalRequirement {
        self.try_run(&argv(command)).unwrap().requirement
    }
}

fn skip(bypass_sandbox: bool, amendment: Option<&[&str]>) -> ExecApprovalRequirement {
    ExecApprovalRequirement::Skip {
        bypass_sandbox,
        proposed_execpolicy_amendment: amendment.map(|words| argv(words).into()),
    }
}

fn is_needs_approval(requirement: &ExecApprovalRequirement) -> bool {
    matches!(requirement, ExecApprovalRequirement::NeedsApproval { .. })
}

fn forbidden_reason(requirement: &ExecApprovalRequirement) -> &str {
    match requirement {
        ExecApprovalRequirement::Forbidden { reason } => reason,
        other => panic!("expected forbidden, got {other:?}"),
    }
}

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

impl Case<'_> {
    fn clone_with_prefix(&self, words: &[&str]) -> Case<'_> {
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
