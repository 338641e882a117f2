//! The tests spec 08 §Required tests lists, plus the snapshot rules around them: exact sandbox
//! texts, empty catalog sandbox message, prefix added / removed, compact mode, legacy snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use airlock_execpolicy::PolicyParser;
use airlock_instructions::ApprovalFeatures;
use airlock_instructions::ApprovalPromptContext;
use airlock_instructions::CompactPermissionsSnapshot;
use airlock_instructions::CompactPermissionsState;
use airlock_instructions::InstructionsCatalog;
use airlock_instructions::InstructionsHash;
use airlock_instructions::PermissionsInstructions;
use airlock_instructions::PermissionsSnapshot;
use airlock_instructions::PermissionsState;
use airlock_instructions::PermissionsUpdate;
use airlock_instructions::PreviousSectionState;
use airlock_instructions::SandboxMessages;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use common::CWD;
use common::build;
use common::built_in;
use pretty_assertions::assert_eq;

const WORKSPACE_RESTRICTED: &str = "Filesystem sandboxing defines which files can be read or written. `sandbox_mode` is `workspace-write`: The sandbox permits reading files, and editing files in `cwd` and `writable_roots`. Editing files in other directories requires approval. Network access is restricted.";
const READ_ONLY_RESTRICTED: &str = "Filesystem sandboxing defines which files can be read or written. `sandbox_mode` is `read-only`: The sandbox only permits reading files. Network access is restricted.";
const FULL_ACCESS_ENABLED: &str = "Filesystem sandboxing defines which files can be read or written. `sandbox_mode` is `danger-full-access`: No filesystem sandboxing - all commands are permitted. Network access is enabled.";

fn cwd() -> &'static Path {
    Path::new(CWD)
}

fn on_request(profile: &PermissionProfile, prefixes: &[&[&str]]) -> PermissionsInstructions {
    build(
        profile,
        AskForApproval::OnRequest,
        ApprovalsReviewer::User,
        prefixes,
        ApprovalFeatures::default(),
        None,
    )
}

fn first_section(instructions: &PermissionsInstructions) -> String {
    instructions.body().split("\n\n").next().unwrap().to_owned()
}

#[test]
fn the_three_built_in_sandbox_texts_are_exact() {
    let cases = [
        (":workspace", WORKSPACE_RESTRICTED),
        (":read-only", READ_ONLY_RESTRICTED),
        (":danger-full-access", FULL_ACCESS_ENABLED),
    ];
    for (id, expected) in cases {
        let instructions = on_request(&built_in(id, cwd()), &[]);
        assert_eq!(first_section(&instructions), expected, "profile {id}");
        assert!(
            instructions
                .render()
                .starts_with(&format!("<permissions instructions>\n{expected}\n\n"))
        );
    }
}

#[test]
fn the_network_sentence_follows_the_network_policy() {
    let enabled_workspace = match built_in(":workspace", cwd()) {
        PermissionProfile::Managed { file_system, .. } => PermissionProfile::Managed {
            file_system,
            network: NetworkSandboxPolicy::Enabled,
        },
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(
        first_section(&on_request(&enabled_workspace, &[])),
        WORKSPACE_RESTRICTED.replace("is restricted.", "is enabled.")
    );
    // Full filesystem access with the network still restricted: the mode stays
    // danger-full-access, only the last sentence switches.
    let unrestricted_offline = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Unrestricted,
        network: NetworkSandboxPolicy::Restricted,
    };
    assert_eq!(
        first_section(&on_request(&unrestricted_offline, &[])),
        FULL_ACCESS_ENABLED.replace("is enabled.", "is restricted.")
    );
}

#[test]
fn body_is_sections_separated_by_blank_lines_ending_with_newline() {
    let instructions = on_request(&built_in(":workspace", cwd()), &[&["git", "pull"]]);
    let body = instructions.body();
    assert!(body.ends_with("]\n\nThe writable roots are `/srv/airlock-ws`, `/tmp`.\nDirectly under every writable root, `.git`, `.agents`, `.codex`, `.aws`, `.airlock` stay read-only.\n"));
    assert!(!body.ends_with("\n\n"));
    assert_eq!(
        instructions.render(),
        format!("<permissions instructions>\n{body}</permissions instructions>")
    );
    assert!(airlock_instructions::is_permissions_block(
        &instructions.render()
    ));
}

