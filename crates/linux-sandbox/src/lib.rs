//! Airlock's Linux sandbox helper (spec `05-sandbox.md` §Linux).
//!
//! Owns the mechanism: resolving an effective permission profile against the host,
//! building the bubblewrap command line, the seccomp filter, legacy Landlock, and the
//! helper entry point [`run_helper`] behind `airlock linux-sandbox`.
//!
//! Must not: choose profiles, ask for approval, or run anything unconfined when the
//! profile asks for confinement — every failure is an error before the command runs.
//!
//! Current limitations: files created after launch that match a deny glob are not
//! masked (bubblewrap can only mask what exists); symlinked directories are not
//! followed when expanding deny globs; legacy Landlock refuses profiles it cannot
//! express (see [`landlock_mode`]).

pub mod args;
pub mod bwrap_path;
pub mod globs;
pub mod mounts;
#[cfg(target_os = "linux")]
pub mod probe;
pub mod resolve;

#[cfg(target_os = "linux")]
mod fds;
#[cfg(target_os = "linux")]
pub mod landlock_mode;
#[cfg(target_os = "linux")]
pub mod launch;
#[cfg(target_os = "linux")]
mod placeholders;
#[cfg(target_os = "linux")]
pub mod seccomp;

pub use args::{HELPER_SUBCOMMAND, HelperArgs};
#[cfg(target_os = "linux")]
pub use launch::{LaunchError, describe_launch, run_helper, run_helper_with_env, sandbox_env};
