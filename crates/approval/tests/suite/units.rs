//! Pure functions: cache keys, canonical commands, tool-result mapping, hook output, reviewer
//! verdicts, available decisions and configuration errors.

use std::path::PathBuf;

use airlock_approval::*;
use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::NetworkApprovalProtocol;
use airlock_protocol::NetworkPermissions;
use airlock_protocol::NetworkPolicyAmendment;
use airlock_protocol::NetworkPolicyRuleAction;
use airlock_protocol::ReviewDecision;
use airlock_protocol::SandboxPermissions;
use pretty_assertions::assert_eq;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn command(words: &[&str]) -> CommandAction {
    CommandAction::new("c", argv(words), "/w")
}

#[test]
fn canonical_command_merges_wrapper_spellings_and_nothing_more() {
    let plain = argv(&["ls", "-la"]);
    assert_eq!(
        canonicalize_command_for_approval(&argv(&["bash", "-lc", "ls -la"])),
        plain
    );
    assert_eq!(
        canonicalize_command_for_approval(&argv(&["/bin/zsh", "-c", "ls -la"])),
        plain
    );
    assert_eq!(canonicalize_command_for_approval(&plain), plain);
    let script = canonicalize_command_for_approval(&argv(&["bash", "-lc", "ls && pwd"]));
    assert_eq!(script, argv(&[SHELL_SCRIPT_MARKER, "-lc", "ls && pwd"]));
    assert_eq!(
        canonicalize_command_for_approval(&argv(&["zsh", "-lc", "ls && pwd"])),
        script
    );
    assert_ne!(
        canonicalize_command_for_approval(&argv(&["zsh", "-c", "ls && pwd"])),
        script
    );
    // Positional parameters change what the script does: left alone.
    let extended = argv(&["bash", "-c", "rm \"$1\"", "sh", "a"]);
    assert_eq!(canonicalize_command_for_approval(&extended), extended);
}

#[test]
fn command_keys_include_everything_that_changes_the_risk() {
    let base = ApprovalAction::Shell(command(&["make"]));
    let key = |action: &ApprovalAction| action.cache_keys();
    let mut variants = Vec::new();
    let mut other_cwd = command(&["make"]);
    other_cwd.cwd = PathBuf::from("/elsewhere");
    variants.push(ApprovalAction::Shell(other_cwd));
    let mut env = command(&["make"]);
    env.environment_id = Some("remote-1".to_owned());
    variants.push(ApprovalAction::Shell(env));
    let mut escalated = command(&["make"]);
    escalated.sandbox_permissions = SandboxPermissions::RequireEscalated;
    variants.push(ApprovalAction::Shell(escalated));
    let mut extra = command(&["make"]);
    extra.additional_permissions = Some(AdditionalPermissionProfile {
        network: Some(NetworkPermissions {
            enabled: Some(true),
        }),
        file_system: None,
    });
    variants.push(ApprovalAction::Shell(extra));
    variants.push(ApprovalAction::ExecCommand(ExecCommandAction {
        command: command(&["make"]),
        tty: false,
    }));
    variants.push(ApprovalAction::Shell(command(&["make", "install"])));
    for variant in &variants {
        assert_ne!(key(variant), key(&base), "{variant:?}");
    }
    let tty = ApprovalAction::ExecCommand(ExecCommandAction {
        command: command(&["make"]),
        tty: true,
    });
    assert_ne!(key(&tty), key(&variants[4]));
    // Justification does not change what runs.
    let mut justified = command(&["make"]);
    justified.justification = Some("build".to_owned());
    assert_eq!(key(&ApprovalAction::Shell(justified)), key(&base));
}

#[test]
fn patch_has_one_key_per_file() {
    let patch = ApprovalAction::ApplyPatch(PatchAction {
        id: "p".to_owned(),
        environment_id: None,
        cwd: PathBuf::from("/w"),
        files: vec![PathBuf::from("/w/a"), PathBuf::from("/w/b")],
        patch: String::new(),
        changes: Default::default(),
        permissions_preapproved: false,
    });
    let keys = patch.cache_keys();
    assert_eq!(keys.len(), 2);
    assert_eq!(
        serde_json::to_value(&keys[0]).unwrap(),
        serde_json::json!({"kind": "patch_file", "environment_id": null, "path": "/w/a"})
    );
}

