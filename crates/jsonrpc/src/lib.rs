//! JSON-RPC 2.0 plumbing shared by Airlock's servers (`airlock serve`, spec `10-interfaces.md`
//! §JSON-RPC app server; `airlock mcp`, spec `13-adapters.md`).
//!
//! Owns:
//! - the message shapes ([`Message`], [`Request`], [`Notification`], [`Response`],
//!   [`ErrorResponse`], [`ErrorObject`], [`RequestId`]) and the standard error codes
//!   ([`PARSE_ERROR`], [`INVALID_REQUEST`], [`METHOD_NOT_FOUND`], [`INVALID_PARAMS`],
//!   [`INTERNAL_ERROR`], [`SERVER_OVERLOADED`]);
//! - classifying one incoming line ([`Message::from_line`]) with the error to answer when it is
//!   not a usable message, and typed params ([`parse_params`]) whose errors name the field;
//! - newline-delimited framing: [`LineReader`] (a line longer than its cap is discarded while it
//!   streams in, never buffered whole, and reported as [`Frame::TooLong`]) and [`spawn_writer`]
//!   (one task owns the writer; any task sends through a cloneable [`MessageSink`]);
//! - the table of server-to-client requests ([`PendingRequests`]): id allocation, matching the
//!   client's answer, and failing every waiter when the connection closes.
//!
//! Must not: know any method name or params shape of a particular protocol, decide policy, or
//! spawn processes. Whether `"jsonrpc":"2.0"` is written is the caller's choice ([`WireStyle`]):
//! Codex's app-server omits it, MCP requires it; on input it is optional either way.

mod duplicates;
mod framing;
mod message;
mod params;
mod pending;

pub use framing::{
    DEFAULT_MAX_LINE_BYTES, Frame, LineReader, MessageReceiver, MessageSink, WireStyle,
    spawn_writer,
};
pub use message::{
    ErrorObject, ErrorResponse, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    Message, Notification, PARSE_ERROR, Request, RequestId, Response, SERVER_OVERLOADED,
};
pub use params::parse_params;
pub use pending::{ClientReply, Disconnected, PendingReply, PendingRequests};
