//! Airlock's managed network proxy (spec 12 §The proxy, §Decision order).
//!
//! Owns: the per-request decision over a profile's [`ManagedNetwork`] (deny, local and
//! metadata addresses, allow; resolve once and dial only checked addresses), and the
//! HTTP/1.1 forward, `CONNECT` and SOCKS5 `CONNECT` front ends, served on **one Unix
//! socket** (no TCP listener on the host). Must not: decide which commands get the proxy
//! (the sandbox launcher does), enforce that a command cannot bypass it (the Linux
//! sandbox's network namespace does), or terminate TLS (tunnels are opaque bytes).
//!
//! Current limitations: approvals are a [`approval::NetworkDecider`] hook that nothing in
//! the launchers wires to a session's reviewer chain yet (the proxy lives in the helper
//! process, so a `not_allowed` miss is refused at once there); HTTP forwarding handles one request per client connection; SOCKS5 offers only
//! "no authentication"; response headers are passed through as the server sent them.
//!
//! [`ManagedNetwork`]: airlock_permissions::network::ManagedNetwork

pub mod address;
pub mod approval;
mod http;
pub mod policy;
mod server;
mod socks5;

pub use policy::BlockReason;
pub use policy::NetworkPolicy;
pub use policy::Protocol;
pub use policy::Refusal;
pub use server::BlockedRequest;
pub use server::ProxyHandle;
pub use server::start;
