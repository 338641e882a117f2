#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The requirement computation over random scripts (proptest) and over every real-world
//! command of `$AIRLOCK_SHARED/conformance/real-world/commands/`: never a panic, and the
//! invariants that make a decision safe hold for every input:
//! - a `Skip { bypass_sandbox: true }` only for a plain command whose every segment an
//!   explicit allow rule matched (spec README invariant 3);
//! - a non-plain command never gets an amendment proposal (spec 03 edge case 5);
//! - `never` never asks (invariant 4), and a dangerous command is never skipped under a
//!   restricted `on-request` policy unless a rule names it exactly (spec 03 edge case 7).

use std::path::{Path, PathBuf};

use airlock_core::{
    ExecApprovalRequest, RequirementOutcome, create_exec_approval_requirement_for_command,
};
use airlock_execpolicy::{Policy, PolicyParser};
use airlock_protocol::{
    AskForApproval, ExecApprovalRequirement, FileSystemAccessMode, FileSystemSandboxEntry,
    FileSystemSandboxPolicy, FileSystemSpecialPath, SandboxPermissions,
};
use proptest::prelude::*;

const RULES: &str = "prefix_rule(pattern=[\"git\", \"pull\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"timeout\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"push\"], decision=\"forbidden\")\n\
prefix_rule(pattern=[\"curl\"], decision=\"prompt\")\n";

fn policy() -> Policy {
    let mut parser = PolicyParser::new();
    parser.parse("test.rules", RULES).unwrap();
    parser.build()
}

fn workspace() -> FileSystemSandboxPolicy {
    FileSystemSandboxPolicy::restricted(vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read),
        FileSystemSandboxEntry::path("/work/ws", FileSystemAccessMode::Write),
    ])
}

fn evaluate(
    policy: &Policy,
    command: &[String],
    approval_policy: AskForApproval,
    sandbox_permissions: SandboxPermissions,
) -> Option<RequirementOutcome> {
    let fs = workspace();
    let outcome = create_exec_approval_requirement_for_command(
        Some(policy),
        &ExecApprovalRequest {
            command,
            approval_policy,
            file_system_sandbox_policy: &fs,
            sandbox_permissions,
            prefix_rule: None,
            cwd: Path::new("/work/ws"),
            extra_safe_commands: &[],
        },
    );
    match outcome {
        Ok(outcome) => Some(outcome),
        Err(_) => {
            assert!(command.iter().any(|token| token.contains('\0')) || command[0].is_empty());
            None
        }
    }
}

/// The invariants of the module doc.
fn check_invariants(outcome: &RequirementOutcome, approval_policy: AskForApproval) {
    let requirement = &outcome.requirement;
    if let ExecApprovalRequirement::Skip {
        bypass_sandbox: true,
        ..
    } = requirement
    {
        assert!(outcome.parsed.plain, "{:?}", outcome.parsed.segments);
        assert!(
            outcome
                .segments
                .iter()
                .all(|segment| segment.allowed_by_rule())
        );
    }
    if !outcome.parsed.plain {
        assert_eq!(requirement.proposed_execpolicy_amendment(), None);
    }
    if approval_policy == AskForApproval::Never {
        assert!(!matches!(
            requirement,
            ExecApprovalRequirement::NeedsApproval { .. }
        ));
    }
    if approval_policy == AskForApproval::OnRequest && outcome.dangerous.is_some() {
        assert!(!matches!(requirement, ExecApprovalRequirement::Skip { .. }));
    }
}

const FRAGMENTS: &[&str] = &[
    "ls",
    "git",
    "pull",
    "push",
    "rm",
    "-rf",
    "-fr",
    "x",
    "/",
    "echo",
    "bash",
    "-c",
    "-lc",
    "sh",
    "sudo",
    "timeout",
    "5",
    "env",
    "LD_PRELOAD=x",
    "FOO=1",
    "export",
    "curl",
    "&&",
    "||",
    ";",
    "|",
    "&",
    "(",
    ")",
    "{",
    "}",
    "$(",
    "`",
    "$",
    "'",
    "\"",
    "<<EOF",
    "EOF",
    "\n",
    ">",
    "2>&1",
    "/dev/null",
    "if",
    "then",
    "fi",
    "cat",
    "xargs",
    "nohup",
    "./git",
    "/tmp/ls",
];

