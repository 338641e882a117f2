//! `ApprovalSession`: `request_approval` with hooks first, then the automatic reviewer or the
//! user, the session cache, and the user's answers (spec 06).

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ReviewDecision;
use serde_json::json;
use tokio::sync::mpsc::UnboundedSender;

use crate::ReviewFailureKind;
use crate::action::ApprovalAction;
use crate::amend::AmendmentTarget;
use crate::auto_review::AutoReviewRequest;
use crate::auto_review::run_auto_review;
use crate::cache::ApprovalStore;
use crate::config::ApprovalConfig;
use crate::context::ApprovalContext;
use crate::events::ApprovalEvent;
use crate::hooks::HookInput;
use crate::hooks::HookVerdict;
use crate::hooks::run_permission_request_hooks;
use crate::hooks::run_pre_tool_use_hooks;
use crate::resolution::ApprovalResolution;
use crate::resolution::DecisionSource;
use crate::turn::ApprovalTurn;
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
    pub(crate) amendments: Option<AmendmentTarget>,
    pub(crate) events: Option<UnboundedSender<ApprovalEvent>>,
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

    pub(crate) fn interrupt(&self, turn: &ApprovalTurn) {
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
    /// 3. otherwise the user, through the session cache ([`crate::with_cached_approval`]): a patch
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
        let (decision, source, review_failure) = tokio::select! {
            biased;
            () = turn.interrupted() => (ReviewDecision::Abort, DecisionSource::User, None),
            decided = self.decide(turn, action, ctx) => decided,
        };
        let resolution = ApprovalResolution::new(decision, source, started.elapsed())
            .with_review_failure(review_failure);
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
    ) -> (ReviewDecision, DecisionSource, Option<ReviewFailureKind>) {
        let (decision, source) = match self.decide_without_reviewer(turn, action, ctx).await {
            Ok(decided) => decided,
            Err(()) => {
                let (decision, kind) = self.auto_review(turn.settings(), action, ctx).await;
                return (decision, DecisionSource::AutoReview, kind);
            }
        };
        (decision, source, None)
    }

    /// Steps 0, 1 and 3 of [`Self::request_approval`]; `Err(())` when the automatic
    /// reviewer decides (step 2).
    async fn decide_without_reviewer(
        &self,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> Result<(ReviewDecision, DecisionSource), ()> {
        let settings = turn.settings();
        if let Some(reason) = ctx.category.refusal(settings.approval_policy) {
            return Ok((
                ReviewDecision::denied_with_reason(reason),
                DecisionSource::Config,
            ));
        }
        if !self.config.hooks.is_empty() {
            let input = self.hook_input(settings, action);
            let report = run_permission_request_hooks(&self.config.hooks, &input).await;
            for warning in report.warnings {
                self.warn(warning);
            }
            match report.verdict {
                Some(HookVerdict::Allow) => {
                    return Ok((ReviewDecision::Approved, DecisionSource::Hook));
                }
                Some(HookVerdict::Deny { message }) => {
                    return Ok((
                        ReviewDecision::denied_with_reason(message),
                        DecisionSource::Hook,
                    ));
                }
                None => {}
            }
        }
        if ctx.strict_auto_review || settings.approvals_reviewer == ApprovalsReviewer::AutoReview {
            return Err(());
        }
        Ok(self.ask_user(turn, action, ctx).await)
    }

    /// Runs the `PreToolUse` hooks for `action` (issue 18 item 7): every call asks them,
    /// also one that needs no approval. `Some(message)` when a hook blocks the call;
    /// failures and timeouts are warnings and block nothing (as Codex). Dropping the future
    /// kills the hooks still running.
    pub async fn run_pre_tool_use(
        &self,
        turn: &ApprovalTurn,
        action: &ApprovalAction,
    ) -> Option<String> {
        if self.config.pre_tool_use_hooks.is_empty() {
            return None;
        }
        let mut input = self.hook_input(turn.settings(), action);
        input.hook_event_name = "PreToolUse";
        let report = run_pre_tool_use_hooks(&self.config.pre_tool_use_hooks, &input).await;
        for warning in report.warnings {
            self.warn(warning);
        }
        match report.verdict {
            Some(HookVerdict::Deny { message }) => Some(message),
            _ => None,
        }
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
    ) -> (ReviewDecision, Option<ReviewFailureKind>) {
        let Some(config) = &self.config.auto_review else {
            self.warn(AUTO_REVIEW_NOT_CONFIGURED.to_owned());
            return (
                ReviewDecision::denied_with_reason(AUTO_REVIEW_NOT_CONFIGURED),
                Some(ReviewFailureKind::Crashed),
            );
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
            let kind = outcome.kind.map_or("failed", ReviewFailureKind::as_str);
            self.warn(format!(
                "automatic approval review failed ({kind}; denied): {failure}"
            ));
        } else if outcome.decision == ReviewDecision::TimedOut {
            self.warn(format!(
                "automatic approval review timed out after {} s",
                config.timeout.as_secs()
            ));
        }
        (outcome.decision, outcome.kind)
    }

    pub(crate) fn warn_unknown(&self, id: &str) {
        self.warn(format!("No pending approval found for call_id: {id}"));
    }

    pub(crate) fn warn(&self, message: String) {
        tracing::warn!("{message}");
        self.emit(ApprovalEvent::Warning { message });
    }

    pub(crate) fn emit_resolved(&self, turn: &ApprovalTurn, id: String, decision: ReviewDecision) {
        self.emit(ApprovalEvent::ApprovalResolved {
            id,
            turn_id: turn.turn_id().to_owned(),
            decision,
        });
    }

    pub(crate) fn emit(&self, event: ApprovalEvent) {
        if let Some(events) = &self.events {
            // A closed channel is handled where it matters (a prompt resolves to `abort`).
            let _ = events.send(event);
        }
    }
}
