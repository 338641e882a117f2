//! `ApprovalSession`: `request_approval` with hooks first, then the automatic reviewer or the
//! user, the session cache, and the user's answers (spec 06).

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;
use std::time::SystemTime;
use std::time::UNIX_EPOCH;

use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ReviewDecision;
use serde_json::json;
use tokio::sync::mpsc::UnboundedSender;

use crate::action::ApprovalAction;
use crate::amend::AmendmentTarget;
use crate::auto_review::AutoReviewRequest;
use crate::auto_review::run_auto_review;
use crate::cache::ApprovalStore;
use crate::cache::with_cached_approval;
use crate::config::ApprovalConfig;
use crate::context::ApprovalContext;
use crate::decisions::available_decisions;
use crate::decisions::is_offered;
use crate::decisions::patch_decisions;
use crate::decisions::proposed_network_policy_amendments;
use crate::events::ApplyPatchApprovalRequestEvent;
use crate::events::ApprovalEvent;
use crate::events::ExecApprovalRequestEvent;
use crate::events::ParsedCommandSummary;
use crate::hooks::HookInput;
use crate::hooks::HookVerdict;
use crate::hooks::run_permission_request_hooks;
use crate::resolution::ApprovalResolution;
use crate::resolution::DecisionSource;
use crate::turn::ApprovalTurn;
use crate::turn::Registration;
use crate::turn::TurnSettings;

/// The denial when the user should answer but nobody can (spec 10: non-interactive, fail closed).
pub const NO_REVIEWER_AVAILABLE: &str = "approval required but no reviewer is available";
/// The denial when the automatic reviewer should answer but none is configured (fail closed).
pub const AUTO_REVIEW_NOT_CONFIGURED: &str = "approval required from the automatic reviewer, but \
     `[auto_review]` configures neither `command` nor `endpoint`";

/// One session's approval machinery (spec 06): hooks, the automatic reviewer, the user reviewer
/// (through [`ApprovalEvent`]s and the `submit_*` answers), the in-memory session cache, and the
/// target of amendment decisions.
///
/// Thread-safe; share it in an `Arc`. Many requests may be in flight at once.
#[derive(Debug)]
pub struct ApprovalSession {
    session_id: String,
    config: ApprovalConfig,
    store: ApprovalStore,
    amendments: Option<AmendmentTarget>,
    events: Option<UnboundedSender<ApprovalEvent>>,
    active_turn: Mutex<Option<Arc<ApprovalTurn>>>,
}

