//! The user reviewer: the session cache, the pending entry, the event, and the wait (spec 06
//! §User approval, step 6).

use std::time::SystemTime;
use std::time::UNIX_EPOCH;

use airlock_protocol::ReviewDecision;
use tokio::sync::mpsc::UnboundedSender;

use crate::action::ApprovalAction;
use crate::action::CommandAction;
use crate::cache::with_cached_approval;
use crate::context::ApprovalContext;
use crate::decisions::available_decisions;
use crate::decisions::patch_decisions;
use crate::decisions::proposed_network_policy_amendments;
use crate::events::ApplyPatchApprovalRequestEvent;
use crate::events::ApprovalEvent;
use crate::events::ExecApprovalRequestEvent;
use crate::events::ParsedCommandSummary;
use crate::resolution::DecisionSource;
use crate::session::ApprovalSession;
use crate::session::NO_REVIEWER_AVAILABLE;
use crate::turn::ApprovalTurn;
use crate::turn::Registration;

impl ApprovalSession {
    pub(crate) async fn ask_user(
        &self,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> (ReviewDecision, DecisionSource) {
        if let ApprovalAction::ApplyPatch(patch) = action
            && patch.permissions_preapproved
            && ctx.retry_reason.is_none()
        {
            return (ReviewDecision::Approved, DecisionSource::Config);
        }
        let Some(events) = &self.events else {
            return (
                ReviewDecision::denied_with_reason(NO_REVIEWER_AVAILABLE),
                DecisionSource::Config,
            );
        };
        let uncacheable = ctx.network_approval_context.is_some()
            || (matches!(action, ApprovalAction::ApplyPatch(_)) && ctx.retry_reason.is_some());
        let keys = if uncacheable {
            Vec::new()
        } else {
            action.cache_keys()
        };
        let scope = ctx
            .permission_profile
            .as_ref()
            .and_then(|profile| serde_json::to_string(profile).ok())
            .unwrap_or_default();
        let cached = with_cached_approval(self.store(), &scope, &keys, || {
            self.prompt_user(events, turn, action, ctx)
        })
        .await;
        let source = if cached.from_cache {
            DecisionSource::SessionCache
        } else {
            DecisionSource::User
        };
        (cached.decision, source)
    }

    /// Registers the pending entry, emits the event, and waits (spec 06 §User approval).
    async fn prompt_user(
        &self,
        events: &UnboundedSender<ApprovalEvent>,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> ReviewDecision {
        let id = ctx.effective_approval_id().to_owned();
        let (event, offered) = self.user_event(turn, action, ctx);
        let registration = turn.register(&id, offered, ctx.network_approval_context.clone());
        let Registration::Registered {
            receiver,
            generation,
            replaced,
        } = registration
        else {
            return ReviewDecision::Abort;
        };
        if replaced {
            self.emit_resolved(turn, id.clone(), ReviewDecision::Abort);
            self.warn(format!(
                "a new approval request replaced the pending one with id {id}; the earlier request is aborted"
            ));
        }
        let guard = PendingGuard {
            session: self,
            turn,
            id: &id,
            generation,
        };
        if events.send(event).is_err() {
            // Nobody can answer any more: treat like a closed reply channel.
            return ReviewDecision::Abort;
        }
        // A dropped sender (turn interrupted, entry replaced) or a client that stopped reading
        // events both mean nobody will answer: `abort`.
        let decision = tokio::select! {
            answer = receiver => answer.unwrap_or(ReviewDecision::Abort),
            () = events.closed() => ReviewDecision::Abort,
        };
        drop(guard);
        decision
    }

    fn user_event(
        &self,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> (ApprovalEvent, Vec<ReviewDecision>) {
        match action {
            ApprovalAction::Shell(command) => self.exec_event(turn, command, ctx),
            ApprovalAction::ExecCommand(exec) => self.exec_event(turn, &exec.command, ctx),
            ApprovalAction::ApplyPatch(_) => {
                (self.patch_event(turn, action, ctx), patch_decisions())
            }
        }
    }

    fn exec_event(
        &self,
        turn: &ApprovalTurn,
        command: &CommandAction,
        ctx: &ApprovalContext,
    ) -> (ApprovalEvent, Vec<ReviewDecision>) {
        let network = ctx.network_approval_context.as_ref();
        let offered = available_decisions(
            network,
            command.proposed_execpolicy_amendment.as_ref(),
            command.additional_permissions.as_ref(),
        );
        let event = ExecApprovalRequestEvent {
            call_id: ctx.call_id.clone(),
            approval_id: ctx.approval_id.clone(),
            turn_id: turn.turn_id().to_owned(),
            environment_id: command.environment_id.clone(),
            started_at_ms: now_ms(),
            command: command.command.clone(),
            cwd: command.cwd.clone(),
            reason: ctx
                .retry_reason
                .clone()
                .or_else(|| ctx.approval_reason.clone())
                .or_else(|| command.justification.clone()),
            network_approval_context: network.cloned(),
            proposed_execpolicy_amendment: command.proposed_execpolicy_amendment.clone(),
            proposed_network_policy_amendments: network.map(proposed_network_policy_amendments),
            additional_permissions: command.additional_permissions.clone(),
            available_decisions: offered.clone(),
            parsed_cmd: ParsedCommandSummary::for_command(&command.command),
        };
        (ApprovalEvent::ExecApprovalRequest(Box::new(event)), offered)
    }

    fn patch_event(
        &self,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> ApprovalEvent {
        let changes = match action {
            ApprovalAction::ApplyPatch(patch) => patch.changes.clone(),
            ApprovalAction::Shell(_) | ApprovalAction::ExecCommand(_) => Default::default(),
        };
        ApprovalEvent::ApplyPatchApprovalRequest(ApplyPatchApprovalRequestEvent {
            call_id: ctx.call_id.clone(),
            turn_id: turn.turn_id().to_owned(),
            changes,
            reason: ctx
                .retry_reason
                .clone()
                .or_else(|| ctx.approval_reason.clone()),
            grant_root: ctx.grant_root.clone(),
        })
    }
}

/// Removes a still-registered pending entry when its request is cancelled, and reports it as
/// resolved (`abort`), so no entry outlives its request.
struct PendingGuard<'a> {
    session: &'a ApprovalSession,
    turn: &'a ApprovalTurn,
    id: &'a str,
    generation: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.turn.forget(self.id, self.generation) {
            self.session
                .emit_resolved(self.turn, self.id.to_owned(), ReviewDecision::Abort);
        }
    }
}

/// Now, in milliseconds since the Unix epoch (0 if the clock is before it).
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}
