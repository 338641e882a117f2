use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::RequestId;

async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
    let mut reader = LineReader::new(input, max);
    let mut out = Vec::new();
    while let Some(frame) = reader.next_frame().await.unwrap() {
        out.push(frame);
    }
    out
}

#[tokio::test]
async fn splits_lines_and_skips_blank_ones() {
    assert_eq!(
        frames(b"a\n\n  \r\nbc\r\nlast", 10).await,
        vec![
            Frame::Line(b"a".to_vec()),
            Frame::Line(b"bc".to_vec()),
            Frame::Line(b"last".to_vec())
        ]
    );
}

#[tokio::test]
async fn discards_an_over_long_line_and_keeps_reading() {
    assert_eq!(
        frames(b"12345\n123456789012\nok\n1234567890123", 10).await,
        vec![
            Frame::Line(b"12345".to_vec()),
            Frame::TooLong { len: 12 },
            Frame::Line(b"ok".to_vec()),
            Frame::TooLong { len: 13 },
        ]
    );
}

/// A 100 MiB line streamed through a pipe is counted, not buffered: the reader's buffer never
/// grows past the cap, and the next line is read normally.
#[tokio::test]
async fn streams_a_huge_line_without_buffering_it() {
    let (mut client, server) = tokio::io::duplex(1 << 16);
    let writer = tokio::spawn(async move {
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            client.write_all(&chunk).await.unwrap();
        }
        client.write_all(b"\n{\"id\":1}\n").await.unwrap();
    });
    let mut reader = LineReader::new(server, 1024);
    assert_eq!(
        reader.next_frame().await.unwrap(),
        Some(Frame::TooLong { len: 100 << 20 })
    );
    assert!(reader.buf.capacity() <= 1024 + (64 << 10));
    assert_eq!(
        reader.next_frame().await.unwrap(),
        Some(Frame::Line(b"{\"id\":1}".to_vec()))
    );
    assert_eq!(reader.next_frame().await.unwrap(), None);
    writer.await.unwrap();
}

#[tokio::test]
async fn writer_writes_one_line_per_message_in_order() {
    let (client, mut server) = tokio::io::duplex(1 << 16);
    let (sink, task) = spawn_writer(
        client,
        WireStyle {
            with_version: false,
        },
    );
    for i in 0..3 {
        assert!(sink.send(Message::notification("n", Some(json!({"i": i})))));
    }
    sink.send(Message::response(RequestId::Integer(5), json!({})));
    drop(sink);
    task.await.unwrap().unwrap();
    let mut text = String::new();
    server.read_to_string(&mut text).await.unwrap();
    assert_eq!(
        text,
        "{\"method\":\"n\",\"params\":{\"i\":0}}\n{\"method\":\"n\",\"params\":{\"i\":1}}\n\
         {\"method\":\"n\",\"params\":{\"i\":2}}\n{\"id\":5,\"result\":{}}\n"
    );
}

#[tokio::test]
async fn writer_stops_when_the_peer_is_gone() {
    let (client, server) = tokio::io::duplex(64);
    drop(server);
    let (sink, task) = spawn_writer(client, WireStyle { with_version: true });
    sink.send(Message::notification("n", None));
    assert!(task.await.unwrap().is_err());
    assert!(!sink.send(Message::notification("n", None)));
    assert!(sink.is_closed());
}

/// An `AsyncWrite` that keeps each `write` call's bytes apart.
#[derive(Default)]
struct Writes(std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

impl tokio::io::AsyncWrite for Writes {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0.lock().unwrap().push(buf.to_vec());
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn messages_queued_together_go_out_in_one_write_of_bounded_size() {
    let writes = Writes::default();
    let seen = std::sync::Arc::clone(&writes.0);
    let style = WireStyle {
        with_version: false,
    };
    let (sink, task) = spawn_writer(writes, style);
    // Queued before the writer task first runs (this test's runtime has one thread).
    sink.send(Message::notification("item/completed", None));
    sink.send(Message::response(RequestId::Integer(5), json!({})));
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    assert_eq!(
        seen.lock().unwrap().clone(),
        vec![b"{\"method\":\"item/completed\"}\n{\"id\":5,\"result\":{}}\n".to_vec()]
    );
    // 100 messages of 2 KiB: gathered into writes of at most 64 KiB plus one message,
    // every line whole.
    seen.lock().unwrap().clear();
    let big = "x".repeat(2048);
    for i in 0..100 {
        sink.send(Message::notification(
            "n",
            Some(json!({"i": i, "big": big})),
        ));
    }
    drop(sink);
    task.await.unwrap().unwrap();
    let writes = seen.lock().unwrap().clone();
    assert!(writes.len() >= 3, "{} writes", writes.len());
    for write in &writes {
        assert!(write.len() <= WRITE_BATCH_BYTES + 2200, "{}", write.len());
        assert!(write.ends_with(b"\n"));
    }
    let lines: Vec<&[u8]> = writes
        .iter()
        .flat_map(|w| w.split(|b| *b == b'\n').filter(|l| !l.is_empty()))
        .collect();
    assert_eq!(lines.len(), 100);
}