impl ApprovalSession {
    /// A session. `events` is where user prompts, resolutions and warnings go; `None` means no
    /// person can answer, so a request routed to the user is denied with
    /// [`NO_REVIEWER_AVAILABLE`]. A closed `events` channel makes such requests `abort`.
    #[must_use]
    pub fn new(
        session_id: impl Into<String>,
        config: ApprovalConfig,
        events: Option<UnboundedSender<ApprovalEvent>>,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            config,
            store: ApprovalStore::new(),
            amendments: None,
            events,
            active_turn: Mutex::new(None),
        }
    }

    /// Where accepted `approved_execpolicy_amendment` / `network_policy_amendment` decisions are
    /// persisted. Without a target such decisions still apply to their request, with a warning.
    #[must_use]
    pub fn with_amendment_target(mut self, target: AmendmentTarget) -> Self {
        self.amendments = Some(target);
        self
    }

    /// The session id.
    #[must_use]
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The configuration in use.
    #[must_use]
    pub const fn config(&self) -> &ApprovalConfig {
        &self.config
    }

    /// The session cache.
    #[must_use]
    pub const fn store(&self) -> &ApprovalStore {
        &self.store
    }

    /// Starts a turn and makes it the active one; the previous active turn, if any, is
    /// interrupted (its pending approvals resolve to `abort`).
    pub fn start_turn(&self, settings: TurnSettings) -> Arc<ApprovalTurn> {
        let turn = Arc::new(ApprovalTurn::new(settings));
        let previous = self.lock_active().replace(Arc::clone(&turn));
        if let Some(previous) = previous {
            self.interrupt(&previous);
        }
        turn
    }

    /// Ends the active turn: nothing may stay pending after it (spec 06; reference §7
    /// `clear_pending`), so its remaining approvals resolve to `abort`.
    pub fn end_turn(&self) {
        let previous = self.lock_active().take();
        if let Some(previous) = previous {
            self.interrupt(&previous);
        }
    }

    /// Interrupts the active turn (an `abort` answer, `turn/interrupt`, a disconnected client):
    /// every pending approval resolves to `abort`, running hooks and reviews are cancelled, and
    /// later requests of the turn are `abort` at once (spec README invariant 8).
    pub fn interrupt_turn(&self) {
        if let Some(turn) = self.active_turn() {
            self.interrupt(&turn);
        }
    }

    /// The active turn, if any.
    #[must_use]
    pub fn active_turn(&self) -> Option<Arc<ApprovalTurn>> {
        self.lock_active().clone()
    }

    /// Whether a person is being waited on (the session's pause state).
    #[must_use]
    pub fn is_waiting_on_user(&self) -> bool {
        self.active_turn()
            .is_some_and(|turn| turn.pending_count() > 0)
    }

    fn lock_active(&self) -> std::sync::MutexGuard<'_, Option<Arc<ApprovalTurn>>> {
        self.active_turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn interrupt(&self, turn: &ApprovalTurn) {
        for id in turn.interrupt() {
            self.emit_resolved(turn, id, ReviewDecision::Abort);
        }
    }

    /// Asks for approval of `action` in `turn` (spec 06 `Session::request_approval`):
    ///
    /// 0. an interrupted turn → `abort`; a policy that forbids asking about `ctx.category`
    ///    (`never`, or `granular` with the category `false`) → `denied` at once, source
    ///    `config`: no hook, no reviewer, no pending request (invariants 4 and 5);
    /// 1. permission-request hooks: any deny wins → `denied`, else an allow → `approved` (source
    ///    `hook`, final: invariant 6); failures and timeouts are warnings, no verdict;
    /// 2. `ctx.strict_auto_review` or reviewer `auto_review` → the automatic reviewer (never
    ///    cached; `timed_out` after its deadline; unusable answers `denied`);
    /// 3. otherwise the user, through the session cache ([`with_cached_approval`]): a patch
    ///    whose permissions are pre-approved and that is not a retry is `approved` (source
    ///    `config`); patch retries and network prompts are never cached.
    ///
    /// Never fails: every problem becomes a refusing decision. Map the result with
    /// [`ApprovalResolution::into_tool_result`] after recording it in the audit log. Dropping
    /// the future cancels the request cleanly (hooks killed, pending entry removed).
    pub async fn request_approval(
        &self,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> ApprovalResolution {
        let started = Instant::now();
        let (decision, source) = tokio::select! {
            biased;
            () = turn.interrupted() => (ReviewDecision::Abort, DecisionSource::User),
            decided = self.decide(turn, action, ctx) => decided,
        };
        let resolution = ApprovalResolution::new(decision, source, started.elapsed());
        tracing::debug!(
            call_id = %ctx.call_id,
            tool = action.tool_label(),
            decision = resolution.decision.opaque_label(),
            source = ?resolution.source,
            "approval resolved"
        );
        resolution
    }

    async fn decide(
        &self,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> (ReviewDecision, DecisionSource) {
        let settings = turn.settings();
        if let Some(reason) = ctx.category.refusal(settings.approval_policy) {
            return (
                ReviewDecision::denied_with_reason(reason),
                DecisionSource::Config,
            );
        }
        if !self.config.hooks.is_empty() {
            let input = self.hook_input(settings, action);
            let report = run_permission_request_hooks(&self.config.hooks, &input).await;
            for warning in report.warnings {
                self.warn(warning);
            }
            match report.verdict {
                Some(HookVerdict::Allow) => {
                    return (ReviewDecision::Approved, DecisionSource::Hook);
                }
                Some(HookVerdict::Deny { message }) => {
                    return (
                        ReviewDecision::denied_with_reason(message),
                        DecisionSource::Hook,
                    );
                }
                None => {}
            }
        }
        if ctx.strict_auto_review || settings.approvals_reviewer == ApprovalsReviewer::AutoReview {
            return (
                self.auto_review(settings, action, ctx).await,
                DecisionSource::AutoReview,
            );
        }
        self.ask_user(turn, action, ctx).await
    }

    fn hook_input(&self, settings: &TurnSettings, action: &ApprovalAction) -> HookInput {
        let payload = action.hook_payload();
        let approval_context = action.command_action().map(|command| {
            let mut context = serde_json::Map::new();
            context.insert(
                "sandbox_permissions".to_owned(),
                json!(command.sandbox_permissions),
            );
            if let Some(extra) = &command.additional_permissions {
                context.insert("additional_permissions".to_owned(), json!(extra));
            }
            if let Some(justification) = &command.justification {
                context.insert("justification".to_owned(), json!(justification));
            }
            serde_json::Value::Object(context)
        });
        HookInput {
            session_id: self.session_id.clone(),
            turn_id: settings.turn_id.clone(),
            transcript_path: None,
            cwd: action.cwd().to_path_buf(),
            hook_event_name: "PermissionRequest",
            model: settings.model.clone(),
            permission_mode: if settings.approval_policy == AskForApproval::Never {
                "bypassPermissions"
            } else {
                "default"
            },
            tool_name: payload.tool_name,
            tool_input: payload.tool_input,
            approval_context,
        }
    }

    async fn auto_review(
        &self,
        settings: &TurnSettings,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> ReviewDecision {
        let Some(config) = &self.config.auto_review else {
            self.warn(AUTO_REVIEW_NOT_CONFIGURED.to_owned());
            return ReviewDecision::denied_with_reason(AUTO_REVIEW_NOT_CONFIGURED);
        };
        let request = AutoReviewRequest {
            session_id: &self.session_id,
            turn_id: &settings.turn_id,
            call_id: &ctx.call_id,
            action,
            approval_reason: ctx.approval_reason.as_deref(),
            retry_reason: ctx.retry_reason.as_deref(),
            network_approval_context: ctx.network_approval_context.as_ref(),
            permission_profile: ctx.permission_profile.as_ref(),
            approval_policy: settings.approval_policy,
            strict_auto_review: ctx.strict_auto_review,
        };
        let outcome = run_auto_review(config, &request).await;
        if let Some(failure) = &outcome.failure {
            self.warn(format!(
                "automatic approval review failed (denied): {failure}"
            ));
        } else if outcome.decision == ReviewDecision::TimedOut {
            self.warn(format!(
                "automatic approval review timed out after {} s",
                config.timeout.as_secs()
            ));
        }
        outcome.decision
    }

    async fn ask_user(
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
        let cached = with_cached_approval(&self.store, &scope, &keys, || {
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
            ApprovalAction::Shell(_) | ApprovalAction::ExecCommand(_) => {
                let Some(command) = action.command_action() else {
                    return (self.patch_event(turn, action, ctx), patch_decisions());
                };
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
                    proposed_network_policy_amendments: network
                        .map(proposed_network_policy_amendments),
                    additional_permissions: command.additional_permissions.clone(),
                    available_decisions: offered.clone(),
                    parsed_cmd: ParsedCommandSummary::for_command(&command.command),
                };
                (ApprovalEvent::ExecApprovalRequest(Box::new(event)), offered)
            }
            ApprovalAction::ApplyPatch(_) => {
                (self.patch_event(turn, action, ctx), patch_decisions())
            }
        }
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

    /// Handles `Op::ExecApproval { id, turn_id, decision }` (spec 06 §User approval
    /// "Responses"), in this order:
    /// - no pending approval `id` in the active turn (or a `turn_id` that is not the active
    ///   turn's) → warning `No pending approval found for call_id: <id>`, nothing else;
    /// - an approving decision the prompt did not offer → warning, and it is replaced by
    ///   `denied` (fail closed);
    /// - `approved_execpolicy_amendment` → the prefix rule is persisted and added to the live
    ///   policy **first**; on failure a warning `Failed to apply execpolicy amendment: <err>`
    ///   and the decision is still delivered; likewise `network_policy_amendment` with
    ///   `Failed to apply network policy amendment: <err>`;
    /// - `abort` → the whole turn is interrupted (every pending approval resolves to `abort`);
    /// - anything else → [`Self::notify_approval`].
    pub async fn submit_exec_approval(
        &self,
        id: &str,
        turn_id: Option<&str>,
        decision: ReviewDecision,
    ) {
        let Some(turn) = self
            .active_turn()
            .filter(|turn| turn_id.is_none_or(|t| t == turn.turn_id()))
        else {
            self.warn_unknown(id);
            return;
        };
        let Some((offered, network)) = turn.peek(id) else {
            self.warn_unknown(id);
            return;
        };
        let decision = if is_offered(&decision, &offered) {
            decision
        } else {
            self.warn(format!(
                "decision `{}` was not offered for approval {id}; treated as denied",
                decision.opaque_label()
            ));
            ReviewDecision::denied_with_reason(format!(
                "the reviewer's answer `{}` was not one of the offered decisions",
                decision.opaque_label()
            ))
        };
        match &decision {
            ReviewDecision::ApprovedExecpolicyAmendment {
                proposed_execpolicy_amendment,
            } => {
                let result = match &self.amendments {
                    Some(target) => {
                        target
                            .persist_exec_amendment(&proposed_execpolicy_amendment.command)
                            .await
                    }
                    None => Err("no rules file is configured for amendments".to_owned()),
                };
                if let Err(error) = result {
                    self.warn(format!("Failed to apply execpolicy amendment: {error}"));
                }
            }
            ReviewDecision::NetworkPolicyAmendment {
                network_policy_amendment,
            } => {
                let result = match (&self.amendments, &network) {
                    (Some(target), Some(context)) => {
                        target
                            .persist_network_amendment(network_policy_amendment, context.protocol)
                            .await
                    }
                    (None, _) => Err("no rules file is configured for amendments".to_owned()),
                    (_, None) => Err("the request has no network context".to_owned()),
                };
                if let Err(error) = result {
                    self.warn(format!("Failed to apply network policy amendment: {error}"));
                }
            }
            _ => {}
        }
        if decision == ReviewDecision::Abort {
            self.interrupt(&turn);
            return;
        }
        self.deliver(&turn, id, decision);
    }

    /// Handles `Op::PatchApproval { id, decision }`: as [`Self::submit_exec_approval`] (a patch
    /// prompt offers no amendment, so an amendment answer becomes `denied`).
    pub async fn submit_patch_approval(&self, id: &str, decision: ReviewDecision) {
        self.submit_exec_approval(id, None, decision).await;
    }

    /// Removes the pending approval `id` of the active turn and sends it `decision` (no
    /// amendment persistence, no offered-decision check: use the `submit_*` methods for client
    /// answers). Returns `false`, with the warning `No pending approval found for call_id:
    /// <id>`, when there is none.
    pub fn notify_approval(&self, id: &str, decision: ReviewDecision) -> bool {
        match self.active_turn() {
            Some(turn) => self.deliver(&turn, id, decision),
            None => {
                self.warn_unknown(id);
                false
            }
        }
    }

    fn deliver(&self, turn: &ApprovalTurn, id: &str, decision: ReviewDecision) -> bool {
        match turn.deliver(id, decision.clone()) {
            Some(delivered) => {
                self.emit_resolved(turn, id.to_owned(), decision);
                delivered
            }
            None => {
                self.warn_unknown(id);
                false
            }
        }
    }

    fn warn_unknown(&self, id: &str) {
        self.warn(format!("No pending approval found for call_id: {id}"));
    }

    fn warn(&self, message: String) {
        tracing::warn!("{message}");
        self.emit(ApprovalEvent::Warning { message });
    }

    fn emit_resolved(&self, turn: &ApprovalTurn, id: String, decision: ReviewDecision) {
        self.emit(ApprovalEvent::ApprovalResolved {
            id,
            turn_id: turn.turn_id().to_owned(),
            decision,
        });
    }

    fn emit(&self, event: ApprovalEvent) {
        if let Some(events) = &self.events {
            // A closed channel is handled where it matters (a prompt resolves to `abort`).
            let _ = events.send(event);
        }
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

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}
