//! `SandboxManager`: should a command be sandboxed, with which platform mechanism,
//! and the transform of a command into the launch that enforces its effective
//! profile (spec 05 §Types).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use airlock_linux_sandbox::HelperArgs;
use airlock_permissions::{
    FileSystemPolicyQueries, effective_permission_profile, file_system_sandbox_policy,
};
use airlock_protocol::{AdditionalPermissionProfile, FileSystemSandboxKind, PermissionProfile};

use crate::sandbox_type::{SandboxType, SandboxablePreference, get_platform_sandbox};
use crate::seatbelt::{SeatbeltError, SeatbeltOptions, create_seatbelt_command_args};
use crate::windows::{WindowsSandboxError, WindowsSandboxLevel, create_windows_sandbox_command};

/// Everything a transform needs.
#[derive(Debug, Clone)]
pub struct SandboxTransformRequest {
    /// The command (argv, program first).
    pub command: Vec<String>,
    /// Working directory of the command (absolute).
    pub cwd: PathBuf,
    /// Environment of the command (after the environment policy).
    pub env: BTreeMap<String, String>,
    /// The attempt's base profile, materialised against the workspace roots.
    pub permissions: PermissionProfile,
    /// Per-command additional permissions, merged in (tighten-only rules of spec 04).
    pub additional_permissions: Option<AdditionalPermissionProfile>,
    /// The chosen mechanism.
    pub sandbox: SandboxType,
    /// Directory symbolic entries resolve against.
    pub sandbox_policy_cwd: PathBuf,
    /// The `airlock` executable that provides `airlock linux-sandbox`.
    pub linux_helper: Option<PathBuf>,
    /// Legacy Landlock instead of bubblewrap.
    pub use_legacy_landlock: bool,
    /// Windows sandbox level (only used for `WindowsRestrictedToken`).
    pub windows_level: WindowsSandboxLevel,
    /// Route network only through the managed proxy (Seatbelt).
    pub enforce_managed_network: bool,
    /// The managed network (spec 12): on Linux the helper starts the proxy and runs the
    /// command in a network namespace behind it.
    pub managed_network: Option<airlock_permissions::network::ManagedNetwork>,
    /// The socket directory of the session's running proxy, if the launcher runs one.
    pub network_proxy_dir: Option<PathBuf>,
}

/// What to spawn. Keeps the effective profile even for [`SandboxType::None`].
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxExecRequest {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Environment (the request's plus the sandbox's own variables).
    pub env: BTreeMap<String, String>,
    /// `argv[0]` to present, when it differs from the program path.
    pub arg0: Option<String>,
    /// The mechanism in effect.
    pub sandbox: SandboxType,
    /// The profile the launch enforces (base + additional permissions).
    pub effective_profile: PermissionProfile,
    /// `argv` runs the Linux helper, which accepts `--status-fd` to report whether the
    /// sandbox was set up (see [`SandboxExecRequest::argv_with_status_fd`]).
    pub reports_setup_status: bool,
}

impl SandboxExecRequest {
    /// `argv` with `--status-fd FD` added to the helper's options (right after the
    /// `linux-sandbox` subcommand); `argv` unchanged when the launch is not the helper.
    #[must_use]
    pub fn argv_with_status_fd(&self, fd: i32) -> Vec<String> {
        let mut argv = self.argv.clone();
        if self.reports_setup_status && argv.len() >= 2 {
            argv.splice(2..2, ["--status-fd".to_owned(), fd.to_string()]);
        }
        argv
    }
}

/// A transform that cannot produce a safe launch. Nothing was started.
#[derive(Debug, thiserror::Error)]
pub enum SandboxTransformError {
    /// The Linux helper executable is unknown.
    #[error(
        "the Linux sandbox helper is not configured; run commands through the `airlock` binary (it is its own helper)"
    )]
    MissingLinuxHelper,
    /// bubblewrap is missing.
    #[error(transparent)]
    Bubblewrap(#[from] airlock_linux_sandbox::bwrap_path::BwrapError),
    /// WSL1 has no namespaces bubblewrap can use.
    #[error(
        "the Linux sandbox needs WSL 2; WSL 1 cannot run bubblewrap. Upgrade with `wsl --set-version <distro> 2`"
    )]
    Wsl1,
    /// The working directory is not usable.
    #[error("command working directory {0} does not exist or is not a directory")]
    BadCwd(PathBuf),
    /// The command is empty.
    #[error("cannot sandbox an empty command")]
    EmptyCommand,
    /// The Seatbelt policy could not be generated.
    #[error(transparent)]
    Seatbelt(#[from] SeatbeltError),
    /// The Windows sandbox cannot be used.
    #[error(transparent)]
    Windows(#[from] WindowsSandboxError),
    /// The mechanism cannot run on this host.
    #[error(
        "{sandbox:?} sandboxing is not supported on this platform ({os}); use the platform's own sandbox"
    )]
    UnsupportedPlatform {
        /// The requested mechanism.
        sandbox: SandboxType,
        /// This host's OS.
        os: &'static str,
    },
}

