//! `SandboxAttempt`: the complete policy snapshot of one execution (spec README "The three
//! layers"; spec 07 step 5). Not a running process.

use std::path::PathBuf;

use airlock_protocol::PermissionProfile;
use airlock_sandbox::SandboxType;
use airlock_sandbox::WindowsSandboxLevel;
use serde::Serialize;

/// Which attempt of a tool call this is (spec 07: there is never a third).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptPhase {
    /// The first attempt (spec 07 step 5).
    First,
    /// The retry after a sandbox denial (spec 07 step 6).
    Retry,
}

/// One execution's policy (spec 07 step 5).
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxAttempt {
    /// First or retry.
    pub phase: AttemptPhase,
    /// The local wrapper chosen. `None` with `sandbox_requested = true` is legal (remote
    /// executor, host without a sandbox; spec README invariant 11).
    pub sandbox: SandboxType,
    /// Whether policy asked for confinement.
    pub sandbox_requested: bool,
    /// The profile materialised against the workspace roots (local enforcement).
    pub permissions: PermissionProfile,
    /// The symbolic profile an executor would resolve itself.
    pub exec_server_permissions: PermissionProfile,
    /// Route network only through the managed proxy.
    pub enforce_managed_network: bool,
    /// The managed network the launch runs behind (spec 12), if any.
    pub managed_network: Option<airlock_permissions::network::ManagedNetwork>,
    /// The socket directory of the session's running proxy, if any.
    pub network_proxy_dir: Option<PathBuf>,
    /// The directory symbolic entries resolve against (the environment's cwd).
    pub sandbox_policy_cwd: PathBuf,
    /// The environment's workspace roots.
    pub workspace_roots: Vec<PathBuf>,
    /// The executable providing `airlock linux-sandbox` (the `airlock` binary itself).
    pub linux_helper: Option<PathBuf>,
    /// Legacy Landlock instead of bubblewrap.
    pub use_legacy_landlock: bool,
    /// Windows sandbox level.
    pub windows_level: WindowsSandboxLevel,
}

impl SandboxAttempt {
    /// The request that confines `command` as this attempt says: its profile, wrapper, policy
    /// cwd, helper and network, with `additional_permissions` on top (an apply_patch call's
    /// extra writable directories). `cwd` is where the command starts; `env` its whole
    /// environment.
    #[must_use]
    pub fn transform_request(
        &self,
        command: Vec<String>,
        cwd: PathBuf,
        env: std::collections::BTreeMap<String, String>,
        additional_permissions: Option<airlock_protocol::AdditionalPermissionProfile>,
    ) -> airlock_sandbox::SandboxTransformRequest {
        airlock_sandbox::SandboxTransformRequest {
            command,
            cwd,
            env,
            permissions: self.permissions.clone(),
            additional_permissions,
            sandbox: self.sandbox,
            sandbox_policy_cwd: self.sandbox_policy_cwd.clone(),
            linux_helper: self.linux_helper.clone(),
            use_legacy_landlock: self.use_legacy_landlock,
            windows_level: self.windows_level,
            enforce_managed_network: self.enforce_managed_network,
            managed_network: self.managed_network.clone(),
            network_proxy_dir: self.network_proxy_dir.clone(),
        }
    }
}
