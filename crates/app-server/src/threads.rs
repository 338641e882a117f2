//! Threads (one core session each) and their turns.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use airlock_app_server_protocol::Turn;
use airlock_app_server_protocol::TurnNotification;
use airlock_app_server_protocol::TurnStatus;
use airlock_app_server_protocol::methods;
use airlock_approval::ApprovalTurn;
use airlock_core::Session;
use airlock_jsonrpc::ErrorObject;
use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use airlock_jsonrpc::RequestId;

use crate::backend::ThreadContext;

/// How many ended turns a thread remembers, so a late call on one is answered `declined`
/// rather than "unknown turn".
const REMEMBERED_TURNS: usize = 64;

/// One turn of a thread.
#[derive(Clone)]
pub struct TurnEntry {
    /// The approval layer's turn (interrupt flag, pending approvals).
    pub turn: Arc<ApprovalTurn>,
    /// Set when the turn ended normally (a later `turn/start`, `thread/end`) rather than by
    /// an interrupt, so `turn/completed` says `completed`.
    ended: Arc<AtomicBool>,
}

#[derive(Default)]
struct TurnBook {
    active: Option<String>,
    known: HashMap<String, TurnEntry>,
    order: VecDeque<String>,
}

/// One thread: a core session and its turns.
pub struct ThreadState {
    /// The thread id (also the audit session id).
    pub id: String,
    /// What it was started with.
    pub context: ThreadContext,
    /// The core session.
    pub session: Arc<Session>,
    /// Server requests waiting for the client, by (turn id, approval id).
    pub outstanding: Arc<Mutex<HashMap<(String, String), RequestId>>>,
    turns: Mutex<TurnBook>,
    next_turn: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Only plain inserts and removes happen under these locks: a poisoned one is consistent.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ThreadState {
    /// A thread around `session`.
    pub fn new(id: String, context: ThreadContext, session: Session) -> Self {
        Self {
            id,
            context,
            session: Arc::new(session),
            outstanding: Arc::default(),
            turns: Mutex::default(),
            next_turn: AtomicU64::new(1),
        }
    }

    /// Starts a turn (the previous one, if any, ends normally: its pending approvals abort and
    /// its running commands are killed) and spawns the watcher that sends `turn/completed`.
    pub fn start_turn(&self, sink: &MessageSink) -> Turn {
        let turn_id = format!("turn-{}", self.next_turn.fetch_add(1, Ordering::Relaxed));
        let mut book = lock(&self.turns);
        if let Some(previous) = book
            .active
            .take()
            .and_then(|id| book.known.get(&id).cloned())
        {
            previous.ended.store(true, Ordering::SeqCst);
        }
        let turn = self.session.start_turn(turn_id.clone());
        let entry = TurnEntry {
            turn: Arc::clone(&turn),
            ended: Arc::default(),
        };
        book.active = Some(turn_id.clone());
        book.known.insert(turn_id.clone(), entry.clone());
        book.order.push_back(turn_id.clone());
        while book.order.len() > REMEMBERED_TURNS {
            if let Some(old) = book.order.pop_front() {
                book.known.remove(&old);
            }
        }
        drop(book);
        let sink = sink.clone();
        let thread_id = self.id.clone();
        let id = turn_id.clone();
        tokio::spawn(async move {
            entry.turn.interrupted().await;
            let status = if entry.ended.load(Ordering::SeqCst) {
                TurnStatus::Completed
            } else {
                TurnStatus::Interrupted
            };
            let note = TurnNotification {
                thread_id,
                turn: Turn { id, status },
            };
            sink.send(Message::notification(
                methods::TURN_COMPLETED,
                serde_json::to_value(note).ok(),
            ));
        });
        Turn {
            id: turn_id,
            status: TurnStatus::InProgress,
        }
    }

    /// The turn `turn_id` of this thread (active or recently ended).
    ///
    /// # Errors
    /// -32602 naming `turnId` when the thread has no such turn.
    pub fn turn(&self, turn_id: &str) -> Result<TurnEntry, ErrorObject> {
        lock(&self.turns).known.get(turn_id).cloned().ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "invalid params: turnId: thread {} has no turn `{turn_id}`; start one with turn/start",
                self.id
            ))
        })
    }

    /// `turn/interrupt`: interrupts `turn_id` if it is the active turn.
    ///
    /// # Errors
    /// -32602 naming `turnId` when it is not this thread's active turn.
    pub fn interrupt(&self, turn_id: &str) -> Result<(), ErrorObject> {
        let book = lock(&self.turns);
        if book.active.as_deref() != Some(turn_id) {
            let entry = book.known.get(turn_id);
            if entry.is_some_and(|e| e.turn.is_interrupted()) {
                return Ok(());
            }
            return Err(ErrorObject::invalid_params(format!(
                "invalid params: turnId: `{turn_id}` is not the active turn of thread {}",
                self.id
            )));
        }
        drop(book);
        self.session.approvals().interrupt_turn();
        Ok(())
    }

    /// Ends the thread's active turn normally (`thread/end`).
    pub fn end(&self) {
        let mut book = lock(&self.turns);
        if let Some(entry) = book
            .active
            .take()
            .and_then(|id| book.known.get(&id).cloned())
        {
            entry.ended.store(true, Ordering::SeqCst);
        }
        drop(book);
        self.session.approvals().end_turn();
    }

    /// The connection closed: the active turn is interrupted (pending approvals abort,
    /// commands are killed by their calls).
    pub fn abort(&self) {
        lock(&self.turns).active = None;
        self.session.approvals().end_turn();
    }
}

impl ThreadState {
    /// The thread's working directory (commands' relative `cwd` resolve against it).
    pub fn context_cwd(&self) -> std::path::PathBuf {
        self.context.params.cwd.clone().unwrap_or_default()
    }
}
