//! macOS Seatbelt: the SBPL policy text and the `sandbox-exec` argv for an effective profile
//! (spec 05 §macOS, reference `seatbelt.md`).
//!
//! Pure text generation, compiled and tested on every host; only the launch needs macOS. The
//! policy denies everything by default, then allows, in order: the base process/system
//! operations, reads, writes (writable roots minus protected metadata and narrower entries,
//! with `require-not` carve-outs), deny-read globs as regexes, the network, the `:minimal`
//! platform defaults, and finally re-denies Docker Desktop's escape routes. Every path comes
//! from a `-D<KEY>=<path>` parameter; only glob regexes are spliced into the text.
//!
//! A profile's managed network (spec 12) always gives the proxy-only section: the proxy's
//! loopback ports (from [`ProxyEndpoints`]), the `unix_sockets` grants and denials, and
//! with `allow_local_binding` local binds and loopback — never `(allow network-outbound)`.
//!
//! Current limitations: the text cannot be checked by the real `sandbox-exec` here; it is
//! pinned by golden files and by a structural check (balanced parentheses, every
//! `(param "X")` defined by one `-DX=`, no `-D` left unused). No macOS launcher starts
//! proxy endpoints yet, so a macOS command with a managed network gets no IP network at
//! all (fail closed), only its granted sockets. A `unix_sockets` entry is a subtree
//! (`subpath`, as Codex writes it), where Linux takes only the socket itself; the Docker
//! Desktop denials at the end win over a grant of the Docker socket.

mod access;
mod command;
mod error;
mod glob;
mod host;
mod managed;
mod network;
mod options;
mod params;
mod paths;
mod policy;
mod proxy;
mod roots;

pub use command::SANDBOX_EXEC_PATH;
pub use command::SeatbeltCommand;
pub use command::create_seatbelt_command_args;
pub use command::seatbelt_env;
pub use error::SeatbeltError;
pub use managed::ProxyEndpoints;
pub use options::ManagedProxy;
pub use options::SeatbeltOptions;
pub use options::UnixSocketAccess;