#[test]
fn an_empty_catalog_sandbox_message_omits_only_the_sandbox_section() {
    let profile = built_in(":workspace", cwd());
    let full = on_request(&profile, &[&["git", "pull"]]);
    let catalog = InstructionsCatalog {
        sandbox: SandboxMessages {
            workspace_write: Some(String::new()),
            ..SandboxMessages::default()
        },
        ..InstructionsCatalog::default()
    };
    let omitted = build(
        &profile,
        AskForApproval::OnRequest,
        ApprovalsReviewer::User,
        &[&["git", "pull"]],
        ApprovalFeatures::default(),
        Some(&catalog),
    );
    assert_eq!(
        omitted.body(),
        full.body()
            .strip_prefix(&format!("{WORKSPACE_RESTRICTED}\n\n"))
            .unwrap()
    );
    assert!(omitted.sandbox_section().is_none());
    // An override for another mode changes nothing here.
    let other_mode = InstructionsCatalog {
        sandbox: SandboxMessages {
            read_only: Some(String::new()),
            ..SandboxMessages::default()
        },
        ..InstructionsCatalog::default()
    };
    let unchanged = build(
        &profile,
        AskForApproval::OnRequest,
        ApprovalsReviewer::User,
        &[&["git", "pull"]],
        ApprovalFeatures::default(),
        Some(&other_mode),
    );
    assert_eq!(unchanged.body(), full.body());
}

#[test]
fn a_catalog_sandbox_message_replaces_the_sentence_and_fills_the_network_placeholder() {
    let catalog = InstructionsCatalog {
        sandbox: SandboxMessages {
            read_only: Some("Read-only box; network {{network_access}}.".to_owned()),
            ..SandboxMessages::default()
        },
        ..InstructionsCatalog::default()
    };
    let instructions = build(
        &built_in(":read-only", cwd()),
        AskForApproval::Never,
        ApprovalsReviewer::User,
        &[],
        ApprovalFeatures::default(),
        Some(&catalog),
    );
    assert_eq!(
        first_section(&instructions),
        "Read-only box; network restricted."
    );
}

#[test]
fn adding_a_prefix_sends_only_the_saved_prefix_fragment() {
    let profile = built_in(":workspace", cwd());
    let before = PermissionsState::new(on_request(&profile, &[&["git", "pull"]]));
    let after = PermissionsState::new(on_request(
        &profile,
        &[&["git", "pull"], &["touch", "allow-prefix.txt"]],
    ));
    let update = after
        .render_diff(PreviousSectionState::Known(before.snapshot()))
        .unwrap();
    assert!(matches!(update, PermissionsUpdate::PrefixesSaved(_)));
    assert_eq!(
        update.render(),
        "Approved command prefix saved:\n- [\"touch\", \"allow-prefix.txt\"]"
    );
    assert!(!update.render().contains("<permissions instructions>"));
    // Sent once: with the new snapshot there is nothing more to say.
    assert_eq!(
        after.render_diff(PreviousSectionState::Known(after.snapshot())),
        None
    );
}

#[test]
fn adding_a_prefix_through_a_real_rules_file_gives_the_same_fragment() {
    let parse = |source: &str| {
        let mut parser = PolicyParser::new();
        parser.parse("test.rules", source).unwrap();
        parser.build()
    };
    let base = "prefix_rule(pattern=[\"git\", \"pull\"], decision=\"allow\")\n";
    let amended = format!(
        "{base}prefix_rule(pattern=[\"touch\", \"allow-prefix.txt\"], decision=\"allow\")\n"
    );
    let profile = built_in(":workspace", cwd());
    let state = |policy| {
        PermissionsState::new(PermissionsInstructions::from_permission_profile(
            &profile,
            AskForApproval::OnRequest,
            ApprovalPromptContext::new(ApprovalsReviewer::User, None),
            &policy,
            cwd(),
            false,
            false,
        ))
    };
    let before = state(parse(base));
    let after = state(parse(&amended));
    assert_eq!(
        after
            .render_diff(PreviousSectionState::Known(before.snapshot()))
            .map(|update| update.render())
            .as_deref(),
        Some("Approved command prefix saved:\n- [\"touch\", \"allow-prefix.txt\"]")
    );
}