/// Decides and builds sandboxed launches.
#[derive(Debug, Clone, Default)]
pub struct SandboxManager {
    /// Whether the Windows restricted-token sandbox is enabled (a feature flag).
    pub windows_sandbox_enabled: bool,
    /// `[sandbox] bwrap_path`: the bubblewrap executable to use instead of the default
    /// locations (absolute; checked by `airlock_linux_sandbox::bwrap_path`).
    pub bwrap_path: Option<PathBuf>,
}

impl SandboxManager {
    /// Spec 05: `Forbid` → false, `Require` → true, `Auto` → the runtime policies need
    /// a platform sandbox (restricted filesystem, restricted network, or managed
    /// network requirements). `Disabled` with open network → false; `External` →
    /// false (the external sandbox owns isolation, network included).
    pub fn should_sandbox(
        &self,
        profile: &PermissionProfile,
        preference: SandboxablePreference,
        managed_network: bool,
    ) -> bool {
        match preference {
            SandboxablePreference::Forbid => false,
            SandboxablePreference::Require => true,
            SandboxablePreference::Auto => match profile {
                PermissionProfile::External { .. } => false,
                PermissionProfile::Disabled => managed_network,
                PermissionProfile::Managed { .. } => {
                    let fs = file_system_sandbox_policy(profile);
                    let restricted_fs = fs.kind == FileSystemSandboxKind::Restricted
                        && !(fs.has_full_disk_write_access() && fs.unsandboxed_execution_allowed());
                    restricted_fs || !profile.network().is_enabled() || managed_network
                }
            },
        }
    }

    /// `should_sandbox ? platform sandbox : None`. A `None` result does not mean the
    /// policy asked for no sandbox (invariant 11).
    pub fn select_initial(
        &self,
        profile: &PermissionProfile,
        preference: SandboxablePreference,
        managed_network: bool,
    ) -> SandboxType {
        if self.should_sandbox(profile, preference, managed_network) {
            get_platform_sandbox(self.windows_sandbox_enabled).unwrap_or(SandboxType::None)
        } else {
            SandboxType::None
        }
    }

    /// Builds the launch for `request` (spec 05 §Types `transform`).
    ///
    /// # Errors
    /// [`SandboxTransformError`] — never a silent fallback to an unconfined launch.
    pub fn transform(
        &self,
        request: SandboxTransformRequest,
    ) -> Result<SandboxExecRequest, SandboxTransformError> {
        if request.command.is_empty() {
            return Err(SandboxTransformError::EmptyCommand);
        }
        if !request.cwd.is_dir() {
            return Err(SandboxTransformError::BadCwd(request.cwd));
        }
        let effective = effective_permission_profile(
            &request.permissions,
            request.additional_permissions.as_ref(),
        );
        let mut env = request.env.clone();
        let argv = match request.sandbox {
            SandboxType::None => request.command.clone(),
            SandboxType::LinuxSeccomp => {
                if std::env::consts::OS != "linux" {
                    return Err(unsupported(SandboxType::LinuxSeccomp));
                }
                let helper = request
                    .linux_helper
                    .clone()
                    .ok_or(SandboxTransformError::MissingLinuxHelper)?;
                if is_wsl1() {
                    return Err(SandboxTransformError::Wsl1);
                }
                let policy = file_system_sandbox_policy(&effective);
                airlock_linux_sandbox::bwrap_path::choose_bwrap(
                    self.bwrap_path.as_deref(),
                    &airlock_linux_sandbox::bwrap_path::writable_roots(
                        &policy,
                        &request.sandbox_policy_cwd,
                    ),
                )?;
                linux_helper_argv(&helper, &request, &effective, self.bwrap_path.as_deref())
            }
            SandboxType::MacosSeatbelt => {
                if std::env::consts::OS != "macos" {
                    return Err(unsupported(SandboxType::MacosSeatbelt));
                }
                // A managed network is enforced; the proxy has no loopback endpoint on
                // macOS yet, so the command gets no IP network, only its allowed sockets.
                let options = SeatbeltOptions {
                    enforce_managed_network: request.enforce_managed_network,
                    ..SeatbeltOptions::from_host()
                }
                .with_managed_network(request.managed_network.as_ref(), None);
                let seatbelt = create_seatbelt_command_args(
                    request.command.clone(),
                    &file_system_sandbox_policy(&effective),
                    effective.network(),
                    &request.sandbox_policy_cwd,
                    &options,
                )?;
                env.extend(seatbelt.env);
                seatbelt.argv
            }
            SandboxType::WindowsRestrictedToken => {
                create_windows_sandbox_command(&request.command, request.windows_level)?
            }
        };
        if request.sandbox != SandboxType::None && !effective.network().is_enabled() {
            env.insert("CODEX_SANDBOX_NETWORK_DISABLED".into(), "1".into());
        }
        Ok(SandboxExecRequest {
            argv,
            cwd: request.cwd,
            env,
            arg0: None,
            reports_setup_status: request.sandbox == SandboxType::LinuxSeccomp,
            sandbox: request.sandbox,
            effective_profile: effective,
        })
    }
}

