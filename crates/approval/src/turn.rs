//! One turn's approval state: its settings, the pending user approvals keyed by
//! `approval_id` / `call_id`, and its interruption (spec 06 §User approval).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::MutexGuard;

use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::NetworkApprovalContext;
use airlock_protocol::ReviewDecision;
use tokio::sync::oneshot;
use tokio::sync::watch;

/// The per-turn settings approval depends on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnSettings {
    /// The turn id (in events and hook input).
    pub turn_id: String,
    /// The approval policy of the turn.
    pub approval_policy: AskForApproval,
    /// Who answers `NeedsApproval` (unless strict auto review applies).
    pub approvals_reviewer: ApprovalsReviewer,
    /// The model name given to hooks (`model` field); empty when unknown.
    pub model: String,
}

/// A registered user approval waiting for its answer.
#[derive(Debug)]
pub(crate) struct PendingEntry {
    sender: oneshot::Sender<ReviewDecision>,
    /// The decisions the prompt offered (an answer must be one of them, see
    /// [`crate::decisions::is_offered`]).
    pub offered: Vec<ReviewDecision>,
    /// The network context of the prompt, for persisting a network amendment.
    pub network_context: Option<NetworkApprovalContext>,
    generation: u64,
}

#[derive(Debug, Default)]
struct Pending {
    interrupted: bool,
    entries: HashMap<String, PendingEntry>,
    /// The ids that were pending when the turn was interrupted.
    withdrawn: Vec<String>,
    next_generation: u64,
}

/// One turn of a session, as the approval layer sees it. Created by
/// [`crate::ApprovalSession::start_turn`]; every request of the turn is made with it.
///
/// Interrupting the turn ([`crate::ApprovalSession::interrupt_turn`], an `abort` answer, or
/// starting the next turn) resolves every pending approval of the turn to `abort`, cancels its
/// running hooks and automatic reviews, and makes every later request of the turn `abort`
/// immediately.
#[derive(Debug)]
pub struct ApprovalTurn {
    settings: TurnSettings,
    pending: Mutex<Pending>,
    interrupted_tx: watch::Sender<bool>,
}

/// The result of registering a pending approval.
pub(crate) enum Registration {
    /// Registered; await the receiver. `replaced` is `true` when an entry with the same id was
    /// overwritten (its waiter resolves to `abort`).
    Registered {
        receiver: oneshot::Receiver<ReviewDecision>,
        generation: u64,
        replaced: bool,
    },
    /// The turn is interrupted: the request is `abort`.
    Interrupted,
}

impl ApprovalTurn {
    pub(crate) fn new(settings: TurnSettings) -> Self {
        Self {
            settings,
            pending: Mutex::new(Pending::default()),
            interrupted_tx: watch::Sender::new(false),
        }
    }

    /// The turn's settings.
    #[must_use]
    pub const fn settings(&self) -> &TurnSettings {
        &self.settings
    }

    /// The turn id.
    #[must_use]
    pub fn turn_id(&self) -> &str {
        &self.settings.turn_id
    }

    /// Whether the turn was interrupted.
    #[must_use]
    pub fn is_interrupted(&self) -> bool {
        self.lock().interrupted
    }

    /// How many user approvals are waiting for an answer.
    #[must_use]
    pub fn pending_count(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether the interruption withdrew a user approval of call `call_id` (its own id or
    /// a later request of it, `<call_id>:retry`): that call resolves to `abort` without
    /// running, so a caller may wait for it instead of killing it.
    #[must_use]
    pub fn withdrew_approval_of(&self, call_id: &str) -> bool {
        self.lock().withdrawn.iter().any(|id| {
            id == call_id
                || id
                    .strip_prefix(call_id)
                    .is_some_and(|rest| rest.starts_with(':'))
        })
    }

    /// The ids of the approvals waiting for an answer (unordered).
    #[must_use]
    pub fn pending_ids(&self) -> Vec<String> {
        self.lock().entries.keys().cloned().collect()
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Resolves when the turn is interrupted (immediately if it already is).
    pub async fn interrupted(&self) {
        let mut receiver = self.interrupted_tx.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = receiver.wait_for(|interrupted| *interrupted).await;
    }

    /// Marks the turn interrupted and drops every pending sender (each waiter resolves to
    /// `abort`). Returns the ids that were pending.
    pub(crate) fn interrupt(&self) -> Vec<String> {
        let drained: Vec<(String, PendingEntry)> = {
            let mut pending = self.lock();
            pending.interrupted = true;
            let drained: Vec<(String, PendingEntry)> = pending.entries.drain().collect();
            pending
                .withdrawn
                .extend(drained.iter().map(|(id, _)| id.clone()));
            drained
        };
        self.interrupted_tx.send_replace(true);
        drained.into_iter().map(|(id, _)| id).collect()
    }

    /// Registers a one-shot sender under `id` before the event is emitted.
    pub(crate) fn register(
        &self,
        id: &str,
        offered: Vec<ReviewDecision>,
        network_context: Option<NetworkApprovalContext>,
    ) -> Registration {
        let mut pending = self.lock();
        if pending.interrupted {
            return Registration::Interrupted;
        }
        let (sender, receiver) = oneshot::channel();
        let generation = pending.next_generation;
        pending.next_generation += 1;
        let replaced = pending
            .entries
            .insert(
                id.to_owned(),
                PendingEntry {
                    sender,
                    offered,
                    network_context,
                    generation,
                },
            )
            .is_some();
        Registration::Registered {
            receiver,
            generation,
            replaced,
        }
    }

    /// Reads what a pending entry offered, without removing it.
    pub(crate) fn peek(
        &self,
        id: &str,
    ) -> Option<(Vec<ReviewDecision>, Option<NetworkApprovalContext>)> {
        self.lock()
            .entries
            .get(id)
            .map(|entry| (entry.offered.clone(), entry.network_context.clone()))
    }

    /// Removes the entry for `id` and sends `decision` to its waiter. `None` when no entry
    /// exists; `Some(false)` when its waiter is already gone (cancelled).
    pub(crate) fn deliver(&self, id: &str, decision: ReviewDecision) -> Option<bool> {
        let entry = self.lock().entries.remove(id);
        entry.map(|entry| entry.sender.send(decision).is_ok())
    }

    /// Removes the entry for `id` if it is still the one registered as `generation` (used when a
    /// waiting request is cancelled, so nothing leaks).
    /// Returns whether it removed one.
    pub(crate) fn forget(&self, id: &str, generation: u64) -> bool {
        let mut pending = self.lock();
        if pending
            .entries
            .get(id)
            .is_some_and(|entry| entry.generation == generation)
        {
            pending.entries.remove(id);
            return true;
        }
        false
    }
}