#[test]
fn removing_a_prefix_sends_exactly_the_full_instructions() {
    let profile = built_in(":workspace", cwd());
    let before = PermissionsState::new(on_request(
        &profile,
        &[&["git", "pull"], &["touch", "allow-prefix.txt"]],
    ));
    let after_instructions = on_request(&profile, &[&["git", "pull"]]);
    let after = PermissionsState::new(after_instructions.clone());
    let update = after
        .render_diff(PreviousSectionState::Known(before.snapshot()))
        .unwrap();
    assert_eq!(update.render(), after_instructions.render());
    // A removal together with an addition is still a removal.
    let swapped = PermissionsState::new(on_request(&profile, &[&["cargo", "test"]]));
    assert!(matches!(
        swapped.render_diff(PreviousSectionState::Known(before.snapshot())),
        Some(PermissionsUpdate::Full(_))
    ));
}

#[test]
fn unchanged_state_sends_nothing_and_changed_text_sends_everything() {
    let profile = built_in(":workspace", cwd());
    let state = PermissionsState::new(on_request(&profile, &[&["git", "pull"]]));
    assert_eq!(
        state.render_diff(PreviousSectionState::Known(state.snapshot())),
        None
    );
    for previous in [PreviousSectionState::Absent, PreviousSectionState::Unknown] {
        assert_eq!(
            state.render_diff(previous).unwrap().render(),
            state.instructions().render()
        );
    }
    let never = PermissionsState::new(build(
        &profile,
        AskForApproval::Never,
        ApprovalsReviewer::User,
        &[&["git", "pull"]],
        ApprovalFeatures::default(),
        None,
    ));
    assert_eq!(
        never
            .render_diff(PreviousSectionState::Known(state.snapshot()))
            .unwrap()
            .render(),
        never.instructions().render()
    );
}

#[test]
fn the_current_hash_is_of_the_text_rendered_with_an_empty_exec_policy() {
    let profile = built_in(":workspace", cwd());
    let with = on_request(&profile, &[&["git", "pull"], &["cargo", "test"]]);
    let without = on_request(&profile, &[]);
    assert_eq!(with.instructions_hash(), without.instructions_hash());
    assert_eq!(
        with.instructions_hash(),
        InstructionsHash::of_text(&without.body())
    );
    assert_ne!(with.full_text_hash(), without.full_text_hash());
    assert_eq!(
        PermissionsState::new(with).snapshot(),
        &PermissionsSnapshot::Current {
            instructions: without.instructions_hash(),
            approved_command_prefixes: common::owned_prefixes(&[
                &["git", "pull"],
                &["cargo", "test"]
            ])
            .into_iter()
            .collect(),
        }
    );
}

#[test]
fn legacy_snapshot_equal_to_the_full_text_hash_sends_nothing() {
    let profile = built_in(":workspace", cwd());
    let instructions = on_request(&profile, &[&["git", "pull"]]);
    let state = PermissionsState::new(instructions.clone());
    let legacy = PermissionsSnapshot::Legacy(InstructionsHash::of_text(&instructions.body()));
    assert_eq!(
        state.render_diff(PreviousSectionState::Known(&legacy)),
        None
    );
    // The hash of the text without prefixes is not the legacy hash.
    let stale = PermissionsSnapshot::Legacy(instructions.instructions_hash());
    assert_eq!(
        state
            .render_diff(PreviousSectionState::Known(&stale))
            .unwrap()
            .render(),
        instructions.render()
    );
    let unknown_algorithm =
        PermissionsSnapshot::Legacy(InstructionsHash::from_string("md5:0123".to_owned()));
    assert!(matches!(
        state.render_diff(PreviousSectionState::Known(&unknown_algorithm)),
        Some(PermissionsUpdate::Full(_))
    ));
}

