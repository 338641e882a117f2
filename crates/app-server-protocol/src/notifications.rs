//! Server-to-client notifications.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::client::Thread;
use crate::client::Turn;
use crate::items::ThreadItem;

/// `thread/started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartedNotification {
    /// The thread.
    pub thread: Thread,
}

/// `turn/started` and `turn/completed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnNotification {
    /// The thread.
    pub thread_id: String,
    /// The turn and its status.
    pub turn: Turn,
}

/// `item/started` and `item/completed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemNotification {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The item.
    pub item: ThreadItem,
}

/// Which output stream a delta is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// `item/commandExecution/outputDelta`: output as it arrives (UTF-8, lossy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionOutputDeltaNotification {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The call id.
    pub item_id: String,
    /// Which stream.
    pub stream: OutputStream,
    /// The bytes, as text.
    pub delta: String,
}

/// A server request id (an integer counting up from 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WireRequestId {
    /// Integer id.
    Integer(i64),
    /// String id.
    String(String),
}

/// `serverRequest/resolved`: a server request ended (answered, or withdrawn because its turn
/// ended or was interrupted); close its prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolvedNotification {
    /// The thread.
    pub thread_id: String,
    /// The id of the server request.
    pub request_id: WireRequestId,
}

/// `warning`: something went wrong, the work goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WarningNotification {
    /// The thread, when the warning belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// One line for people.
    pub message: String,
}
