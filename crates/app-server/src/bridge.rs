//! The approval layer's user prompts → server-to-client requests, and the client's answers
//! back (spec 10; reference `codex/app-server.md` §B4 "When the client's answer is unusable").

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::Weak;

use airlock_app_server_protocol::CommandExecutionRequestApprovalParams;
use airlock_app_server_protocol::FileChangeRequestApprovalParams;
use airlock_app_server_protocol::ServerRequestResolvedNotification;
use airlock_app_server_protocol::WarningNotification;
use airlock_app_server_protocol::WireRequestId;
use airlock_app_server_protocol::methods;
use airlock_approval::ApplyPatchApprovalRequestEvent;
use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_approval::ExecApprovalRequestEvent;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::PendingRequests;
use airlock_jsonrpc::RequestId;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::decisions;
use crate::patch_call::changes_for_wire;

type Outstanding = Arc<Mutex<HashMap<(String, String), RequestId>>>;

/// Everything the bridge of one thread needs.
pub struct Bridge {
    /// The thread id.
    pub thread_id: String,
    /// The session's approval layer (weak: the events channel closes with the session).
    pub approvals: Weak<ApprovalSession>,
    /// The connection's outgoing messages.
    pub sink: MessageSink,
    /// The connection's server-request table.
    pub pending: PendingRequests,
    /// This thread's outstanding server requests.
    pub outstanding: Outstanding,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Bridge {
    /// Serves the thread's approval events until the session is dropped.
    pub async fn run(self, mut events: UnboundedReceiver<ApprovalEvent>) {
        let this = Arc::new(self);
        while let Some(event) = events.recv().await {
            match event {
                ApprovalEvent::ExecApprovalRequest(request) => this.ask_command(*request),
                ApprovalEvent::ApplyPatchApprovalRequest(request) => this.ask_patch(request),
                ApprovalEvent::ApprovalResolved { id, turn_id, .. } => this.withdraw(&turn_id, &id),
                ApprovalEvent::Warning { message } => this.warn(message),
            }
        }
    }

    fn warn(&self, message: String) {
        let note = WarningNotification {
            thread_id: Some(self.thread_id.clone()),
            message,
        };
        self.sink.send(Message::notification(
            methods::WARNING,
            serde_json::to_value(note).ok(),
        ));
    }

    fn resolved(&self, request_id: &RequestId) {
        let request_id = match request_id {
            RequestId::Integer(i) => WireRequestId::Integer(*i),
            RequestId::String(s) => WireRequestId::String(s.clone()),
        };
        let note = ServerRequestResolvedNotification {
            thread_id: self.thread_id.clone(),
            request_id,
        };
        self.sink.send(Message::notification(
            methods::SERVER_REQUEST_RESOLVED,
            serde_json::to_value(note).ok(),
        ));
    }

    /// The approval ended without the client's answer (its turn was interrupted or ended):
    /// withdraw the server request and tell the client.
    fn withdraw(&self, turn_id: &str, id: &str) {
        let removed = lock(&self.outstanding).remove(&(turn_id.to_owned(), id.to_owned()));
        if let Some(request_id) = removed {
            self.pending.cancel(&request_id);
            self.resolved(&request_id);
        }
    }

    fn ask_command(self: &Arc<Self>, request: ExecApprovalRequestEvent) {
        let id = request.effective_approval_id().to_owned();
        let turn_id = request.turn_id.clone();
        let params = CommandExecutionRequestApprovalParams {
            thread_id: self.thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: request.call_id.clone(),
            approval_id: request.approval_id.clone(),
            reason: request.reason.clone(),
            command: shlex::try_join(request.command.iter().map(String::as_str))
                .unwrap_or_else(|_| request.command.join(" ")),
            command_argv: request.command.clone(),
            cwd: request.cwd.clone(),
            proposed_execpolicy_amendment: request
                .proposed_execpolicy_amendment
                .as_ref()
                .map(|a| a.command().to_vec()),
            network_approval_context: request.network_approval_context.clone(),
            proposed_network_policy_amendments: request.proposed_network_policy_amendments.clone(),
            additional_permissions: request
                .additional_permissions
                .as_ref()
                .and_then(|p| serde_json::to_value(p).ok()),
            available_decisions: request
                .decisions()
                .iter()
                .filter_map(decisions::offered_v2)
                .collect(),
        };
        let value = serde_json::to_value(params).unwrap_or_default();
        self.ask(methods::COMMAND_APPROVAL, value, turn_id, id, false);
    }

    fn ask_patch(self: &Arc<Self>, request: ApplyPatchApprovalRequestEvent) {
        let params = FileChangeRequestApprovalParams {
            thread_id: self.thread_id.clone(),
            turn_id: request.turn_id.clone(),
            item_id: request.call_id.clone(),
            reason: request.reason.clone(),
            changes: changes_for_wire(&request.changes),
        };
        let value = serde_json::to_value(params).unwrap_or_default();
        self.ask(
            methods::FILE_CHANGE_APPROVAL,
            value,
            request.turn_id,
            request.call_id,
            true,
        );
    }

    /// Sends the server request and answers the approval layer when the client replies.
    fn ask(
        self: &Arc<Self>,
        method: &str,
        params: serde_json::Value,
        turn_id: String,
        id: String,
        patch: bool,
    ) {
        let key = (turn_id.clone(), id.clone());
        let Ok(reply) = self.pending.register() else {
            // The connection is closing: the teardown interrupts the turn (abort).
            return;
        };
        let request_id = reply.id().clone();
        lock(&self.outstanding).insert(key.clone(), request_id.clone());
        if !self
            .sink
            .send(Message::request(request_id.clone(), method, Some(params)))
        {
            lock(&self.outstanding).remove(&key);
            return;
        }
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let Ok(answer) = reply.wait().await else {
                // Withdrawn (turn interrupted: already resolved) or disconnected (teardown).
                return;
            };
            if lock(&this.outstanding).remove(&key).is_none() {
                return;
            }
            let (decision, warning) = if patch {
                decisions::patch_answer(answer)
            } else {
                decisions::command_answer(answer)
            };
            if let Some(warning) = warning {
                this.warn(warning);
            }
            if let Some(approvals) = this.approvals.upgrade() {
                if patch {
                    approvals.submit_patch_approval(&id, decision).await;
                } else {
                    approvals
                        .submit_exec_approval(&id, Some(&turn_id), decision)
                        .await;
                }
            }
            this.resolved(&request_id);
        });
    }
}
