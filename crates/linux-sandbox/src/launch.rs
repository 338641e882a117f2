//! The helper's outer stage: decide how to confine, build the bubblewrap command and
//! replace this process with it (spec 05 §Linux) — or spawn it and wait, when placeholder
//! mount points must be removed afterwards or no launcher above can tell bubblewrap's
//! set-up failure from the command's exit code (see [`crate::status`]).
//!
//! Three shapes, chosen from the effective profile:
//! - **bubblewrap** (every restricted filesystem policy): namespaces, the mount plan
//!   of [`crate::mounts`], a fresh `/proc` with `/proc/sys` read-only, capabilities
//!   dropped, and the seccomp program of [`crate::seccomp`] installed by bubblewrap
//!   itself (`--seccomp FD`) right before it execs the command — bubblewrap sets
//!   `no_new_privs` first. Doing the filter there instead of in a second helper
//!   image keeps the helper out of the sandbox's view, which matters for
//!   restricted-read profiles, and saves one exec per command.
//! - **seccomp only**: full-disk-write policies without deny entries; the filter is
//!   installed in-process and the command exec'd directly.
//! - **legacy Landlock** on request, for the policies it can express.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use airlock_permissions::{
    FileSystemPolicyQueries, ResolveContext, file_system_sandbox_policy, network_sandbox_policy,
};
use airlock_protocol::{FileSystemSandboxKind, FileSystemSandboxPolicy, NetworkSandboxPolicy};

use crate::args::HelperArgs;
use crate::bwrap_path::BwrapError;
use crate::fds::{data_fd, empty_data_fd};
use crate::launch_base::BwrapBase;
use crate::mounts::{DATA_FD_PLACEHOLDER, MountArgs, build_mount_args};
use crate::resolve::{ResolveError, resolve_mount_inputs_in};
use crate::seccomp::{NetworkSeccompMode, SeccompError};
use airlock_permissions::resolution_memo::ResolutionMemo;

