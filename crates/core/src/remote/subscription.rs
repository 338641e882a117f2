//! The bounded queue of one process's notifications on an exec-server connection: the
//! connection's reader routes each notification to its process without ever waiting (a slow
//! consumer must not stall the other processes and answers on the connection), and output
//! past [`MAX_QUEUED_OUTPUT`] is counted as dropped instead of queued (red-team F8, client
//! side).

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use airlock_jsonrpc::Notification;
use serde_json::Value;
use tokio::sync::mpsc;

use super::protocol::method;

/// Output notifications one process may have waiting for its consumer, in bytes of their
/// base64 `chunk` text: 8 MiB. The connection's reader never waits for a slow consumer (that
/// would stall every other process and answer on the connection); output past this bound is
/// counted instead of queued, and the consumer reports it as dropped bytes. Exit and close
/// events are always queued.
pub const MAX_QUEUED_OUTPUT: usize = 8 << 20;

/// The routing end of one [`Subscription`].
#[derive(Debug)]
pub(super) struct Subscriber {
    pub(super) tx: mpsc::UnboundedSender<Notification>,
    pub(super) counters: Arc<QueueCounters>,
}

/// Shared between the reader and one subscription.
#[derive(Debug, Default)]
pub(super) struct QueueCounters {
    /// Base64 bytes of output queued and not yet received.
    pub(super) queued: AtomicUsize,
    /// Decoded bytes of `stdout`/`pty` output not queued because of the bound.
    dropped_stdout: AtomicU64,
    /// The same for `stderr`.
    dropped_stderr: AtomicU64,
}

/// The notifications of one process (see [`Connection::subscribe`]).
#[derive(Debug)]
pub struct Subscription {
    pub(super) rx: mpsc::UnboundedReceiver<Notification>,
    pub(super) counters: Arc<QueueCounters>,
}

impl Subscription {
    /// The next notification; `None` once the connection is lost.
    pub async fn recv(&mut self) -> Option<Notification> {
        let notification = self.rx.recv().await?;
        if let Some(len) = output_chunk_len(&notification) {
            self.counters.queued.fetch_sub(len, Ordering::SeqCst);
        }
        Some(notification)
    }

    /// Decoded output bytes `(stdout, stderr)` not delivered because this subscription's queue
    /// was full (see [`MAX_QUEUED_OUTPUT`]); `pty` output counts as stdout.
    #[must_use]
    pub fn dropped(&self) -> (u64, u64) {
        (
            self.counters.dropped_stdout.load(Ordering::SeqCst),
            self.counters.dropped_stderr.load(Ordering::SeqCst),
        )
    }
}

/// The length of a `process/output` notification's base64 chunk.
fn output_chunk_len(notification: &Notification) -> Option<usize> {
    if notification.method != method::PROCESS_OUTPUT {
        return None;
    }
    notification
        .params
        .as_ref()
        .and_then(|p| p.get("chunk"))
        .and_then(Value::as_str)
        .map(str::len)
}

/// Bytes decoded from `len` characters of padded base64 (an upper bound of at most 2 bytes).
const fn decoded_len(len: usize) -> u64 {
    (len as u64 / 4) * 3
}

/// Queues `notification` for `subscriber`, or counts its output as dropped when the queue is
/// full.
pub(super) fn route(subscriber: &Subscriber, notification: Notification) {
    let counters = &subscriber.counters;
    if let Some(len) = output_chunk_len(&notification) {
        if counters.queued.load(Ordering::SeqCst) + len > MAX_QUEUED_OUTPUT {
            let stderr = notification
                .params
                .as_ref()
                .and_then(|p| p.get("stream"))
                .and_then(Value::as_str)
                == Some("stderr");
            let dropped = if stderr {
                &counters.dropped_stderr
            } else {
                &counters.dropped_stdout
            };
            dropped.fetch_add(decoded_len(len), Ordering::SeqCst);
            return;
        }
        counters.queued.fetch_add(len, Ordering::SeqCst);
    }
    let _ = subscriber.tx.send(notification);
}
