//! `airlock serve`: the JSON-RPC app server for harnesses in any language (spec
//! `10-interfaces.md` §JSON-RPC app server; shapes of Codex's app-server protocol v2).
//!
//! Owns:
//! - one connection's life ([`serve_connection`]): the `initialize` handshake, dispatch of every
//!   request (many in flight; `-32001` past [`MAX_IN_FLIGHT`]), and the teardown when the
//!   client goes away (every pending approval withdrawn, every running command killed);
//! - threads (one [`airlock_core::Session`] each: approval cache, exec policy, audit session
//!   id) and turns (interrupting a turn aborts its pending approvals and kills its commands);
//! - the bridge from the approval layer's user prompts to server-to-client requests
//!   (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval`), mapping v2
//!   decisions back and failing closed on unusable answers;
//! - the transports: stdio ([`run_stdio`]) and a Unix socket with mode 0600 ([`run_unix`]).
//!
//! Current limitations (each refused or reported, never silently widened):
//! - `tool/shell` refuses `tty: true` and `additionalPermissions` with -32602;
//! - every launch still goes through the `airlock linux-sandbox` helper process, which
//!   resolves the profile, seccomp programs and bubblewrap argv again (issue 13 item 3, the
//!   per-thread cache, is not built);
//! - one active turn per thread (a new `turn/start` ends the previous turn, killing its calls);
//! - `thread/start` refuses unknown fields (Codex's `model`, `sandbox`...) rather than ignore
//!   a setting the client believes is in force.
//!
//! Must not: decide policy or run processes itself (the core session does), or read the
//! configuration (the [`Backend`] given by the CLI builds sessions as `airlock exec` does).

mod backend;
mod bridge;
mod connection;
mod decisions;
mod patch_call;
mod shell_call;
mod summary;
mod threads;
mod transport;

pub use backend::{Backend, BoxFuture, ThreadContext, ThreadSetup};
pub use connection::{MAX_IN_FLIGHT, serve_connection};
pub use transport::{run_stdio, run_unix};