/// Why the helper could not start the command. Nothing has run when this is returned.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// bubblewrap is missing.
    #[error(transparent)]
    Bwrap(#[from] BwrapError),
    /// The policy cannot be enforced as written.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The seccomp filter could not be built or installed.
    #[error(transparent)]
    Seccomp(#[from] SeccompError),
    /// Legacy Landlock could not enforce the policy.
    #[error(transparent)]
    Landlock(#[from] crate::landlock_mode::LandlockModeError),
    /// The profile is not one the Linux sandbox enforces.
    #[error("airlock linux-sandbox: {0}")]
    Unsupported(&'static str),
    /// The working directory is unusable.
    #[error(
        "sandbox working directory {path} is not usable: {source}; pass an existing directory with -C"
    )]
    Cwd {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A placeholder mount point could not be created (see [`crate::placeholders`]).
    #[error("could not start the sandbox: {0}")]
    MountPoint(crate::placeholders::PlaceholderError),
    /// Preparing descriptors or placeholders failed.
    #[error("could not prepare the sandbox: {0}")]
    Prepare(std::io::Error),
    /// `exec` of the command itself failed (seccomp-only and Landlock launches, after the
    /// start marker): the command's failure, not the sandbox's.
    #[error("could not start {program}: {source}")]
    CommandExec {
        /// The command.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// bubblewrap ran but exited before starting the command (its own message, printed
    /// on stderr, says why): namespaces, mounts or seccomp could not be set up.
    #[error(
        "could not start the sandbox: bubblewrap exited with code {code} before starting the command (its message is above); nothing ran. Run `airlock doctor` to see what this host is missing and how to fix it"
    )]
    BwrapSetup {
        /// bubblewrap's exit code.
        code: i32,
    },
    /// `exec` (or spawn) of bubblewrap failed.
    #[error("could not start {program}: {source}")]
    Exec {
        /// What was being started.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Environment variables every sandboxed command gets (spec 05 §Linux "Environment").
pub fn sandbox_env(network: NetworkSandboxPolicy) -> Vec<(&'static str, &'static str)> {
    let mut env = vec![("AIRLOCK_SANDBOX", "linux")];
    if !network.is_enabled() {
        env.push(("AIRLOCK_SANDBOX_NETWORK_DISABLED", "1"));
        env.push(("CODEX_SANDBOX_NETWORK_DISABLED", "1"));
    }
    env
}

pub(crate) fn seccomp_mode(network: NetworkSandboxPolicy) -> NetworkSeccompMode {
    if network.is_enabled() {
        NetworkSeccompMode::Enabled
    } else {
        NetworkSeccompMode::Restricted
    }
}

/// A fully prepared bubblewrap launch (exposed for tests and `airlock doctor`).
#[derive(Debug)]
pub struct BwrapLaunch {
    /// Path of the `bwrap` executable.
    pub bwrap: PathBuf,
    /// Arguments after the program name, descriptors already numbered.
    pub args: Vec<OsString>,
    /// Descriptors that must stay open (and inheritable) until `exec`.
    pub fds: Vec<OwnedFd>,
    /// What each of `fds` carries, in the same order.
    pub fd_contents: Vec<DescriptorContent>,
    /// Host directories bubblewrap will create as mount points.
    pub created_mount_points: Vec<PathBuf>,
    /// Host files bubblewrap would create as mount points (created and removed by the
    /// launch, see `placeholders`).
    pub created_file_mount_points: Vec<PathBuf>,
}

/// What a descriptor named on the bubblewrap command line carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescriptorContent {
    /// Reads as an empty file (the source of a `--ro-bind-data` mask).
    Empty,
    /// A compiled seccomp program for `--add-seccomp-fd`: the raw `struct sock_filter`
    /// array (8 bytes per instruction, native endianness).
    SeccompProgram(Vec<u8>),
}

/// A launch described without running it: what `airlock sandbox --dry-run` prints.
#[derive(Debug, Clone)]
pub struct LaunchDescription {
    /// The program and its arguments.
    pub argv: Vec<OsString>,
    /// Each descriptor number `argv` names, with its content (descriptor numbers are
    /// this process's; a caller reproducing the launch must supply the same numbers).
    pub descriptors: Vec<(i32, DescriptorContent)>,
}

/// Options of the namespace part of the command line.
#[derive(Debug, Clone, Copy)]
pub struct NamespaceOptions {
    /// Network allowed (no `--unshare-net`).
    pub network: bool,
    /// bubblewrap knows `--disable-userns` (≥ 0.8); the seccomp filters block nested
    /// user namespaces either way.
    pub disable_userns: bool,
    /// The payload is pid 1 (`--as-pid-1`): no bubblewrap reaper inside the sandbox. Set
    /// for the network bridge, whose outer filter is weaker than the command's: a reaper
    /// running under that filter would be a process of the same uid whose memory the
    /// command could write (`/proc/1/mem`); the bridge itself is non-dumpable and reaps.
    pub payload_as_pid_1: bool,
}

/// What a managed-network launch mounts into the sandbox (spec 12 §Enforcement).
#[derive(Debug, Clone)]
pub struct ProxyMount {
    /// The host directory holding the proxy's Unix socket (`proxy.sock`), private to
    /// this user. The socket file itself is bound at [`crate::bridge::PROXY_SOCKET`] (a bind
    /// pins the inode: a command that can write the host directory cannot swap the socket
    /// the bridge connects to).
    pub socket_dir: PathBuf,
    /// The `airlock` executable that runs the bridge; bound read-only at
    /// [`crate::bridge::BRIDGE_EXE`].
    pub bridge_exe: PathBuf,
}

/// The namespace, `/proc`, capability and seccomp arguments that follow the mounts.
pub fn namespace_args(options: NamespaceOptions, cwd: &Path, seccomp_fds: &[i32]) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["--unshare-user", "--unshare-pid"]
        .into_iter()
        .map(OsString::from)
        .collect();
    args.extend(["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"].map(OsString::from));
    if !options.network {
        args.push("--unshare-net".into());
    }
    if options.payload_as_pid_1 {
        args.push("--as-pid-1".into());
    }
    // No nested user namespaces: they would hand the command a full capability set
    // over new mount/network namespaces of its own.
    if options.disable_userns {
        args.push("--disable-userns".into());
    }
    args.push("--chdir".into());
    args.push(cwd.into());
    args.extend(["--cap-drop", "ALL"].map(OsString::from));
    for fd in seccomp_fds {
        args.push("--add-seccomp-fd".into());
        args.push(fd.to_string().into());
    }
    args
}

/// What the helper resolves entries against: its own environment plus the launcher's
/// protected homes and user homes (see [`HelperArgs::protected_homes`] and
/// [`HelperArgs::user_homes`]).
pub(crate) fn helper_context(args: &HelperArgs) -> ResolveContext {
    let mut ctx = ResolveContext::new(&args.sandbox_policy_cwd);
    for (from, to) in [
        (&args.protected_homes, &mut ctx.protected_homes),
        (&args.user_homes, &mut ctx.user_homes),
    ] {
        for home in from {
            let home = airlock_permissions::absolutize(home, &args.sandbox_policy_cwd);
            if !to.contains(&home) {
                to.push(home);
            }
        }
    }
    ctx
}

/// Prepares the bubblewrap launch for `args` with a restricted `policy`; warnings are
/// printed on stderr.
///
/// # Errors
/// Any [`LaunchError`] that must stop the launch.
pub fn prepare_bwrap(
    args: &HelperArgs,
    policy: &FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
    proxy: Option<&ProxyMount>,
) -> Result<BwrapLaunch, LaunchError> {
    // One resolution memo for the base and the plan; it ends before any placeholder is made.
    let _memo = ResolutionMemo::begin();
    let base = compute_base(args, policy, network, proxy.is_some())?;
    let mut warnings = Vec::new();
    let launch = prepare_bwrap_with(&base, args, policy, network, proxy, &mut warnings, None);
    for warning in &warnings {
        eprintln!("airlock: warning: {warning}");
    }
    launch
}

/// The [`BwrapBase`] of a launch for `args` (see [`BwrapBase::compute`]).
///
/// # Errors
/// As [`BwrapBase::compute`].
pub(crate) fn compute_base(
    args: &HelperArgs,
    policy: &FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
    proxied: bool,
) -> Result<BwrapBase, LaunchError> {
    BwrapBase::compute(
        args.bwrap_path.as_deref(),
        policy,
        &args.sandbox_policy_cwd,
        network,
        proxied,
    )
}

/// [`prepare_bwrap`] from a [`BwrapBase`] computed earlier for the same profile,
/// configuration and `proxy.is_some()` (the caller keeps it while
/// [`BwrapBase::is_current`]). Everything a confined command can change — the mount plan
/// with its nested scan, placeholders and symlink checks, the working directory — is
/// resolved here, for this launch. The descriptors are close-on-exec: the caller makes
/// them inheritable for the one process that runs bubblewrap. Warnings are appended to
/// `warnings` (one line each, without the `airlock: warning: ` prefix). With
/// `seccomp_fds`, the seccomp programs are already open at those descriptor numbers (one
/// per program of `base`, in order, owned by the caller, see [`crate::early_bwrap`]) and
/// the launch's `fds` hold only the plan's own.
///
/// # Errors
/// Any [`LaunchError`] that must stop the launch.
pub fn prepare_bwrap_with(
    base: &BwrapBase,
    args: &HelperArgs,
    policy: &FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
    proxy: Option<&ProxyMount>,
    warnings: &mut Vec<String>,
    seccomp_fds: Option<&[i32]>,
) -> Result<BwrapLaunch, LaunchError> {
    // The plan resolves the same prefixes many times; nothing is created while it runs.
    let _memo = ResolutionMemo::begin();
    // The nested-repository queries of every writable root share one daemon connection.
    let _daemon = crate::nested_index::client::Batch::begin();
    let bwrap = base.bwrap().to_path_buf();
    let mut inputs = resolve_mount_inputs_in(policy, &helper_context(args))?;
    warnings.append(&mut inputs.warnings);
    let features = base.features()?;
    // Without a fresh /proc only when the kernel refuses one (probed, see `probe`).
    inputs.mount_proc = !args.no_proc && features.proc_mount_ok;
    let MountArgs {
        args: mount_args,
        data_fds,
        created_mount_points,
        created_file_mount_points,
    } = build_mount_args(&inputs);
    let mut fds = Vec::with_capacity(data_fds + 3);
    let mut fd_contents = Vec::with_capacity(data_fds + 3);
    let mut argv = vec![
        OsString::from("--new-session"),
        OsString::from("--die-with-parent"),
    ];
    for arg in mount_args {
        if arg == DATA_FD_PLACEHOLDER {
            let fd = empty_data_fd().map_err(LaunchError::Prepare)?;
            argv.push(fd.as_raw_fd().to_string().into());
            fds.push(fd);
            fd_contents.push(DescriptorContent::Empty);
        } else {
            argv.push(arg);
        }
    }
    let unix_sockets = allowed_unix_sockets(args, proxy.is_some(), warnings);
    for socket in &unix_sockets {
        // Last among the mounts, so no mask or tmpfs hides it; the bind also pins the
        // socket (the command cannot rename or unlink a mount point).
        argv.extend([
            OsString::from("--ro-bind"),
            socket.clone().into(),
            socket.clone().into(),
        ]);
    }
    if let Some(proxy) = proxy {
        // Right after `--dev /dev`: bubblewrap creates both mount points in its own /dev
        // tmpfs, never on the host (a later bind over /dev would hide them and the launch
        // would fail, not write into the host's /dev).
        let at = argv
            .windows(2)
            .position(|pair| pair[0] == "--dev" && pair[1] == "/dev")
            .map(|index| index + 2)
            .ok_or(LaunchError::Unsupported(
                "the mount plan has no private /dev for the network bridge",
            ))?;
        argv.splice(
            at..at,
            [
                OsString::from("--ro-bind"),
                proxy
                    .socket_dir
                    .join(crate::bridge::PROXY_SOCKET_NAME)
                    .into(),
                crate::bridge::PROXY_SOCKET.into(),
                "--ro-bind".into(),
                proxy.bridge_exe.clone().into(),
                crate::bridge::BRIDGE_EXE.into(),
            ],
        );
    }
    let given = seccomp_fds.filter(|given| given.len() == base.seccomp_programs().len());
    let mut seccomp_fds = Vec::with_capacity(3);
    for bytes in base.seccomp_programs() {
        if given.is_none() {
            seccomp_fds.push(data_fd(bytes).map_err(LaunchError::Prepare)?);
            fd_contents.push(DescriptorContent::SeccompProgram(bytes.clone()));
        }
    }
    let cwd = airlock_permissions::resolution_memo::canonicalize(&args.command_cwd).map_err(
        |source| LaunchError::Cwd {
            path: args.command_cwd.clone(),
            source,
        },
    )?;
    let options = NamespaceOptions {
        network: network.is_enabled() && proxy.is_none(),
        disable_userns: features.disable_userns,
        payload_as_pid_1: proxy.is_some(),
    };
    let raw: Vec<i32> = given.map_or_else(
        || seccomp_fds.iter().map(AsRawFd::as_raw_fd).collect(),
        <[i32]>::to_vec,
    );
    argv.extend(namespace_args(options, &cwd, &raw));
    if let Some(fd) = args.status_fd {
        // bubblewrap reports `exit-code` only for a command it started (see `status`).
        argv.push("--json-status-fd".into());
        argv.push(fd.to_string().into());
    }
    fds.extend(seccomp_fds);
    argv.push("--".into());
    if proxy.is_some() {
        argv.extend([
            OsString::from(crate::bridge::BRIDGE_EXE),
            crate::bridge::BRIDGE_SUBCOMMAND.into(),
            "--socket".into(),
            crate::bridge::PROXY_SOCKET.into(),
        ]);
        for socket in &unix_sockets {
            argv.extend([OsString::from("--unix-socket"), socket.clone().into()]);
        }
        argv.push("--".into());
    }
    argv.extend(args.command.iter().cloned());
    Ok(BwrapLaunch {
        bwrap,
        args: argv,
        fds,
        fd_contents,
        created_mount_points,
        created_file_mount_points,
    })
}

/// The canonical paths of the managed network's `unix_sockets` allow entries that can be
/// bound in (each a socket at launch); a warning for every other one, which stays
/// unreachable. Empty without a managed network.
fn allowed_unix_sockets(
    args: &HelperArgs,
    proxied: bool,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let Some(network) = args.managed_network.as_ref().filter(|_| proxied) else {
        return Vec::new();
    };
    let (sockets, problems) =
        crate::unix_sockets::canonical_allow_entries(network.allowed_unix_sockets());
    warnings.extend(problems.into_iter().map(|problem| problem.to_string()));
    sockets
}

/// How [`run_helper`] would confine `args`, without running anything: the argv of
/// the launch (descriptor numbers are those of this process and only meaningful to
/// it). For `airlock sandbox --dry-run` and benchmarks.
///
/// # Errors
/// The same [`LaunchError`]s a real launch would report.
pub fn describe_launch(args: &HelperArgs) -> Result<LaunchDescription, LaunchError> {
    let policy = file_system_sandbox_policy(&args.permission_profile);
    let network = network_sandbox_policy(&args.permission_profile);
    let direct = || {
        let mut argv = vec![OsString::from(format!(
            "(seccomp {:?}, no bubblewrap)",
            seccomp_mode(network)
        ))];
        argv.extend(args.command.iter().cloned());
        LaunchDescription {
            argv,
            descriptors: Vec::new(),
        }
    };
    match policy.kind {
        FileSystemSandboxKind::ExternalSandbox => Err(LaunchError::Unsupported(
            "an external-sandbox profile is enforced by the caller",
        )),
        FileSystemSandboxKind::Unrestricted => Ok(direct()),
        FileSystemSandboxKind::Restricted => {
            let ctx = ResolveContext::new(&args.sandbox_policy_cwd);
            let no_deny = policy.get_unreadable_roots(&ctx).is_empty()
                && policy
                    .get_unreadable_globs_with_cwd(&args.sandbox_policy_cwd)
                    .is_empty();
            if policy.has_full_disk_write_access() && no_deny {
                return Ok(direct());
            }
            if args.use_legacy_landlock {
                crate::landlock_mode::precheck(&policy, &args.sandbox_policy_cwd)?;
                let mut argv = vec![OsString::from("(legacy Landlock + seccomp, no bubblewrap)")];
                argv.extend(args.command.iter().cloned());
                return Ok(LaunchDescription {
                    argv,
                    descriptors: Vec::new(),
                });
            }
            let placeholder = args.managed_network.as_ref().map(|_| ProxyMount {
                socket_dir: PathBuf::from("<proxy socket directory>"),
                bridge_exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("airlock")),
            });
            let launch = prepare_bwrap(args, &policy, network, placeholder.as_ref())?;
            let descriptors = launch
                .fds
                .iter()
                .map(AsRawFd::as_raw_fd)
                .zip(launch.fd_contents)
                .collect();
            Ok(LaunchDescription {
                argv: std::iter::once(launch.bwrap.into_os_string())
                    .chain(launch.args)
                    .collect(),
                descriptors,
            })
        }
    }
}

