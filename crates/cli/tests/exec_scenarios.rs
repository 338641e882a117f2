#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every row of the scenarios table of `spec/README.md` through `airlock_core::Session`,
//! under the real sandbox with real processes (row 6, the retry, is in `exec_session.rs`).
//! Reviewers are hook scripts; the scripted user never approves.

mod exec_support;

use airlock_approval::DecisionSource;
use airlock_core::ToolError;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::ReviewDecision;
use airlock_protocol::SandboxPermissions;
use airlock_sandbox::SandboxType;
use exec_support::Dirs;
use exec_support::Harness;
use exec_support::HarnessOptions;
use exec_support::call;
use exec_support::exists;
use exec_support::outcome::LINUX;
use exec_support::outcome::approve;
use exec_support::outcome::deny_read_profile;
use exec_support::outcome::exit_code;
use exec_support::outcome::sandboxes;
use exec_support::outcome::sources;
use pretty_assertions::assert_eq;

/// Scenario row 1: restricted filesystem + `on-request`, a `prompt` rule → `NeedsApproval`,
/// and the approved attempt is still sandboxed (the write outside fails).
#[tokio::test]
async fn row1_on_request_prompt_rule_needs_approval_and_stays_sandboxed() {
    let dirs = Dirs::new();
    let rules = dirs.rules(
        "ask.rules",
        "prefix_rule(pattern=[\"touch\"], decision=\"prompt\")\n",
    );
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            rules: vec![rules],
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let Some(target) = dirs.outside_file("f.txt") else {
        return;
    };
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert!(matches!(
        out.record.trace.requirement,
        Some(ExecApprovalRequirement::NeedsApproval { .. })
    ));
    assert_eq!(sources(&out.record), vec![DecisionSource::Hook]);
    assert!(out.record.trace.attempts[0].sandbox_requested);
    assert_eq!(sandboxes(&out.record), vec![(LINUX, true)]);
    assert!(!exists(&target));
}

/// Scenario row 2: `never` + restricted → `Skip { bypass_sandbox: false }`; nobody is asked
/// and the sandbox still applies.
#[tokio::test]
async fn row2_never_skips_but_the_sandbox_applies() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            ..HarnessOptions::new(AskForApproval::Never)
        },
        approve(ReviewDecision::Approved),
    );
    let turn = h.session.start_turn("turn-1");
    let Some(target) = dirs.outside_file("f.txt") else {
        return;
    };
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert!(matches!(
        out.record.trace.requirement,
        Some(ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            ..
        })
    ));
    assert!(dirs.requests("hook").is_empty());
    assert_eq!(sandboxes(&out.record), vec![(LINUX, true)]);
    assert!(!exists(&target));
    // Inside the workspace the same command works.
    let inside = h
        .session
        .exec(&turn, call("c2", &["touch", "in.txt"]))
        .await;
    assert_eq!(exit_code(&inside), 0);
}

