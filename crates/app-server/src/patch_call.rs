//! `tool/applyPatch`: one patch through the core session (spec 11), with `fileChange` items.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use airlock_app_server_protocol::FileUpdateChange;
use airlock_app_server_protocol::ItemNotification;
use airlock_app_server_protocol::PatchApplyStatus;
use airlock_app_server_protocol::PatchChangeKind;
use airlock_app_server_protocol::ThreadItem;
use airlock_app_server_protocol::ToolApplyPatchParams;
use airlock_app_server_protocol::ToolApplyPatchResponse;
use airlock_app_server_protocol::ToolCallStatus;
use airlock_app_server_protocol::methods;
use airlock_approval::FileChange;
use airlock_core::PatchCall;
use airlock_core::PatchCallOutcome;
use airlock_core::PatchResult;
use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;

use crate::threads::ThreadState;

/// The approval layer's changes as wire changes, sorted by path (Codex `convert_patch_changes`:
/// the whole text for add and delete, the unified diff for update).
pub fn changes_for_wire(changes: &BTreeMap<PathBuf, FileChange>) -> Vec<FileUpdateChange> {
    changes
        .iter()
        .map(|(path, change)| {
            let (kind, diff) = match change {
                FileChange::Add { content } => (PatchChangeKind::Add, content.clone()),
                FileChange::Delete { content } => (PatchChangeKind::Delete, content.clone()),
                FileChange::Update {
                    unified_diff,
                    move_path,
                } => (
                    PatchChangeKind::Update {
                        move_path: move_path.clone(),
                    },
                    unified_diff.clone(),
                ),
            };
            FileUpdateChange {
                path: path.clone(),
                kind,
                diff,
            }
        })
        .collect()
}

/// The `tool/applyPatch` result of a finished patch call.
pub fn patch_response(outcome: &PatchCallOutcome) -> ToolApplyPatchResponse {
    let changes = outcome
        .events
        .end
        .as_ref()
        .map(|end| &end.changes)
        .or_else(|| outcome.events.begin.as_ref().map(|begin| &begin.changes))
        .map(changes_for_wire)
        .unwrap_or_default();
    let (status, stdout, stderr) = match &outcome.result {
        PatchResult::Applied { output, .. } => (
            ToolCallStatus::Completed,
            output.stdout.clone(),
            output.stderr.clone(),
        ),
        PatchResult::Failed { message } => (ToolCallStatus::Failed, String::new(), message.clone()),
        PatchResult::Refused { message, .. } => {
            (ToolCallStatus::Declined, String::new(), message.clone())
        }
    };
    ToolApplyPatchResponse {
        status,
        stdout,
        stderr,
        changes,
    }
}

fn item_status(status: ToolCallStatus) -> PatchApplyStatus {
    match status {
        ToolCallStatus::Completed => PatchApplyStatus::Completed,
        ToolCallStatus::Failed => PatchApplyStatus::Failed,
        ToolCallStatus::Declined => PatchApplyStatus::Declined,
    }
}

fn notify(sink: &MessageSink, method: &str, thread: &ThreadState, turn_id: &str, item: ThreadItem) {
    let note = ItemNotification {
        thread_id: thread.id.clone(),
        turn_id: turn_id.to_owned(),
        item,
    };
    sink.send(Message::notification(
        method,
        serde_json::to_value(note).ok(),
    ));
}

/// Runs one `tool/applyPatch` call; the result comes when it is over. A turn interrupted
/// while it runs drops the call (its sandboxed helper is killed; the writer is atomic per file).
///
/// # Errors
/// -32602 naming `turnId` for an unknown turn.
pub async fn run(
    sink: &MessageSink,
    thread: Arc<ThreadState>,
    params: ToolApplyPatchParams,
) -> Result<ToolApplyPatchResponse, ErrorObject> {
    let entry = thread.turn(&params.turn_id)?;
    let declined = |message: &str| ToolApplyPatchResponse {
        status: ToolCallStatus::Declined,
        stdout: String::new(),
        stderr: message.to_owned(),
        changes: Vec::new(),
    };
    if entry.turn.is_interrupted() {
        return Ok(declined(
            "the turn was interrupted or has ended; start a new turn",
        ));
    }
    let item = |changes: Vec<FileUpdateChange>, status| ThreadItem::FileChange {
        id: params.call_id.clone(),
        changes,
        status,
    };
    notify(
        sink,
        methods::ITEM_STARTED,
        &thread,
        &params.turn_id,
        item(Vec::new(), PatchApplyStatus::InProgress),
    );
    let call = PatchCall {
        call_id: params.call_id.clone(),
        patch: params.patch.clone(),
        workdir: params.cwd.clone(),
    };
    let session = Arc::clone(&thread.session);
    let turn = Arc::clone(&entry.turn);
    let response = tokio::select! {
        biased;
        outcome = session.apply_patch(&turn, call) => patch_response(&outcome),
        () = entry.turn.interrupted() => ToolApplyPatchResponse {
            status: ToolCallStatus::Failed,
            stdout: String::new(),
            stderr: "interrupted: the turn was interrupted while the patch was being applied".to_owned(),
            changes: Vec::new(),
        },
    };
    notify(
        sink,
        methods::ITEM_COMPLETED,
        &thread,
        &params.turn_id,
        item(response.changes.clone(), item_status(response.status)),
    );
    Ok(response)
}
