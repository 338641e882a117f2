//! The table of server-to-client requests (approvals, elicitations): allocates their ids,
//! matches the client's answers, and fails every waiter when the connection closes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::{ErrorObject, Message, MessageSink, RequestId};

/// What the client answered to one server request.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientReply {
    /// A `result` (still to be parsed by the caller; an unusable one must fail closed).
    Result(Value),
    /// A JSON-RPC error.
    Error(ErrorObject),
}

/// The connection closed, or the request was withdrawn, before the client answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the client disconnected before answering")]
pub struct Disconnected;

#[derive(Default)]
struct Table {
    waiting: HashMap<RequestId, oneshot::Sender<ClientReply>>,
    closed: bool,
}

#[derive(Default)]
struct Inner {
    next_id: AtomicI64,
    table: Mutex<Table>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts and
        // removes), so a poisoned lock is still usable.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Server-to-client requests of one connection. Cheap to clone (shared table). Ids are integers
/// counting up from 0 (as Codex's `outgoing_message.rs`).
#[derive(Clone, Default)]
pub struct PendingRequests {
    inner: Arc<Inner>,
}

impl PendingRequests {
    /// An empty, open table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a new request id and returns it with its reply handle, or `Err(Disconnected)`
    /// once [`PendingRequests::close`] was called.
    pub fn register(&self) -> Result<PendingReply, Disconnected> {
        let id = RequestId::Integer(self.inner.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        let mut table = self.inner.lock();
        if table.closed {
            return Err(Disconnected);
        }
        table.waiting.insert(id.clone(), tx);
        Ok(PendingReply {
            id,
            rx,
            inner: self.inner.clone(),
        })
    }

    /// Registers a request and sends it through `sink`. The answer arrives on the returned
    /// handle once [`PendingRequests::resolve`] sees it.
    ///
    /// # Errors
    /// [`Disconnected`] when the table is closed or the sink's writer is gone.
    pub fn send_request(
        &self,
        sink: &MessageSink,
        method: &str,
        params: Value,
    ) -> Result<PendingReply, Disconnected> {
        let reply = self.register()?;
        if !sink.send(Message::request(reply.id.clone(), method, Some(params))) {
            return Err(Disconnected);
        }
        Ok(reply)
    }

    /// Delivers the client's answer for `id`. Returns `false` when nothing waits for that id
    /// (unknown, already answered, or withdrawn): the caller may log it, nothing else happens.
    pub fn resolve(&self, id: &RequestId, reply: ClientReply) -> bool {
        let sender = self.inner.lock().waiting.remove(id);
        match sender {
            Some(tx) => tx.send(reply).is_ok(),
            None => false,
        }
    }

    /// Delivers an incoming [`Message::Response`] or [`Message::Error`]; any other message, or
    /// an error without an id, returns `false`.
    pub fn resolve_message(&self, message: &Message) -> bool {
        match message {
            Message::Response(r) => self.resolve(&r.id, ClientReply::Result(r.result.clone())),
            Message::Error(e) => match &e.id {
                Some(id) => self.resolve(id, ClientReply::Error(e.error.clone())),
                None => false,
            },
            _ => false,
        }
    }

    /// Withdraws one request: its waiter gets [`Disconnected`]. Returns whether it was waiting.
    pub fn cancel(&self, id: &RequestId) -> bool {
        self.inner.lock().waiting.remove(id).is_some()
    }

    /// The connection closed: every waiter gets [`Disconnected`] and later registrations fail.
    pub fn close(&self) {
        let drained: Vec<_> = {
            let mut table = self.inner.lock();
            table.closed = true;
            table.waiting.drain().collect()
        };
        drop(drained);
    }

    /// How many requests wait for an answer.
    pub fn len(&self) -> usize {
        self.inner.lock().waiting.len()
    }

    /// Whether no request waits for an answer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The pending answer to one server request. Dropping it withdraws the request from the table,
/// so an abandoned wait leaves no entry behind.
pub struct PendingReply {
    id: RequestId,
    rx: oneshot::Receiver<ClientReply>,
    inner: Arc<Inner>,
}

impl PendingReply {
    /// The request's id (to put in the outgoing message, or to report as resolved).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Waits for the client's answer.
    ///
    /// # Errors
    /// [`Disconnected`] when the connection closed or the request was cancelled first.
    pub async fn wait(mut self) -> Result<ClientReply, Disconnected> {
        (&mut self.rx).await.map_err(|_| Disconnected)
    }
}

impl Drop for PendingReply {
    fn drop(&mut self) {
        self.inner.lock().waiting.remove(&self.id);
    }
}

#[cfg(test)]
#[path = "pending_tests.rs"]
mod tests;
