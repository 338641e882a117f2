//! `notifications/progress` for a call that sent `_meta.progressToken`: one at the start
//! (progress 0, "started"), then one per second while the call is still running (approval
//! wait included), with the elapsed seconds as the increasing `progress` (no `total`: how
//! long a command runs is unknown).

use std::future::Future;
use std::time::Duration;

use airlock_jsonrpc::Message;
use airlock_jsonrpc::MessageSink;
use serde_json::Value;
use serde_json::json;

/// Runs `call`, reporting progress under `token` when there is one.
pub async fn with_progress<F: Future>(
    call: F,
    token: Option<Value>,
    sink: &MessageSink,
) -> F::Output {
    let Some(token) = token else {
        return call.await;
    };
    tokio::pin!(call);
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut elapsed: u64 = 0;
    loop {
        tokio::select! {
            output = &mut call => return output,
            _ = ticks.tick() => {
                let message = if elapsed == 0 {
                    "started".to_owned()
                } else {
                    format!("running for {elapsed} s")
                };
                let _ = sink.send(Message::notification(
                    "notifications/progress",
                    Some(json!({"progressToken": token, "progress": elapsed, "message": message})),
                ));
                elapsed += 1;
            }
        }
    }
}
