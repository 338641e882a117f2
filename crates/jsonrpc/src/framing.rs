//! Newline-delimited framing: one JSON message per line, in both directions.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Notify;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::Message;

/// The default cap on one incoming line: 8 MiB (a patch or a long command fits; a runaway
/// client does not make the server buffer without bound).
pub const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// One frame read by [`LineReader`].
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its `\n` (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than the cap; its bytes were discarded as they arrived. `len` is how many
    /// bytes the line had (without the newline).
    TooLong {
        /// Length of the discarded line in bytes.
        len: usize,
    },
}

/// Reads newline-delimited frames with a cap on the line length. Blank lines are skipped.
/// Memory use is bounded by the cap plus the read buffer, whatever the client sends.
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    buf: Vec<u8>,
    /// `Some(n)` while discarding an over-long line that has had `n` bytes so far.
    discarding: Option<usize>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader over `reader` that refuses lines longer than `max_line_bytes`.
    pub fn new(reader: R, max_line_bytes: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max: max_line_bytes,
            buf: Vec::new(),
            discarding: None,
        }
    }

    /// The next frame, or `None` at end of input. A last line without a newline counts.
    ///
    /// # Errors
    /// The underlying read error.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if let Some(len) = self.discarding.take() {
                    return Ok(Some(Frame::TooLong { len }));
                }
                if self.buf.iter().all(u8::is_ascii_whitespace) {
                    self.buf.clear();
                    return Ok(None);
                }
                return Ok(Some(Frame::Line(finish(&mut self.buf))));
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.unwrap_or(available.len());
            match self.discarding {
                Some(so_far) => self.discarding = Some(so_far + take),
                None if self.buf.len() + take > self.max => {
                    self.discarding = Some(self.buf.len() + take);
                    self.buf = Vec::new();
                }
                None => self.buf.extend_from_slice(&available[..take]),
            }
            let consumed = take + usize::from(newline.is_some());
            self.inner.consume(consumed);
            if newline.is_none() {
                continue;
            }
            if let Some(len) = self.discarding.take() {
                return Ok(Some(Frame::TooLong { len }));
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                self.buf.clear();
                continue;
            }
            return Ok(Some(Frame::Line(finish(&mut self.buf))));
        }
    }
}

fn finish(buf: &mut Vec<u8>) -> Vec<u8> {
    let mut line = std::mem::take(buf);
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

/// How outgoing messages are spelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireStyle {
    /// Write `"jsonrpc":"2.0"` in every message (MCP needs it; Codex's app-server omits it).
    pub with_version: bool,
}

/// A cloneable handle that queues messages for the writer task of [`spawn_writer`]. Messages
/// from one handle are written in the order sent; each is one line.
///
/// The queue itself is unbounded (an answer is never refused), but it counts what is queued,
/// so a producer of bulk output (a command's stdout) can wait with [`MessageSink::wait_room`]
/// until the writer has caught up instead of piling the whole output up in memory.
#[derive(Clone, Debug)]
pub struct MessageSink {
    tx: mpsc::UnboundedSender<Message>,
    backlog: Arc<Backlog>,
}

/// Messages queued and not yet taken by the receiver, and the wake-up of those waiting for
/// room.
#[derive(Debug, Default)]
struct Backlog {
    queued: AtomicUsize,
    taken: Notify,
}

impl MessageSink {
    /// Queues `message`. Returns `false` when the writer is gone (the peer disconnected).
    pub fn send(&self, message: Message) -> bool {
        self.backlog.queued.fetch_add(1, Ordering::SeqCst);
        if self.tx.send(message).is_ok() {
            return true;
        }
        self.backlog.queued.fetch_sub(1, Ordering::SeqCst);
        false
    }

    /// Whether the writer task has stopped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// The number of messages queued and not yet taken by the writer.
    pub fn queued(&self) -> usize {
        self.backlog.queued.load(Ordering::SeqCst)
    }

    /// Waits until fewer than `limit` messages are queued, or the writer is gone (then a
    /// send is dropped anyway, so nobody waits for a peer that left).
    pub async fn wait_room(&self, limit: usize) {
        loop {
            let taken = self.backlog.taken.notified();
            tokio::pin!(taken);
            taken.as_mut().enable();
            if self.queued() < limit || self.tx.is_closed() {
                return;
            }
            tokio::select! {
                () = taken => {}
                () = self.tx.closed() => return,
            }
        }
    }

    /// A sink whose messages arrive on the returned receiver (for tests and in-process peers).
    pub fn channel() -> (MessageSink, MessageReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(Backlog::default());
        (
            MessageSink {
                tx,
                backlog: Arc::clone(&backlog),
            },
            MessageReceiver { rx, backlog },
        )
    }
}

/// The receiving end of [`MessageSink::channel`]: taking a message makes room for the
/// senders waiting in [`MessageSink::wait_room`].
#[derive(Debug)]
pub struct MessageReceiver {
    rx: mpsc::UnboundedReceiver<Message>,
    backlog: Arc<Backlog>,
}

impl MessageReceiver {
    /// The next message; `None` once every sink is dropped.
    pub async fn recv(&mut self) -> Option<Message> {
        let message = self.rx.recv().await;
        self.took(message.is_some());
        message
    }

    /// The next message if one is queued.
    ///
    /// # Errors
    /// As [`mpsc::UnboundedReceiver::try_recv`]: empty, or every sink dropped.
    pub fn try_recv(&mut self) -> Result<Message, mpsc::error::TryRecvError> {
        let message = self.rx.try_recv();
        self.took(message.is_ok());
        message
    }

    fn took(&self, one: bool) {
        if one {
            self.backlog.queued.fetch_sub(1, Ordering::SeqCst);
            self.backlog.taken.notify_waiters();
        }
    }
}

/// The most bytes of queued messages [`spawn_writer`] gathers into one write: 64 KiB.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// Spawns the task that owns `writer` and writes every message sent through the returned sink
/// as one line, the messages queued together in one write (at most [`WRITE_BATCH_BYTES`]
/// gathered), flushing when the queue is empty. The task ends with `Ok` when every sink is
/// dropped, or with the first write error (the peer went away); later sends return `false`.
/// Must be called inside a tokio runtime.
pub fn spawn_writer<W>(
    writer: W,
    style: WireStyle,
) -> (MessageSink, JoinHandle<std::io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sink, mut rx) = MessageSink::channel();
    let handle = tokio::spawn(async move {
        let mut writer = writer;
        let mut lines = Vec::new();
        while let Some(message) = rx.recv().await {
            // Every message already queued goes out in one write (a call's last
            // notification and its answer: one wake-up of the peer, not two), up to
            // WRITE_BATCH_BYTES at a time.
            let mut next = Some(message);
            while let Some(message) = next {
                serde_json::to_writer(&mut lines, &message.to_value(style.with_version))
                    .map_err(std::io::Error::other)?;
                lines.push(b'\n');
                next = if lines.len() < WRITE_BATCH_BYTES {
                    rx.try_recv().ok()
                } else {
                    None
                };
                if next.is_none() {
                    writer.write_all(&lines).await?;
                    lines.clear();
                }
            }
            writer.flush().await?;
        }
        writer.flush().await
    });
    (sink, handle)
}

#[cfg(test)]
#[path = "framing_tests.rs"]
mod tests;