#[tokio::test]
async fn with_cached_approval_needs_every_key() {
    let store = ApprovalStore::new();
    let keys = |files: &[&str]| -> Vec<ApprovalCacheKey> {
        files
            .iter()
            .map(|f| ApprovalCacheKey::PatchFile {
                environment_id: None,
                path: PathBuf::from(f),
            })
            .collect()
    };
    let first = with_cached_approval(&store, "", &keys(&["/a", "/b"]), || async {
        ReviewDecision::ApprovedForSession
    })
    .await;
    assert!(!first.from_cache);
    let subset = with_cached_approval(&store, "", &keys(&["/b"]), || async {
        ReviewDecision::denied()
    })
    .await;
    assert_eq!(
        subset,
        CachedApproval {
            decision: ReviewDecision::ApprovedForSession,
            from_cache: true
        }
    );
    let wider = with_cached_approval(&store, "", &keys(&["/b", "/c"]), || async {
        ReviewDecision::Approved
    })
    .await;
    assert_eq!(wider.decision, ReviewDecision::Approved);
    let other_scope = with_cached_approval(&store, "profile-2", &keys(&["/a"]), || async {
        ReviewDecision::Approved
    })
    .await;
    assert!(!other_scope.from_cache);
    let none = with_cached_approval(&store, "", &[], || async {
        ReviewDecision::ApprovedForSession
    })
    .await;
    assert!(!none.from_cache);
    assert_eq!(store.len(), 2, "no keys → nothing stored");
}

#[test]
fn hook_payload_projection() {
    let mut shell = command(&["bash", "-lc", "git push origin main"]);
    shell.justification = Some("publish".to_owned());
    let payload = ApprovalAction::Shell(shell).hook_payload();
    assert_eq!(payload.tool_name, "Bash");
    assert_eq!(
        payload.tool_input,
        serde_json::json!({"command": "git push origin main", "description": "publish"})
    );
    let exec = ApprovalAction::ExecCommand(ExecCommandAction {
        command: command(&["ls", "a b"]),
        tty: true,
    });
    assert_eq!(
        exec.hook_payload().tool_input,
        serde_json::json!({"command": "ls 'a b'"})
    );
    let patch = ApprovalAction::ApplyPatch(PatchAction {
        id: "p".to_owned(),
        environment_id: None,
        cwd: PathBuf::from("/w"),
        files: vec![],
        patch: "*** Begin Patch".to_owned(),
        changes: Default::default(),
        permissions_preapproved: false,
    });
    let payload = patch.hook_payload();
    assert_eq!(payload.tool_name, "apply_patch");
    assert_eq!(
        payload.tool_input,
        serde_json::json!({"command": "*** Begin Patch"})
    );
    assert_eq!(
        payload.matcher_names(),
        vec!["apply_patch", "Write", "Edit"]
    );
}

#[test]
fn action_json_is_tagged_by_tool() {
    let exec = ApprovalAction::ExecCommand(ExecCommandAction {
        command: command(&["ls"]),
        tty: true,
    });
    assert_eq!(
        serde_json::to_value(&exec).unwrap(),
        serde_json::json!({"tool": "exec_command", "id": "c", "command": ["ls"], "cwd": "/w",
                           "sandbox_permissions": "use_default", "tty": true})
    );
}

#[test]
fn into_tool_result_maps_every_decision() {
    let resolve = |decision: ReviewDecision, source: DecisionSource| {
        ApprovalResolution::new(decision, source, std::time::Duration::from_millis(3))
            .into_tool_result()
    };
    let deny_host = ReviewDecision::NetworkPolicyAmendment {
        network_policy_amendment: NetworkPolicyAmendment {
            host: "h".to_owned(),
            action: NetworkPolicyRuleAction::Deny,
        },
    };
    for (source, text) in [
        (DecisionSource::Hook, REJECTED_BY_CONFIGURATION),
        (DecisionSource::AutoReview, AUTO_REVIEW_DENIED),
        (DecisionSource::User, REJECTED_BY_USER),
    ] {
        assert_eq!(
            resolve(deny_host.clone(), source).unwrap_err().message,
            text
        );
        assert_eq!(
            resolve(ReviewDecision::denied(), source)
                .unwrap_err()
                .message,
            text
        );
    }
    assert_eq!(
        resolve(
            ReviewDecision::denied_with_reason("why"),
            DecisionSource::User
        )
        .unwrap_err()
        .message,
        "why"
    );
    let timed_out = resolve(ReviewDecision::TimedOut, DecisionSource::AutoReview).unwrap_err();
    assert_eq!(
        (timed_out.message.as_str(), timed_out.interrupts_turn),
        (AUTO_REVIEW_TIMED_OUT, false)
    );
    let abort = resolve(ReviewDecision::Abort, DecisionSource::User).unwrap_err();
    assert_eq!(
        (abort.message.as_str(), abort.interrupts_turn),
        (APPROVAL_ABORTED, true)
    );
    assert_eq!(
        resolve(
            ReviewDecision::ApprovedMcpPolicyAmendment,
            DecisionSource::User
        )
        .unwrap_err()
        .message,
        MCP_AMENDMENT_OUTSIDE_MCP
    );
    let allow_host = ReviewDecision::NetworkPolicyAmendment {
        network_policy_amendment: NetworkPolicyAmendment {
            host: "h".to_owned(),
            action: NetworkPolicyRuleAction::Allow,
        },
    };
    let amendment = ReviewDecision::ApprovedExecpolicyAmendment {
        proposed_execpolicy_amendment: ExecPolicyAmendment::new(argv(&["git"])),
    };
    for ok in [
        ReviewDecision::Approved,
        ReviewDecision::ApprovedForSession,
        amendment,
        allow_host,
    ] {
        assert_eq!(resolve(ok.clone(), DecisionSource::User), Ok(ok));
    }
}

