//! Remote environments (spec 09 §Client side): the exec-server wire shapes, the connection to
//! one exec-server, and running a shell attempt there with the executor's own sandbox.

mod client;
mod config;
pub mod protocol;
mod run;
mod subscription;

pub use client::{
    Connection, DEFAULT_REQUEST_TIMEOUT, Endpoint, ExecServerClient, RemoteEnvironment, RemoteError,
};
pub use config::{EnvironmentConfigError, remote_environment_from_config};
pub use run::{run_remote, sandbox_context};
pub use subscription::{MAX_QUEUED_OUTPUT, Subscription};
