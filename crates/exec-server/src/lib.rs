//! Airlock's exec-server (spec `09-exec-server.md`): a JSON-RPC server that runs commands and
//! file operations for a remote environment and confines them with **its own**
//! [`SandboxManager`](airlock_sandbox::SandboxManager), from the `FileSystemSandboxContext`
//! the client sends (materialised against this host's filesystem).
//!
//! Owns: the `--listen` forms (`stdio`, `ws://ADDR:PORT`, `unix:PATH`) and the bearer-token
//! check of WebSocket listeners ([`listen`]), the per-connection dispatcher, managed processes
//! with `seq`-ordered output (pipes, or a pseudo-terminal for `tty: true`: stream `pty`,
//! written by `process/write`; capability `pty`), and sandboxed `fs/*` operations.
//!
//! Must not: decide whether a command may run (approval and exec policy stay with the client),
//! widen a profile it was sent, or run a command unconfined when a sandbox was asked for and
//! cannot be applied. It schedules no hosts (spec 09 §Scale-out).
//!
//! Not supported yet (refused with a clear error, never silently ignored): `tty: true` off
//! Unix (-32602), resizing a terminal (it stays 24×80), `envPolicy` and other unknown params (-32602, `deny_unknown_fields`),
//! `resumeSessionId`, `http/request`, streaming file methods and TLS (`wss://`; use a private
//! network or a tunnel). There is no cap on processes per connection yet.

mod connection;
mod fs;
pub mod listen;
mod process;
#[cfg(unix)]
mod pty;
mod sandbox;
mod server;

pub use listen::{Listen, ListenError, TokenDigest};
pub use server::{ServerOptions, serve};
