//! The wire types of `airlock serve` (spec `10-interfaces.md` §JSON-RPC app server), shaped
//! after Codex's app-server protocol v2 (reference `codex/app-server.md`) so a harness that
//! answers Codex approval requests reuses that code.
//!
//! Owns:
//! - params and results of every client request ([`client`]), the server-to-client approval
//!   requests and their v2 decisions ([`approvals`]), the notifications ([`notifications`]) and
//!   the items they carry ([`items`]); every field is camelCase on the wire except where Codex
//!   keeps snake_case (the payloads of `acceptWithExecpolicyAmendment` and
//!   `applyNetworkPolicyAmendment`);
//! - the method table ([`methods`]) and the JSON Schema (draft 2020-12) written by
//!   `airlock schema --out DIR` ([`schema`]).
//!
//! Must not: run anything, decide policy, or hold connection state (crate `app-server` does).

#![deny(missing_docs)]

pub mod approvals;
pub mod client;
pub mod items;
pub mod methods;
pub mod notifications;
pub mod schema;

pub use approvals::*;
pub use client::*;
pub use items::*;
pub use notifications::*;
