//! The Linux transform for a long-running launcher: bubblewrap run by the launcher itself,
//! without the `airlock linux-sandbox` helper process, from a per-thread
//! [`LaunchCache`] (issue 13 item 3; see `airlock_linux_sandbox::direct` for when this
//! applies and what is cached).

use std::ffi::OsString;

use airlock_linux_sandbox::launch::LaunchError;
use airlock_linux_sandbox::{DirectBase, DirectLaunch, HelperArgs, LaunchCache};
use airlock_permissions::effective_permission_profile;

use crate::manager::{helper_args, is_wsl1};
use crate::{
    SandboxExecRequest, SandboxManager, SandboxTransformError, SandboxTransformRequest, SandboxType,
};

/// A launch of bubblewrap itself, before its mount plan: what to spawn and how to plan it.
/// The launcher may start bubblewrap as `bwrap --args FD -- COMMAND…` first and send the
/// options of [`DirectBwrap::plan`] through an `airlock_linux_sandbox::args_pipe::ArgsPipe`
/// afterwards.
#[derive(Debug)]
pub struct DirectBwrap {
    /// Working directory, environment (the request's, plus the sandbox's variables),
    /// mechanism and effective profile; `argv` is bubblewrap, `--` and the command, for
    /// display (the options depend on the plan; spawn [`DirectBwrap::program`], which
    /// keeps a non-UTF-8 path intact).
    pub request: SandboxExecRequest,
    base: DirectBase,
    args: HelperArgs,
}

impl DirectBwrap {
    /// The bubblewrap executable.
    #[must_use]
    pub fn program(&self) -> &std::path::Path {
        self.base.bwrap()
    }

    /// The command bubblewrap runs (what follows its `--`).
    #[must_use]
    pub fn command(&self) -> &[OsString] {
        &self.args.command
    }

    /// The profile's cached part: seccomp programs, sandbox variables.
    #[must_use]
    pub fn base(&self) -> &DirectBase {
        &self.base
    }

    /// Works out the mount plan, as the helper would for this launch (see
    /// `airlock_linux_sandbox::DirectBase::plan` for `seccomp_fds`). The plan's argument
    /// list ends in `--` and [`DirectBwrap::command`].
    ///
    /// # Errors
    /// The [`LaunchError`] the helper would report as a set-up failure; nothing has run.
    pub fn plan(&self, seccomp_fds: Option<&[i32]>) -> Result<DirectLaunch, LaunchError> {
        self.base.plan(&self.args, seccomp_fds)
    }
}

/// Why a direct launch could not be prepared. Nothing was started.
#[derive(Debug, thiserror::Error)]
pub enum DirectTransformError {
    /// As [`SandboxManager::transform`] fails (bubblewrap missing or untrusted included).
    #[error(transparent)]
    Transform(#[from] SandboxTransformError),
    /// What the helper would have reported as a set-up failure (a path that cannot be
    /// resolved, seccomp, placeholders).
    #[error(transparent)]
    Launch(LaunchError),
}

impl SandboxManager {
    /// [`SandboxManager::transform`] for a `LinuxSeccomp` request, with bubblewrap run by
    /// the caller instead of the helper: `None` when the request needs the helper (not
    /// `LinuxSeccomp`, a seccomp-only or legacy Landlock shape, a managed network); then
    /// call [`SandboxManager::transform`]. `status_fd` becomes bubblewrap's
    /// `--json-status-fd` (see `airlock_linux_sandbox::status`).
    ///
    /// # Errors
    /// [`DirectTransformError`]; never a silent fallback to an unconfined launch.
    pub fn transform_direct(
        &self,
        request: &SandboxTransformRequest,
        cache: &LaunchCache,
        status_fd: Option<i32>,
    ) -> Result<Option<DirectBwrap>, DirectTransformError> {
        if request.sandbox != SandboxType::LinuxSeccomp {
            return Ok(None);
        }
        if request.command.is_empty() {
            return Err(SandboxTransformError::EmptyCommand.into());
        }
        if !request.cwd.is_dir() {
            return Err(SandboxTransformError::BadCwd(request.cwd.clone()).into());
        }
        if is_wsl1() {
            return Err(SandboxTransformError::Wsl1.into());
        }
        let effective = effective_permission_profile(
            &request.permissions,
            request.additional_permissions.as_ref(),
        );
        let mut args = helper_args(request, &effective, self.bwrap_path.as_deref());
        args.status_fd = status_fd;
        let base = match cache.base(&args) {
            Ok(Some(base)) => base,
            Ok(None) => return Ok(None),
            Err(LaunchError::Bwrap(error)) => {
                return Err(SandboxTransformError::Bubblewrap(error).into());
            }
            Err(error) => return Err(DirectTransformError::Launch(error)),
        };
        let mut env = request.env.clone();
        if !effective.network().is_enabled() {
            env.insert("CODEX_SANDBOX_NETWORK_DISABLED".into(), "1".into());
        }
        env.extend(
            base.env()
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned())),
        );
        let argv = [base.bwrap().as_os_str(), "--".as_ref()]
            .into_iter()
            .chain(args.command.iter().map(OsString::as_os_str))
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        Ok(Some(DirectBwrap {
            request: SandboxExecRequest {
                argv,
                cwd: request.cwd.clone(),
                env,
                arg0: None,
                sandbox: SandboxType::LinuxSeccomp,
                effective_profile: effective,
                reports_setup_status: false,
            },
            base,
            args,
        }))
    }
}
