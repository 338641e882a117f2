//! From a `FileSystemSandboxContext` to a launch (spec 09 §FileSystemSandboxContext): the
//! symbolic profile is materialised against the context's workspace roots (or its cwd) in this
//! host's filesystem, then transformed by the server's own `SandboxManager`.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use airlock_core::remote::protocol::FileSystemSandboxContext;
use airlock_jsonrpc::ErrorObject;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_protocol::PermissionProfile;
use airlock_sandbox::SandboxExecRequest;
use airlock_sandbox::SandboxTransformRequest;
use airlock_sandbox::SandboxType;
use airlock_sandbox::SandboxablePreference;
use airlock_sandbox::get_platform_sandbox;

use crate::server::ServerOptions;

/// The context resolved on this host: the materialised profile and the directory symbolic
/// entries resolve against.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub permissions: PermissionProfile,
    pub policy_cwd: PathBuf,
    pub sandbox: SandboxType,
    pub use_legacy_landlock: bool,
    pub windows_level: airlock_sandbox::WindowsSandboxLevel,
}

/// Resolves `context` for a command or file operation whose working directory is `cwd`.
///
/// # Errors
/// -32600 when the profile asks for confinement this host cannot give (never run unconfined).
pub(crate) fn resolve(
    options: &ServerOptions,
    context: &FileSystemSandboxContext,
    cwd: &Path,
) -> Result<Resolved, ErrorObject> {
    let policy_cwd = context
        .cwd
        .as_ref()
        .map_or_else(|| cwd.to_path_buf(), |p| p.0.clone());
    let roots: Vec<PathBuf> = match &context.workspace_roots {
        Some(roots) if !roots.is_empty() => roots.iter().map(|r| r.0.clone()).collect(),
        _ => vec![policy_cwd.clone()],
    };
    let permissions = materialize_project_roots_with_workspace_roots(&context.permissions, &roots);
    let wanted = options
        .manager
        .should_sandbox(&permissions, SandboxablePreference::Auto, false);
    let sandbox = if wanted {
        get_platform_sandbox(options.manager.windows_sandbox_enabled).ok_or_else(|| {
            ErrorObject::invalid_request(
                "sandbox: the profile needs a platform sandbox and this executor has none; refusing to run unconfined",
            )
        })?
    } else {
        SandboxType::None
    };
    Ok(Resolved {
        permissions,
        policy_cwd,
        sandbox,
        use_legacy_landlock: context.use_legacy_landlock,
        windows_level: context.windows_sandbox_level,
    })
}

/// The launch of `argv` in `cwd`, confined as `resolved` says (`None` → unconfined).
///
/// # Errors
/// -32600 with the transform's reason (bad cwd, missing helper or bubblewrap, ...).
pub(crate) fn launch(
    options: &ServerOptions,
    argv: Vec<String>,
    cwd: &Path,
    env: BTreeMap<String, String>,
    resolved: Option<&Resolved>,
) -> Result<SandboxExecRequest, ErrorObject> {
    let request = SandboxTransformRequest {
        command: argv,
        cwd: cwd.to_path_buf(),
        env,
        permissions: resolved.map_or(PermissionProfile::Disabled, |r| r.permissions.clone()),
        additional_permissions: None,
        sandbox: resolved.map_or(SandboxType::None, |r| r.sandbox),
        sandbox_policy_cwd: resolved.map_or_else(|| cwd.to_path_buf(), |r| r.policy_cwd.clone()),
        linux_helper: options.linux_helper.clone(),
        use_legacy_landlock: resolved.is_some_and(|r| r.use_legacy_landlock),
        windows_level: resolved.map_or_else(Default::default, |r| r.windows_level),
        enforce_managed_network: false,
        // A context carries no host rules (the client refuses a managed network for a remote
        // environment), so the profile's network is on or off as given.
        managed_network: None,
        network_proxy_dir: None,
    };
    options
        .manager
        .transform(request)
        .map_err(|e| ErrorObject::invalid_request(format!("cannot confine the command: {e}")))
}
