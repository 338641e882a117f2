//! Airlock's managed network proxy (spec 12 §The proxy, §Decision order).
//!
//! Owns: the per-request decision over a profile's [`ManagedNetwork`] (deny, local and
//! metadata addresses, allow; resolve once and dial only checked addresses), and the
//! HTTP/1.1 forward, `CONNECT` and SOCKS5 `CONNECT` front ends, served on **one Unix
//! socket** (no TCP listener on the host). Must not: decide which commands get the proxy
//! (the sandbox launcher does), enforce that a command cannot bypass it (the Linux
//! sandbox's network namespace does), or terminate TLS (tunnels are opaque bytes).
//!
//! Current limitations: approvals need a [`approval::NetworkDecider`] (`airlock exec`
//! gives its session's reviewer chain; `airlock sandbox` has none, so a `not_allowed` miss
//! is refused at once); HTTP forwarding handles one request per client connection and
//! passes response headers through as the server sent them; SOCKS5 offers only "no
//! authentication" and no UDP; no TLS interception, so `limited` mode refuses CONNECT.
//!
//! [`ManagedNetwork`]: airlock_permissions::network::ManagedNetwork

pub mod address;
pub mod approval;
mod http;
pub mod policy;
mod server;
mod socks5;
mod splice;

pub use policy::BlockReason;
pub use policy::NetworkPolicy;
pub use policy::Protocol;
pub use policy::Refusal;
pub use server::BlockedRequest;
pub use server::ProxyHandle;
pub use server::start;