fn unsupported(sandbox: SandboxType) -> SandboxTransformError {
    SandboxTransformError::UnsupportedPlatform {
        sandbox,
        os: std::env::consts::OS,
    }
}

/// `[helper, "linux-sandbox", --sandbox-policy-cwd, .., --command-cwd, .., --permission-profile, JSON, .., --, command...]`.
fn linux_helper_argv(
    helper: &Path,
    request: &SandboxTransformRequest,
    effective: &PermissionProfile,
    bwrap_path: Option<&Path>,
) -> Vec<String> {
    let args = helper_args(request, effective, bwrap_path);
    std::iter::once(helper.to_string_lossy().into_owned())
        .chain(std::iter::once(
            airlock_linux_sandbox::HELPER_SUBCOMMAND.to_string(),
        ))
        .chain(
            args.to_args()
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned()),
        )
        .collect()
}

/// What the Linux helper is told to do for `request` under `effective` (also what an
/// in-process launch resolves, see [`crate::direct`]).
pub(crate) fn helper_args(
    request: &SandboxTransformRequest,
    effective: &PermissionProfile,
    bwrap_path: Option<&Path>,
) -> HelperArgs {
    HelperArgs {
        sandbox_policy_cwd: request.sandbox_policy_cwd.clone(),
        command_cwd: request.cwd.clone(),
        permission_profile: effective.clone(),
        use_legacy_landlock: request.use_legacy_landlock,
        no_proc: false,
        apply_seccomp_then_exec: false,
        bwrap_path: bwrap_path.map(Path::to_path_buf),
        status_fd: None,
        // The helper may get the command's filtered environment: name this process's homes.
        protected_homes: airlock_permissions::protected_homes_from_env(&request.sandbox_policy_cwd),
        user_homes: airlock_permissions::user_homes_from_env(&request.sandbox_policy_cwd),
        managed_network: request.managed_network.clone(),
        network_proxy_dir: request.network_proxy_dir.clone(),
        command: request.command.iter().map(Into::into).collect(),
    }
}

