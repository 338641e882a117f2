use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[tokio::test]
async fn ids_count_up_and_answers_reach_their_waiter() {
    let table = PendingRequests::new();
    let (sink, mut rx) = MessageSink::channel();
    let a = table
        .send_request(&sink, "approve", json!({"n": 0}))
        .unwrap();
    let b = table
        .send_request(&sink, "approve", json!({"n": 1}))
        .unwrap();
    assert_eq!(
        (a.id().clone(), b.id().clone()),
        (RequestId::Integer(0), RequestId::Integer(1))
    );
    assert_eq!(
        rx.recv().await,
        Some(Message::request(
            RequestId::Integer(0),
            "approve",
            Some(json!({"n": 0}))
        ))
    );
    assert_eq!(table.len(), 2);
    // Answered out of order.
    assert!(table.resolve_message(&Message::error(
        Some(RequestId::Integer(1)),
        ErrorObject::new(-1, "no")
    )));
    assert!(table.resolve(&RequestId::Integer(0), ClientReply::Result(json!("ok"))));
    assert_eq!(
        b.wait().await,
        Ok(ClientReply::Error(ErrorObject::new(-1, "no")))
    );
    assert_eq!(a.wait().await, Ok(ClientReply::Result(json!("ok"))));
    assert!(table.is_empty());
    // A second answer for the same id, or an unknown id, is ignored.
    assert!(!table.resolve(&RequestId::Integer(0), ClientReply::Result(json!(1))));
    assert!(!table.resolve(
        &RequestId::String("zz".into()),
        ClientReply::Result(json!(1))
    ));
}

#[tokio::test]
async fn close_fails_every_waiter_and_later_registrations() {
    let table = PendingRequests::new();
    let waiters: Vec<_> = (0..5).map(|_| table.register().unwrap()).collect();
    let tasks: Vec<_> = waiters
        .into_iter()
        .map(|w| tokio::spawn(w.wait()))
        .collect();
    table.close();
    for t in tasks {
        assert_eq!(t.await.unwrap(), Err(Disconnected));
    }
    assert!(table.is_empty());
    assert!(table.register().is_err());
}

#[tokio::test]
async fn cancel_and_drop_withdraw_one_request() {
    let table = PendingRequests::new();
    let a = table.register().unwrap();
    let b = table.register().unwrap();
    assert!(table.cancel(a.id()));
    assert_eq!(a.wait().await, Err(Disconnected));
    drop(b);
    assert!(table.is_empty());
}

#[tokio::test]
async fn a_gone_writer_is_a_disconnect() {
    let table = PendingRequests::new();
    let (sink, rx) = MessageSink::channel();
    drop(rx);
    assert!(table.send_request(&sink, "m", json!({})).is_err());
    assert!(table.is_empty());
}
