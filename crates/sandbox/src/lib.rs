//! Airlock's enforcement layer (spec `05-sandbox.md`): turns a `SandboxAttempt`'s
//! effective permission profile into a confined process launch.
//!
//! Owns: [`SandboxType`] and its selection, the `SandboxManager` transform into a
//! platform argv (Linux: the `airlock linux-sandbox` helper, which builds the
//! bubblewrap command; macOS: a generated Seatbelt policy for `sandbox-exec`; Windows:
//! the level model only), and denial detection.
//!
//! Must not: decide whether to ask anyone (approval layer), evaluate exec policy, or
//! widen a profile. A transform either produces a launch that enforces the whole
//! effective profile or fails with a reason — never a silent fallback to running
//! unconfined.

mod denial;
#[cfg(target_os = "linux")]
mod direct;
mod env_policy;
mod manager;
mod sandbox_config;
mod sandbox_type;
mod seatbelt;
mod windows;

#[cfg(target_os = "linux")]
pub use airlock_linux_sandbox::args_pipe::{ArgsPipe, NotSent};
#[cfg(target_os = "linux")]
pub use airlock_linux_sandbox::placeholders::PlaceholderGuard;
#[cfg(target_os = "linux")]
pub use airlock_linux_sandbox::process_kill;
#[cfg(target_os = "linux")]
pub use airlock_linux_sandbox::status::{LaunchReport, StatusPipe};
#[cfg(target_os = "linux")]
pub use airlock_linux_sandbox::{
    DirectBase, DirectLaunch, LaunchCache, inherit_only_in_child, keep_only_in_child,
};
pub use denial::{ExecOutput, is_likely_sandbox_denied};
#[cfg(target_os = "linux")]
pub use direct::{DirectBwrap, DirectTransformError};
pub use env_policy::{
    CORE_VARIABLES, DEFAULT_EXCLUDES, EnvPolicyError, Inherit, ShellEnvironmentPolicy,
    wildcard_match,
};
pub use manager::{
    SandboxExecRequest, SandboxManager, SandboxTransformError, SandboxTransformRequest,
};
pub use sandbox_config::{SandboxConfigError, bwrap_path_from_config};
pub use sandbox_type::{
    SandboxType, SandboxablePreference, get_platform_sandbox, platform_sandbox_for,
};
pub use seatbelt::{
    ManagedProxy, ProxyEndpoints, SANDBOX_EXEC_PATH, SeatbeltCommand, SeatbeltError,
    SeatbeltOptions, UnixSocketAccess, create_seatbelt_command_args, seatbelt_env,
};
pub use windows::{
    WindowsSandboxError, WindowsSandboxLevel, create_windows_sandbox_command,
    create_windows_sandbox_command_for,
};