/// WSL 1 reports a Microsoft kernel without the WSL2 marker. Read once per process: the
/// running kernel does not change.
pub(crate) fn is_wsl1() -> bool {
    static WSL1: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WSL1.get_or_init(|| {
        std::fs::read_to_string("/proc/version")
            .is_ok_and(|v| v.contains("Microsoft") && !v.contains("WSL2"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_protocol::NetworkSandboxPolicy;

    fn profile(json: &str) -> PermissionProfile {
        serde_json::from_str(json).unwrap()
    }

    fn read_only() -> PermissionProfile {
        profile(
            r#"{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]},"network":"restricted"}"#,
        )
    }

    fn full_write(network: &str) -> PermissionProfile {
        profile(&format!(
            r#"{{"type":"managed","file_system":{{"type":"restricted","entries":[{{"path":{{"type":"special","value":{{"kind":"root"}}}},"access":"write"}}]}},"network":"{network}"}}"#
        ))
    }

    #[test]
    fn should_sandbox_matrix() {
        let m = SandboxManager::default();
        use SandboxablePreference::{Auto, Forbid, Require};
        assert!(!m.should_sandbox(&read_only(), Forbid, true));
        assert!(m.should_sandbox(&PermissionProfile::Disabled, Require, false));
        assert!(m.should_sandbox(&read_only(), Auto, false));
        assert!(!m.should_sandbox(&PermissionProfile::Disabled, Auto, false));
        assert!(m.should_sandbox(&PermissionProfile::Disabled, Auto, true));
        assert!(!m.should_sandbox(
            &PermissionProfile::External {
                network: NetworkSandboxPolicy::Restricted
            },
            Auto,
            true
        ));
        assert!(
            m.should_sandbox(&full_write("restricted"), Auto, false),
            "network restricted still needs the sandbox"
        );
        assert!(!m.should_sandbox(&full_write("enabled"), Auto, false));
        assert!(m.should_sandbox(&full_write("enabled"), Auto, true));
    }

    fn request(sandbox: SandboxType) -> SandboxTransformRequest {
        SandboxTransformRequest {
            command: vec!["ls".into(), "-la".into()],
            cwd: std::env::temp_dir(),
            env: BTreeMap::new(),
            permissions: read_only(),
            additional_permissions: None,
            sandbox,
            sandbox_policy_cwd: std::env::temp_dir(),
            linux_helper: Some("/opt/airlock".into()),
            use_legacy_landlock: false,
            windows_level: WindowsSandboxLevel::RestrictedToken,
            enforce_managed_network: false,
            managed_network: None,
            network_proxy_dir: None,
        }
    }

    #[test]
    fn none_keeps_argv_and_effective_profile() {
        let out = SandboxManager::default()
            .transform(request(SandboxType::None))
            .unwrap();
        assert_eq!(out.argv, ["ls", "-la"]);
        assert_eq!(out.effective_profile, read_only());
        assert_eq!(out.sandbox, SandboxType::None);
        assert!(!out.env.contains_key("CODEX_SANDBOX_NETWORK_DISABLED"));
    }

    #[test]
    fn errors_before_anything_runs() {
        let m = SandboxManager::default();
        let mut empty = request(SandboxType::None);
        empty.command.clear();
        assert!(matches!(
            m.transform(empty),
            Err(SandboxTransformError::EmptyCommand)
        ));
        let mut bad_cwd = request(SandboxType::None);
        bad_cwd.cwd = "/nonexistent/airlock".into();
        assert!(matches!(
            m.transform(bad_cwd),
            Err(SandboxTransformError::BadCwd(_))
        ));
        let mut no_helper = request(SandboxType::LinuxSeccomp);
        no_helper.linux_helper = None;
        if cfg!(target_os = "linux") {
            assert!(matches!(
                m.transform(no_helper),
                Err(SandboxTransformError::MissingLinuxHelper)
            ));
        }
        if !cfg!(windows) {
            assert!(matches!(
                m.transform(request(SandboxType::WindowsRestrictedToken)),
                Err(SandboxTransformError::Windows(
                    WindowsSandboxError::UnsupportedPlatform { .. }
                ))
            ));
        }
        if !cfg!(target_os = "macos") {
            assert!(matches!(
                m.transform(request(SandboxType::MacosSeatbelt)),
                Err(SandboxTransformError::UnsupportedPlatform { .. })
            ));
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn linux_transform_invokes_the_helper_with_the_effective_profile() {
        if airlock_linux_sandbox::bwrap_path::choose_bwrap(None, &[]).is_err() {
            // The error path is covered above; this host lacks bubblewrap.
            let err = SandboxManager::default()
                .transform(request(SandboxType::LinuxSeccomp))
                .unwrap_err();
            assert!(err.to_string().contains("apt-get install bubblewrap"));
            return;
        }
        let out = SandboxManager::default()
            .transform(request(SandboxType::LinuxSeccomp))
            .unwrap();
        assert_eq!(out.argv[0], "/opt/airlock");
        assert_eq!(out.argv[1], "linux-sandbox");
        let tail: Vec<&str> = out.argv.iter().rev().take(3).map(String::as_str).collect();
        assert_eq!(tail, ["-la", "ls", "--"]);
        let parsed = HelperArgs::parse(out.argv[2..].iter().map(Into::into)).unwrap();
        assert_eq!(parsed.permission_profile, read_only());
        assert_eq!(
            out.env
                .get("CODEX_SANDBOX_NETWORK_DISABLED")
                .map(String::as_str),
            Some("1")
        );
    }
}