#[test]
fn available_decisions_follow_the_request() {
    let amendment = ExecPolicyAmendment::new(argv(&["git", "pull"]));
    let network = NetworkApprovalContext {
        host: "example.com".to_owned(),
        protocol: NetworkApprovalProtocol::Https,
    };
    let extra = AdditionalPermissionProfile {
        network: Some(NetworkPermissions {
            enabled: Some(true),
        }),
        file_system: None,
    };
    assert_eq!(
        available_decisions(Some(&network), Some(&amendment), Some(&extra)),
        vec![ReviewDecision::Approved, ReviewDecision::Abort]
    );
    let all = available_decisions(Some(&network), Some(&amendment), None);
    let names: Vec<&str> = all.iter().map(ReviewDecision::opaque_label).collect();
    assert_eq!(
        names,
        vec![
            "approved",
            "approved_for_session",
            "approved_with_amendment",
            "approved_with_network_policy_allow",
            "denied_with_network_policy_deny",
            "denied",
            "abort"
        ]
    );
    assert!(is_offered(&ReviewDecision::denied_with_reason("x"), &[]));
    assert!(is_offered(&ReviewDecision::Abort, &[]));
    assert!(!is_offered(
        &ReviewDecision::ApprovedForSession,
        &[ReviewDecision::Approved]
    ));
}

#[test]
fn hook_output_protocol() {
    let allow = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}},"systemMessage":"checked"}"#;
    assert_eq!(
        parse_hook_output(Some(0), allow, ""),
        HookRunResult::Decided {
            verdict: HookVerdict::Allow,
            warnings: vec!["checked".to_owned()]
        }
    );
    assert_eq!(
        parse_hook_output(Some(0), "", ""),
        HookRunResult::NoDecision { warnings: vec![] }
    );
    assert_eq!(
        parse_hook_output(Some(0), "looks fine to me\n", ""),
        HookRunResult::NoDecision { warnings: vec![] }
    );
    assert_eq!(
        parse_hook_output(Some(0), r#"{"continue":true}"#, ""),
        HookRunResult::NoDecision { warnings: vec![] }
    );
    assert!(matches!(
        parse_hook_output(Some(0), "[1,2", ""),
        HookRunResult::Failed { .. }
    ));
    assert!(matches!(
        parse_hook_output(Some(0), "[1,2]", ""),
        HookRunResult::Failed { .. }
    ));
    assert!(matches!(
        parse_hook_output(Some(0), r#"{"continue":false}"#, ""),
        HookRunResult::Failed { .. }
    ));
    assert!(matches!(
        parse_hook_output(
            Some(0),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","decision":{"behavior":"allow"}}}"#,
            ""
        ),
        HookRunResult::Failed { .. }
    ));
    // A deny with unsupported fields still denies (tighten only).
    let deny = r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"no","interrupt":true}}}"#;
    let HookRunResult::Decided { verdict, warnings } = parse_hook_output(Some(0), deny, "") else {
        panic!()
    };
    assert_eq!(
        verdict,
        HookVerdict::Deny {
            message: "no".to_owned()
        }
    );
    assert!(warnings[0].contains("interrupt:true"));
    assert_eq!(
        parse_hook_output(Some(2), "", "  blocked by policy \n"),
        HookRunResult::Decided {
            verdict: HookVerdict::Deny {
                message: "blocked by policy".to_owned()
            },
            warnings: vec![]
        }
    );
    assert!(
        matches!(
            parse_hook_output(Some(1), allow, ""),
            HookRunResult::Failed { .. }
        ),
        "only exit 0 may allow"
    );
    assert!(matches!(
        parse_hook_output(None, allow, ""),
        HookRunResult::Failed { .. }
    ));
}