/// Scenario row 3: an exec-policy allow on every segment bypasses the sandbox; one unmatched
/// segment keeps it (invariant 3); a deny-read entry keeps it (invariant 2).
#[tokio::test]
async fn row3_allow_on_every_segment_bypasses_the_sandbox() {
    let dirs = Dirs::new();
    let rules = dirs.rules(
        "allow.rules",
        "prefix_rule(pattern=[\"touch\"], decision=\"allow\")\n",
    );
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            rules: vec![rules.clone()],
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let Some(target) = dirs.outside_file("f.txt") else {
        return;
    };
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert_eq!(exit_code(&out), 0);
    assert!(exists(&target));
    assert_eq!(sandboxes(&out.record), vec![(SandboxType::None, false)]);

    let Some(mixed_dir) = dirs.outside_file("d") else {
        return;
    };
    let script = format!("touch mixed.txt && mkdir '{mixed_dir}'");
    let mixed = h
        .session
        .exec(
            &turn,
            airlock_core::ShellCall {
                command: exec_support::bash(&script),
                call_id: "c2".to_owned(),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(sandboxes(&mixed.record)[0].0, LINUX);
    assert!(
        !exists(&mixed_dir),
        "mkdir is not allowed by a rule: sandboxed"
    );

    let guarded = Harness::start(
        &dirs,
        HarnessOptions {
            rules: vec![rules],
            profile: deny_read_profile(&dirs),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = guarded.session.start_turn("turn-1");
    let Some(target) = dirs.outside_file("g.txt") else {
        return;
    };
    let out = guarded
        .session
        .exec(&turn, call("c1", &["touch", &target]))
        .await;
    assert_eq!(sandboxes(&out.record), vec![(LINUX, true)]);
    assert!(!exists(&target));
}

/// Scenario row 4: an approved escalation with a deny-read entry keeps the filesystem
/// sandbox; without deny-read the approved escalation runs unsandboxed.
#[tokio::test]
async fn row4_escalation_with_deny_read_keeps_the_sandbox() {
    let dirs = Dirs::new();
    let Some(outside) = dirs.outside() else {
        return;
    };
    std::fs::write(outside.join("secret"), "the-secret-value").unwrap();
    let escalated = |id: &str, command: &[&str]| airlock_core::ShellCall {
        sandbox_permissions: SandboxPermissions::RequireEscalated,
        justification: Some("needs it".to_owned()),
        ..call(id, command)
    };
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            profile: deny_read_profile(&dirs),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let Some(secret) = dirs.outside_file("secret") else {
        return;
    };
    let out = h
        .session
        .exec(&turn, escalated("c1", &["cat", &secret]))
        .await;
    assert_eq!(sources(&out.record), vec![DecisionSource::Hook]);
    assert_eq!(
        out.record.trace.first_attempt_override,
        Some(airlock_core::SandboxOverride::NoOverride)
    );
    assert_eq!(out.record.trace.attempts[0].sandbox, LINUX);
    let printed = match &out.result {
        Ok(output) | Err(ToolError::SandboxDenied { output, .. }) => output.stdout.clone(),
        Err(other) => panic!("{other:?}"),
    };
    assert!(!printed.contains("the-secret-value"));
    let hook_input = &dirs.requests("hook")[0];
    assert_eq!(
        hook_input["approval_context"]["sandbox_permissions"],
        "require_escalated"
    );

    let open = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("allow"),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = open.session.start_turn("turn-1");
    let Some(target) = dirs.outside_file("escalated.txt") else {
        return;
    };
    let out = open
        .session
        .exec(&turn, escalated("c1", &["touch", &target]))
        .await;
    assert_eq!(exit_code(&out), 0);
    assert_eq!(sandboxes(&out.record), vec![(SandboxType::None, false)]);
    assert!(exists(&target));
}

/// Scenario row 5: an `External` profile → no prompt for filesystem limits under
/// `on-request`, no outer sandbox added.
#[tokio::test]
async fn row5_external_profile_has_no_outer_sandbox() {
    let dirs = Dirs::new();
    let h = Harness::start(
        &dirs,
        HarnessOptions {
            approval_toml: dirs.hook("deny"),
            profile: airlock_permissions::built_in_profile(":external-sandbox").unwrap(),
            ..HarnessOptions::new(AskForApproval::OnRequest)
        },
        approve(ReviewDecision::denied()),
    );
    let turn = h.session.start_turn("turn-1");
    let Some(target) = dirs.outside_file("f.txt") else {
        return;
    };
    let out = h.session.exec(&turn, call("c1", &["touch", &target])).await;
    assert_eq!(exit_code(&out), 0);
    assert!(dirs.requests("hook").is_empty(), "nobody was asked");
    let attempt = &out.record.trace.attempts[0];
    assert_eq!(
        (attempt.sandbox, attempt.sandbox_requested),
        (SandboxType::None, false)
    );
}
