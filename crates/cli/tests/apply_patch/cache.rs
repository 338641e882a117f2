//! The per-file session cache (spec 11 §Approval): a later patch touching a subset of the
//! approved files is not asked again; one adding a new file is.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;

use airlock_approval::ApprovalConfig;
use airlock_approval::ApprovalEvent;
use airlock_core::ExecPolicyManager;
use airlock_core::OutputMode;
use airlock_core::PatchCall;
use airlock_core::PatchResult;
use airlock_core::SandboxSettings;
use airlock_core::Session;
use airlock_core::SessionOptions;
use airlock_core::ShellCall;
use airlock_core::ShellToolOutcome;
use airlock_core::ToolEnvironment;
use airlock_core::apply_patch::PatchApplyStatus;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ReviewDecision;
use pretty_assertions::assert_eq;

use crate::exec_support::Dirs;
use crate::exec_support::airlock_bin;
use crate::support::patch;

/// The file names each patch prompt showed, in order.
type Prompts = Arc<Mutex<Vec<Vec<String>>>>;

/// A session whose scripted user answers every patch prompt with `decision` and records the
/// paths it was shown.
fn session(dirs: &Dirs, decision: ReviewDecision) -> (Arc<Session>, Prompts) {
    let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel();
    let session = Arc::new(Session::new(
        SessionOptions {
            session_id: "session-1".to_owned(),
            approval_policy: AskForApproval::OnRequest,
            approvals_reviewer: ApprovalsReviewer::User,
            strict_auto_review: false,
            environment: ToolEnvironment {
                environment_id: None,
                cwd: dirs.ws.clone(),
                workspace_roots: vec![dirs.ws.clone()],
                permission_profile: airlock_permissions::built_in_profile(":workspace").unwrap(),
            },
            env: std::env::vars()
                .filter(|(name, _)| name == "PATH")
                .collect(),
            extra_safe_commands: Vec::new(),
            sandbox: SandboxSettings {
                linux_helper: Some(airlock_bin()),
                ..SandboxSettings::default()
            },
            output: OutputMode::Capture,
            amendment_file: None,
            allow_rules_bypass_sandbox: true,
            audit_log: Some(dirs.home.join("log/audit.jsonl")),
        },
        ApprovalConfig::default(),
        ExecPolicyManager::load_files(Vec::new()),
        Some(events_tx),
    ));
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let (weak, seen) = (Arc::downgrade(&session), Arc::clone(&prompts));
    tokio::spawn(async move {
        while let Some(event) = events_rx.recv().await {
            if let ApprovalEvent::ApplyPatchApprovalRequest(request) = event {
                let names = request
                    .changes
                    .keys()
                    .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
                    .collect();
                seen.lock().unwrap().push(names);
                if let Some(session) = weak.upgrade() {
                    session
                        .approvals()
                        .submit_patch_approval(&request.call_id, decision.clone())
                        .await;
                }
            }
        }
    });
    (session, prompts)
}

fn update(dir: &Path, names: &[&str], from: &str, to: &str) -> String {
    let body: String = names
        .iter()
        .map(|name| {
            format!(
                "*** Update File: {}\n-{from}\n+{to}\n",
                dir.join(name).display()
            )
        })
        .collect();
    patch(&body)
}