fn script() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..24).prop_map(|words| words.join(" "))
}

fn approval_policy() -> impl Strategy<Value = AskForApproval> {
    prop::sample::select(vec![
        AskForApproval::Never,
        AskForApproval::OnRequest,
        AskForApproval::UnlessTrusted,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_scripts_keep_the_invariants(
        script in script(),
        approval_policy in approval_policy(),
        escalated in any::<bool>(),
        wrapped in any::<bool>(),
    ) {
        let policy = policy();
        let command: Vec<String> = if wrapped {
            vec!["bash".into(), "-lc".into(), script]
        } else {
            script.split(' ').map(str::to_owned).collect()
        };
        let permissions = if escalated {
            SandboxPermissions::RequireEscalated
        } else {
            SandboxPermissions::UseDefault
        };
        if let Some(outcome) = evaluate(&policy, &command, approval_policy, permissions) {
            check_invariants(&outcome, approval_policy);
        }
    }

    #[test]
    fn a_forbidden_first_command_is_always_seen(
        script in script(),
        separator in prop::sample::select(vec!["; ", " && ", " || ", " | ", "\n", " & "]),
    ) {
        // Bash runs `git push` before it meets anything the rest of the script holds
        // (spec 03 edge case 15), so no suffix may hide it.
        let policy = policy();
        let command = vec![
            "bash".to_owned(),
            "-lc".to_owned(),
            format!("git push{separator}{script}"),
        ];
        let outcome = evaluate(&policy, &command, AskForApproval::OnRequest, SandboxPermissions::UseDefault).unwrap();
        prop_assert!(matches!(outcome.requirement, ExecApprovalRequirement::Forbidden { .. }),
            "{:?} → {:?}", command[2], outcome.requirement);
    }
}

/// `$AIRLOCK_SHARED` (as `scripts/test` uses it), else `shared/` beside the work tree.
fn corpus_dir() -> PathBuf {
    std::env::var_os("AIRLOCK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
        .join("conformance/real-world/commands")
}

#[test]
fn real_world_commands_get_a_requirement_without_panic() {
    let policy = policy();
    for file in ["tldr-commands.jsonl", "agent-commands.jsonl"] {
        let Ok(text) = std::fs::read_to_string(corpus_dir().join(file)) else {
            println!("{file}: corpus not present, skipped");
            continue;
        };
        let (mut total, mut plain, mut skip, mut ask, mut forbid) = (0usize, 0, 0, 0, 0);
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let script = record["script"].as_str().unwrap();
            let command = vec!["bash".to_owned(), "-lc".to_owned(), script.to_owned()];
            total += 1;
            for approval_policy in [AskForApproval::OnRequest, AskForApproval::Never] {
                let Some(outcome) = evaluate(
                    &policy,
                    &command,
                    approval_policy,
                    SandboxPermissions::UseDefault,
                ) else {
                    continue;
                };
                check_invariants(&outcome, approval_policy);
                if approval_policy == AskForApproval::OnRequest {
                    plain += usize::from(outcome.parsed.plain);
                    match outcome.requirement {
                        ExecApprovalRequirement::Skip { .. } => skip += 1,
                        ExecApprovalRequirement::NeedsApproval { .. } => ask += 1,
                        ExecApprovalRequirement::Forbidden { .. } => forbid += 1,
                    }
                }
            }
        }
        println!(
            "{file}: {total} commands, {plain} plain; on-request: {skip} skip, {ask} needs approval, {forbid} forbidden"
        );
        assert!(total > 0);
    }
}