/// Runs the helper with the process environment; see [`run_helper_with_env`].
///
/// # Errors
/// [`LaunchError`] before anything ran.
pub fn run_helper(args: &HelperArgs) -> Result<i32, LaunchError> {
    run_helper_with_env(args, None)
}

/// Runs the helper: returns only on error, or with the command's exit code when the
/// helper had to wait for it (to remove placeholder mount points afterwards).
/// `base_env`, when given, replaces the inherited environment (the caller has
/// already applied its environment policy); the sandbox variables are added on top.
///
/// # Errors
/// [`LaunchError`] before anything ran.
pub fn run_helper_with_env(
    args: &HelperArgs,
    base_env: Option<&[(OsString, OsString)]>,
) -> Result<i32, LaunchError> {
    let result = crate::launch_run::launch_confined(args, base_env, None, None);
    if let (Err(error), Some(fd)) = (&result, args.status_fd)
        && !matches!(error, LaunchError::CommandExec { .. })
    {
        crate::status::write_setup_error(fd, &error.to_string());
    }
    result
}

/// [`run_helper_with_env`] for a caller that has no launcher above it to tell a set-up
/// failure from the command's own exit code (`airlock sandbox`): bubblewrap is spawned and
/// waited for instead of exec'd, with a status pipe (see [`crate::status`]), and a
/// bubblewrap that exits before starting the command is [`LaunchError::BwrapSetup`].
///
/// # Errors
/// [`LaunchError`] before the command ran.
pub fn run_helper_reporting_setup(
    args: &HelperArgs,
    base_env: Option<&[(OsString, OsString)]>,
) -> Result<i32, LaunchError> {
    let pipe = crate::status::StatusPipe::open().map_err(LaunchError::Prepare)?;
    let mut watched = args.clone();
    watched.status_fd = pipe.writer_fd();
    crate::launch_run::launch_confined(&watched, base_env, Some(pipe), None)
}

/// [`run_helper_with_env`] (or, with `report_setup`, [`run_helper_reporting_setup`]) for
/// a profile with a managed network: `proxy` names the running proxy's socket directory.
/// The helper always waits for the command (the proxy lives in this process).
///
/// # Errors
/// [`LaunchError`] before the command ran; a managed network without `proxy` is refused.
pub fn run_helper_with_proxy(
    args: &HelperArgs,
    base_env: Option<&[(OsString, OsString)]>,
    proxy: &ProxyMount,
    report_setup: bool,
) -> Result<i32, LaunchError> {
    if report_setup {
        let pipe = crate::status::StatusPipe::open().map_err(LaunchError::Prepare)?;
        let mut watched = args.clone();
        watched.status_fd = pipe.writer_fd();
        return crate::launch_run::launch_confined(&watched, base_env, Some(pipe), Some(proxy));
    }
    let result = crate::launch_run::launch_confined(args, base_env, None, Some(proxy));
    if let (Err(error), Some(fd)) = (&result, args.status_fd) {
        crate::status::write_setup_error(fd, &error.to_string());
    }
    result
}
