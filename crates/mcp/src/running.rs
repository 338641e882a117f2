//! What the connection knows about each running call besides its task: the model's
//! `justification` (shown in the approval form, as the terminal prompt shows it) and whether a
//! person is being asked about it right now, so `timeout_ms` counts the command's time, not
//! the time a person takes to answer.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use tokio::sync::watch;

/// One running call.
#[derive(Debug)]
pub struct CallInfo {
    /// The `justification` argument, if any.
    pub justification: Option<String>,
    /// `true` while an elicitation about this call waits for the client.
    pub asking: watch::Sender<bool>,
}

/// The running calls, by call id (shared by the connection and the approval asker).
pub type RunningCalls = Rc<RefCell<HashMap<String, CallInfo>>>;

/// Marks a call as being asked about until dropped.
pub struct Asking(Option<watch::Sender<bool>>);

impl Asking {
    /// Starts asking about `call_id` (nothing to mark when the call is unknown).
    #[must_use]
    pub fn start(calls: &RunningCalls, call_id: &str) -> Self {
        let sender = calls.borrow().get(call_id).map(|call| call.asking.clone());
        if let Some(sender) = &sender {
            sender.send_replace(true);
        }
        Self(sender)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        if let Some(sender) = self.0.take() {
            sender.send_replace(false);
        }
    }
}

/// Runs `call` for at most `budget` of time during which nobody was being asked about it;
/// `None` when the budget ran out (the call is dropped, which kills its process).
pub async fn with_budget<F: Future>(
    call: F,
    budget: Duration,
    mut asking: watch::Receiver<bool>,
) -> Option<F::Output> {
    tokio::pin!(call);
    let mut remaining = budget;
    let mut watching = true;
    loop {
        if watching && *asking.borrow_and_update() {
            tokio::select! {
                output = &mut call => return Some(output),
                changed = asking.changed() => watching = changed.is_ok(),
            }
            continue;
        }
        let started = tokio::time::Instant::now();
        tokio::select! {
            output = &mut call => return Some(output),
            () = tokio::time::sleep(remaining) => return None,
            changed = asking.changed(), if watching => {
                watching = changed.is_ok();
                remaining = remaining.saturating_sub(started.elapsed());
            }
        }
    }
}