#[test]
fn reviewer_verdicts() {
    let verdict = parse_reviewer_verdict("Answer:\n```json\n{\"outcome\":\"deny\",\"risk_level\":\"critical\",\"rationale\":\" wipes disk \"}\n```").unwrap();
    assert_eq!(
        verdict,
        ReviewerVerdict {
            outcome: ReviewOutcome::Deny,
            rationale: Some("wipes disk".to_owned()),
            risk_level: Some("critical".to_owned())
        }
    );
    assert!(parse_reviewer_verdict("").is_err());
    assert!(parse_reviewer_verdict("} {").is_err());
    assert!(parse_reviewer_verdict("{\"outcome\":\"ALLOW\"}").is_err());
}

#[test]
fn config_reading_and_errors() {
    let parse = |text: &str| {
        let table: toml::Table = text.parse().unwrap();
        ApprovalConfig::from_config_table(&table, "/h/config.toml", None)
    };
    let config = parse(
        "[hooks]\npermission_request = [{ matcher = \"^Bash$\", command = \"check\", timeout = 5 }, { command = \"all\" }, { matcher = \"(\", command = \"bad\" }]\nextra = 1\n[auto_review]\ncommand = [\"reviewer\", \"--strict\"]\n",
    )
    .unwrap();
    assert_eq!(config.hooks.len(), 2, "the invalid matcher is skipped");
    assert_eq!(config.hooks[0].timeout, std::time::Duration::from_secs(5));
    assert_eq!(config.hooks[1].timeout, DEFAULT_HOOK_TIMEOUT);
    assert!(config.hooks[1].matcher.matches(&["anything"]));
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.contains("invalid matcher")),
        "{:?}",
        config.warnings
    );
    assert!(
        config.warnings.iter().any(|w| w.contains("hooks.extra")),
        "{:?}",
        config.warnings
    );
    let auto = config.auto_review.unwrap();
    assert_eq!(
        auto.reviewer,
        AutoReviewer::Command {
            argv: argv(&["reviewer", "--strict"])
        }
    );
    assert_eq!(auto.timeout, DEFAULT_AUTO_REVIEW_TIMEOUT);

    for (text, needle) in [
        (
            "[hooks]\npermission_request = [{ matcher = \"x\" }]",
            "hooks.permission_request[0].command",
        ),
        (
            "[hooks]\npermission_request = [{ command = \"x\", timeout = 0 }]",
            "hooks.permission_request[0].timeout",
        ),
        (
            "[hooks]\npermission_request = \"x\"",
            "hooks.permission_request",
        ),
        ("[auto_review]\ncommand = []", "auto_review.command"),
        (
            "[auto_review]\ncommand = [\"a\"]\nendpoint = \"http://h\"\nmodel = \"m\"",
            "not both",
        ),
        (
            "[auto_review]\nendpoint = \"http://h\"",
            "auto_review.model",
        ),
        (
            "[auto_review]\ncommand = [\"a\"]\ntimeout_secs = 0",
            "auto_review.timeout_secs",
        ),
    ] {
        let error = parse(text).unwrap_err().to_string();
        assert!(
            error.starts_with("/h/config.toml: ") && error.contains(needle),
            "{text}: {error}"
        );
    }
    assert!(
        parse("[auto_review]\ntimeout_secs = 5")
            .unwrap()
            .auto_review
            .is_none()
    );
}

#[test]
fn invalid_hooks_json_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(HOOKS_JSON_FILE), "{\"hooks\": [").unwrap();
    let error = ApprovalConfig::load(&toml::Table::new(), "config.toml", dir.path())
        .unwrap_err()
        .to_string();
    assert!(error.contains("hooks.json: invalid JSON"), "{error}");
    // No file: no hooks, no error.
    let empty = tempfile::tempdir().unwrap();
    assert!(
        ApprovalConfig::load(&toml::Table::new(), "config.toml", empty.path())
            .unwrap()
            .hooks
            .is_empty()
    );
}
