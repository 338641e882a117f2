//! `airlock mcp`: Airlock as a Model Context Protocol server over stdio (spec 13 §`airlock
//! mcp`; reference `adapters.md` §C3).
//!
//! Owns:
//! - the MCP lifecycle (`initialize` / `notifications/initialized`, protocol versions
//!   2025-06-18 and 2025-11-25, capability `tools`) and the dispatch of one connection
//!   ([`serve`]);
//! - the two tools, `shell` and `apply_patch`, with their input and output schemas and
//!   annotations ([`tools`]), and their results (`content`, `structuredContent`, `isError`;
//!   a refusal is a result, never a JSON-RPC error) ([`result`]);
//! - approvals as `elicitation/create` forms with a `decision` enum when the client declared
//!   `capabilities.elicitation` ([`elicit`]); otherwise the session has no user channel and
//!   the configured hooks / automatic reviewer decide, or the call is refused (fail closed);
//! - progress notifications for calls that sent a `progressToken`, and
//!   `notifications/cancelled`, which drops the call (its process is killed).
//!
//! Must not: compute requirements, choose sandboxes or run processes itself (crate `core`'s
//! [`airlock_core::Session`] does, as for `airlock exec`), or frame JSON-RPC itself (crate
//! `airlock-jsonrpc`). One [`airlock_core::Session`] per connection; it lives as long as the
//! connection, and so does its approval cache.

#![deny(missing_docs)]

mod connection;
pub mod elicit;
mod lifecycle;
mod progress;
pub mod result;
mod running;
pub mod tools;

pub use connection::{SessionParts, serve};
pub use lifecycle::SUPPORTED_PROTOCOL_VERSIONS;