#[tokio::test]
async fn approved_files_are_not_asked_again_until_a_new_file_joins() {
    let dirs = Dirs::new();
    for name in ["a.txt", "b.txt"] {
        fs::write(dirs.outside_path().join(name), "1\n").unwrap();
    }
    let (session, prompts) = session(&dirs, ReviewDecision::ApprovedForSession);
    let turn = session.start_turn("turn-1");
    let run = |id: &str, text: String| {
        let session = Arc::clone(&session);
        let turn = Arc::clone(&turn);
        let id = id.to_owned();
        async move {
            session
                .apply_patch(
                    &turn,
                    PatchCall {
                        call_id: id,
                        patch: text,
                        workdir: None,
                    },
                )
                .await
        }
    };
    let first = run(
        "call-1",
        update(dirs.outside_path(), &["a.txt", "b.txt"], "1", "2"),
    )
    .await;
    let begin = first.events.begin.as_ref().unwrap();
    assert!(!begin.auto_approved);
    assert_eq!(begin.changes.len(), 2);
    assert_eq!(
        first.events.end.as_ref().unwrap().status,
        PatchApplyStatus::Completed
    );
    let first = first.result;
    assert!(matches!(first, PatchResult::Applied { .. }), "{first:?}");
    assert_eq!(prompts.lock().unwrap().len(), 1);
    // A subset of the approved files: straight from the session cache.
    let second = run("call-2", update(dirs.outside_path(), &["a.txt"], "2", "3"))
        .await
        .result;
    assert!(matches!(second, PatchResult::Applied { .. }), "{second:?}");
    assert_eq!(prompts.lock().unwrap().len(), 1);
    // A new file joins: asked again, showing both files.
    let third = format!(
        "{}*** Add File: {}\n+new\n*** End Patch\n",
        update(dirs.outside_path(), &["b.txt"], "2", "3").trim_end_matches("*** End Patch\n"),
        dirs.outside_path_str("c.txt")
    );
    let third = run("call-3", third).await.result;
    assert!(matches!(third, PatchResult::Applied { .. }), "{third:?}");
    assert_eq!(
        prompts.lock().unwrap().clone(),
        vec![
            vec!["a.txt".to_owned(), "b.txt".to_owned()],
            vec!["b.txt".to_owned(), "c.txt".to_owned()]
        ]
    );
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("a.txt")).unwrap(),
        "3\n"
    );
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("b.txt")).unwrap(),
        "3\n"
    );
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("c.txt")).unwrap(),
        "new\n"
    );
    let sources: Vec<String> = dirs
        .audit()
        .iter()
        .map(|record| {
            record["approvals"][0]["source"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(sources, ["user", "session_cache", "user"]);
}

#[tokio::test]
async fn a_declined_patch_sends_only_a_declined_end_and_writes_nothing() {
    let dirs = Dirs::new();
    fs::write(dirs.outside_path().join("a.txt"), "1\n").unwrap();
    let (session, prompts) = session(&dirs, ReviewDecision::denied());
    let turn = session.start_turn("turn-1");
    let outcome = session
        .apply_patch(
            &turn,
            PatchCall {
                call_id: "call-1".to_owned(),
                patch: update(dirs.outside_path(), &["a.txt"], "1", "2"),
                workdir: None,
            },
        )
        .await;
    assert!(
        matches!(outcome.result, PatchResult::Refused { .. }),
        "{:?}",
        outcome.result
    );
    assert_eq!(prompts.lock().unwrap().len(), 1);
    assert_eq!(outcome.events.begin, None);
    assert_eq!(
        outcome.events.end.unwrap().status,
        PatchApplyStatus::Declined
    );
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("a.txt")).unwrap(),
        "1\n"
    );
}

#[tokio::test]
async fn a_workspace_patch_is_auto_approved() {
    let dirs = Dirs::new();
    let (session, prompts) = session(&dirs, ReviewDecision::denied());
    let turn = session.start_turn("turn-1");
    let outcome = session
        .apply_patch(
            &turn,
            PatchCall {
                call_id: "call-1".to_owned(),
                patch: patch("*** Add File: sub/new.txt\n+n\n"),
                workdir: None,
            },
        )
        .await;
    assert!(
        matches!(outcome.result, PatchResult::Applied { .. }),
        "{:?}",
        outcome.result
    );
    assert!(prompts.lock().unwrap().is_empty());
    assert!(outcome.events.begin.unwrap().auto_approved);
    let end = outcome.events.end.unwrap();
    assert!(end.success);
    assert_eq!(
        end.stdout,
        "Success. Updated the following files:\nA sub/new.txt\n"
    );
}

#[tokio::test]
async fn the_shell_tool_routes_apply_patch_and_runs_everything_else() {
    let dirs = Dirs::new();
    fs::create_dir(dirs.ws.join("sub")).unwrap();
    fs::write(dirs.ws.join("sub/b.txt"), "old\n").unwrap();
    let (session, prompts) = session(&dirs, ReviewDecision::denied());
    let turn = session.start_turn("turn-1");
    let script = format!(
        "cd sub && apply_patch <<'EOF'\n{}EOF\n",
        patch("*** Update File: b.txt\n-old\n+new\n")
    );
    let call = |id: &str, command: Vec<String>| ShellCall {
        call_id: id.to_owned(),
        command,
        ..ShellCall::default()
    };
    let routed = session
        .shell_tool(
            &turn,
            call("call-1", vec!["bash".into(), "-lc".into(), script]),
        )
        .await;
    let ShellToolOutcome::Patch(outcome) = routed else {
        panic!("not routed to apply_patch: {routed:?}");
    };
    assert!(
        matches!(outcome.result, PatchResult::Applied { .. }),
        "{:?}",
        outcome.result
    );
    assert_eq!(
        fs::read_to_string(dirs.ws.join("sub/b.txt")).unwrap(),
        "new\n"
    );
    let implicit = session
        .shell_tool(&turn, call("call-2", vec![patch("*** Add File: z\n+z\n")]))
        .await;
    assert!(
        matches!(implicit, ShellToolOutcome::ImplicitPatch { .. }),
        "{implicit:?}"
    );
    assert!(!dirs.ws.join("z").exists());
    let command = session
        .shell_tool(&turn, call("call-3", vec!["true".into()]))
        .await;
    let ShellToolOutcome::Command(outcome) = command else {
        panic!("not run as a command");
    };
    assert_eq!(outcome.result.unwrap().exit_code, 0);
    assert!(prompts.lock().unwrap().is_empty());
}