#[test]
fn snapshots_read_every_persisted_form() {
    let profile = built_in(":workspace", cwd());
    let instructions = on_request(&profile, &[&["git", "pull"]]);
    let state = PermissionsState::new(instructions.clone());
    let json = serde_json::to_string(state.snapshot()).unwrap();
    assert_eq!(
        json,
        format!(
            "{{\"instructions\":\"{}\",\"approved_command_prefixes\":[[\"git\",\"pull\"]]}}",
            instructions.instructions_hash().as_str()
        )
    );
    assert_eq!(
        &PermissionsSnapshot::from_json(&json).unwrap(),
        state.snapshot()
    );

    // Empty prefix sets are omitted (never `null`, which would delete in a merge patch) and
    // read back as empty.
    let bare = PermissionsState::new(on_request(&profile, &[]));
    let bare_json = serde_json::to_string(bare.snapshot()).unwrap();
    assert!(!bare_json.contains("null") && !bare_json.contains("approved_command_prefixes"));
    assert_eq!(
        &PermissionsSnapshot::from_json(&bare_json).unwrap(),
        bare.snapshot()
    );

    // Legacy: a bare hash string, and Codex's fingerprint object.
    let full = instructions.full_text_hash();
    let bare_legacy = PermissionsSnapshot::from_json(&format!("\"{}\"", full.as_str())).unwrap();
    assert_eq!(bare_legacy, PermissionsSnapshot::Legacy(full.clone()));
    assert_eq!(
        serde_json::to_string(&bare_legacy).unwrap(),
        format!("\"{}\"", full.as_str())
    );
    let codex = format!(
        "{{\"enabled\":true,\"model_slug\":\"gpt-x\",\"instructions_fingerprint\":\"{}\"}}",
        full.as_str()
    );
    assert_eq!(
        PermissionsSnapshot::from_json(&codex).unwrap(),
        PermissionsSnapshot::Legacy(full)
    );
    assert_eq!(
        state.render_diff(PreviousSectionState::Known(
            &PermissionsSnapshot::from_json(&codex).unwrap()
        )),
        None
    );

    for bad in [
        "{\"enabled\":false}",
        "42",
        "[1]",
        "{\"instructions\":7}",
        "not json",
    ] {
        let error = PermissionsSnapshot::from_json(bad).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("invalid permissions snapshot"),
            "{bad}: {error}"
        );
    }
}

#[test]
fn reviewer_does_not_change_the_text_under_never() {
    let profile = built_in(":workspace", cwd());
    let by = |reviewer| {
        build(
            &profile,
            AskForApproval::Never,
            reviewer,
            &[&["git", "pull"]],
            ApprovalFeatures {
                exec_permission_approvals: true,
                request_permissions_tool: true,
            },
            None,
        )
    };
    let user = PermissionsState::new(by(ApprovalsReviewer::User));
    let auto = PermissionsState::new(by(ApprovalsReviewer::AutoReview));
    assert_eq!(user.snapshot(), auto.snapshot());
    assert_eq!(
        auto.render_diff(PreviousSectionState::Known(user.snapshot())),
        None
    );
}

fn compact(prefixes: &[&[&str]]) -> CompactPermissionsState {
    CompactPermissionsState::new(common::owned_prefixes(prefixes))
}

#[test]
fn compact_mode_sends_nothing_without_a_known_baseline() {
    let state = compact(&[&["git", "pull"], &["touch", "allow-prefix.txt"]]);
    assert_eq!(state.render_diff(PreviousSectionState::Absent), None);
    assert_eq!(state.render_diff(PreviousSectionState::Unknown), None);
    assert_eq!(
        CompactPermissionsState::SECTION_ID,
        "approved_command_prefixes"
    );
    assert_eq!(PermissionsState::SECTION_ID, "permissions");
}

#[test]
fn compact_mode_sends_additions_only_for_a_known_baseline() {
    let before = compact(&[&["git", "pull"]]);
    let added = compact(&[&["git", "pull"], &["touch", "allow-prefix.txt"]]);
    assert_eq!(
        added
            .render_diff(PreviousSectionState::Known(before.snapshot()))
            .map(|saved| saved.render())
            .as_deref(),
        Some("Approved command prefix saved:\n- [\"touch\", \"allow-prefix.txt\"]")
    );
    // Removal: nothing. No change: nothing.
    assert_eq!(
        before.render_diff(PreviousSectionState::Known(added.snapshot())),
        None
    );
    assert_eq!(
        before.render_diff(PreviousSectionState::Known(before.snapshot())),
        None
    );
    // Removal plus addition: only the addition.
    let swapped = compact(&[&["cargo", "test"]]);
    assert_eq!(
        swapped
            .render_diff(PreviousSectionState::Known(before.snapshot()))
            .map(|saved| saved.render())
            .as_deref(),
        Some("Approved command prefix saved:\n- [\"cargo\", \"test\"]")
    );
    // The snapshot is a plain array of token arrays.
    let json = serde_json::to_string(added.snapshot()).unwrap();
    assert_eq!(json, r#"[["git","pull"],["touch","allow-prefix.txt"]]"#);
    let read: CompactPermissionsSnapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(&read, added.snapshot());
    assert_eq!(
        read.approved_command_prefixes,
        common::owned_prefixes(&[&["git", "pull"], &["touch", "allow-prefix.txt"]])
            .into_iter()
            .collect::<BTreeSet<_>>()
    );
}
