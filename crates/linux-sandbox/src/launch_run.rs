//! Running a prepared launch (what [`crate::launch`] decides, this carries out): the
//! choice between bubblewrap, seccomp alone and legacy Landlock, spawning bubblewrap with
//! its placeholders held and released, signal forwarding, and the exit status or set-up
//! failure reported back. Kept apart from the launch's preparation so that each reads on
//! its own.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use airlock_permissions::{
    FileSystemPolicyQueries, ResolveContext, file_system_sandbox_policy, network_sandbox_policy,
};
use airlock_protocol::{FileSystemSandboxKind, FileSystemSandboxPolicy, NetworkSandboxPolicy};

use crate::args::HelperArgs;
use airlock_permissions::resolution_memo::ResolutionMemo;

use crate::early_bwrap::EarlyBwrap;
use crate::launch::{LaunchError, ProxyMount, prepare_bwrap_with, sandbox_env, seccomp_mode};
use crate::launch_base::BwrapBase;
use crate::placeholders::{PlaceholderGuard, PlaceholderKind};

pub(crate) fn launch_confined(
    args: &HelperArgs,
    base_env: Option<&[(OsString, OsString)]>,
    watch: Option<crate::status::StatusPipe>,
    proxy: Option<&ProxyMount>,
) -> Result<i32, LaunchError> {
    let policy = file_system_sandbox_policy(&args.permission_profile);
    let network = network_sandbox_policy(&args.permission_profile);
    let env = sandbox_env(network);
    if args.managed_network.is_some() != proxy.is_some() {
        return Err(LaunchError::Unsupported(
            "a managed network needs the network proxy running (launch through `airlock`, which starts it)",
        ));
    }
    if proxy.is_some() {
        // Only bubblewrap gives the command a network namespace of its own.
        if policy.kind != FileSystemSandboxKind::Restricted || args.use_legacy_landlock {
            return Err(LaunchError::Unsupported(
                "a managed network (network.domains) needs the bubblewrap sandbox; it cannot be combined with legacy Landlock or an unrestricted filesystem",
            ));
        }
        return spawn_bwrap(args, &policy, network, base_env, &env, watch, proxy);
    }
    match policy.kind {
        FileSystemSandboxKind::ExternalSandbox => {
            return Err(LaunchError::Unsupported(
                "an external-sandbox profile is enforced by the caller; the Linux helper must not be used for it",
            ));
        }
        FileSystemSandboxKind::Unrestricted => {
            return exec_with_seccomp_only(args, network, base_env, &env);
        }
        FileSystemSandboxKind::Restricted => {}
    }
    // Resolving the deny entries reads the file system: only a full-write policy needs it.
    let no_deny = || {
        let ctx = ResolveContext::new(&args.sandbox_policy_cwd);
        policy.get_unreadable_roots(&ctx).is_empty()
            && policy
                .get_unreadable_globs_with_cwd(&args.sandbox_policy_cwd)
                .is_empty()
    };
    if policy.has_full_disk_write_access() && no_deny() {
        return exec_with_seccomp_only(args, network, base_env, &env);
    }
    if args.use_legacy_landlock {
        crate::landlock_mode::restrict(&policy, &args.sandbox_policy_cwd)?;
        return exec_with_seccomp_only(args, network, base_env, &env);
    }
    spawn_bwrap(args, &policy, network, base_env, &env, watch, None)
}

/// Runs bubblewrap: `exec` when nothing needs this process afterwards, otherwise spawn
/// and wait (placeholders to remove, a status pipe to read, a proxy to keep serving).
/// A launch that is waited for without a proxy starts bubblewrap before the mount plan
/// is worked out ([`crate::early_bwrap`]).
fn spawn_bwrap(
    args: &HelperArgs,
    policy: &FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
    base_env: Option<&[(OsString, OsString)]>,
    env: &[(&str, &str)],
    watch: Option<crate::status::StatusPipe>,
    proxy: Option<&ProxyMount>,
) -> Result<i32, LaunchError> {
    // One resolution memo for the base and the plan; it ends before any placeholder is made.
    let memo = ResolutionMemo::begin();
    // One daemon connection for the queries sent ahead and the plan's scans.
    let batch = crate::nested_index::client::Batch::begin();
    let base = crate::launch::compute_base(args, policy, network, proxy.is_some())?;
    // The status pipe's writer (`airlock sandbox`) or the launcher's (the helper).
    let status_fd = args.status_fd;
    // `airlock sandbox` waits for its own bubblewrap: a termination signal kills the
    // launch whole (`signals::catch_stopping`); the helper forwards it to bubblewrap (its
    // launcher kills the group).
    let stopping = watch.is_some() && crate::signals::catch_stopping().is_ok();
    let early = if stopping && proxy.is_none() {
        start_early(&base, args, base_env, env, status_fd)
    } else {
        None
    };
    // The index daemon works on the plan's queries while bubblewrap loads.
    crate::resolve::prefetch_nested_queries(policy, &crate::launch::helper_context(args));
    let mut warnings = Vec::new();
    let early_fds = early.as_ref().map(EarlyBwrap::seccomp_fds);
    let launch = prepare_bwrap_with(
        &base,
        args,
        policy,
        network,
        proxy,
        &mut warnings,
        early_fds.as_deref(),
    );
    drop(batch);
    drop(memo);
    for warning in &warnings {
        eprintln!("airlock: warning: {warning}");
    }
    let launch = match launch {
        Ok(launch) => launch,
        Err(error) => {
            drop(early);
            crate::signals::release();
            return Err(error);
        }
    };
    if let Some(signal) = crate::signals::forwarded().filter(|_| stopping) {
        // Stopped on request while the plan was worked out: nothing ran.
        drop(early);
        return Ok(128 + signal);
    }
    let placeholders: Vec<(&Path, PlaceholderKind)> = launch
        .created_mount_points
        .iter()
        .map(|p| (p.as_path(), PlaceholderKind::Directory))
        .chain(
            launch
                .created_file_mount_points
                .iter()
                .map(|p| (p.as_path(), PlaceholderKind::File)),
        )
        .collect();
    if placeholders.is_empty() && watch.is_none() && proxy.is_none() {
        let mut command = bwrap_command(&launch, base_env, env, status_fd, &[])?;
        let source = command.exec();
        return Err(LaunchError::Exec {
            program: launch.bwrap.display().to_string(),
            source,
        });
    }
    // Placeholder mount points are created on the host; wait so they can be removed.
    let guard = if placeholders.is_empty() {
        None
    } else {
        Some(PlaceholderGuard::acquire_kinds(placeholders).map_err(LaunchError::MountPoint)?)
    };
    // The early bubblewrap gets the plan; when it cannot take it, it is killed and the
    // launch starts the ordinary way with the same descriptor numbers.
    let mut seccomp_kept = Vec::new();
    // Kept until bubblewrap has been reaped (see `early_bwrap::Keeper`).
    let mut keeper = None;
    let early_child = match early {
        Some(early) if launch.fds.is_empty() => match early.send(&launch.args, &args.command) {
            Ok((child, kept)) => {
                keeper = Some(kept);
                Some(child)
            }
            Err(early) => {
                seccomp_kept = early.abandon();
                None
            }
        },
        Some(early) => {
            seccomp_kept = early.abandon();
            None
        }
        None => None,
    };
    let spawned = match early_child {
        Some(child) => Ok(child),
        None => {
            let extra: Vec<i32> = seccomp_kept.iter().map(AsRawFd::as_raw_fd).collect();
            let mut command = bwrap_command(&launch, base_env, env, status_fd, &extra)?;
            if stopping {
                command.process_group(0);
                command.spawn()
            } else {
                crate::signals::catch();
                let spawned = command.spawn();
                if let Ok(child) = &spawned {
                    crate::signals::forward_to(child.id());
                }
                spawned
            }
        }
    };
    drop(seccomp_kept);
    let mut watch = watch;
    if let Some(pipe) = watch.as_mut() {
        pipe.close_writer();
    }
    let mut child = spawned.map_err(|source| {
        crate::signals::release();
        LaunchError::Exec {
            program: launch.bwrap.display().to_string(),
            source,
        }
    })?;
    if watch.is_none() {
        // The `airlock linux-sandbox` helper under a launcher (see `signals`); `airlock
        // sandbox` runs this in its own process and keeps its death signal as it is.
        crate::signals::relay_parent_death();
    }
    let waited = if stopping {
        crate::signals::wait_stopping(&child)
    } else {
        child.wait()
    };
    let status = waited.map_err(|source| LaunchError::Exec {
        program: launch.bwrap.display().to_string(),
        source,
    })?;
    drop(keeper);
    drop(launch.fds);
    if let Some(guard) = guard {
        guard.release();
    }
    let code = exit_code(status);
    let Some(pipe) = watch else {
        return Ok(code);
    };
    // Stopped by a signal (caught by us, the launch then killed or the signal forwarded;
    // or sent to bubblewrap): the status is the shell's `128 + N` of that signal, not a
    // set-up failure. bubblewrap itself never ends by a signal when its set-up fails.
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(signal) = crate::signals::forwarded().or_else(|| status.signal()) {
        return Ok(128 + signal);
    }
    match pipe.report("") {
        crate::status::LaunchReport::Started => Ok(code),
        // Set up, but the command could not be executed (bubblewrap's message is above).
        crate::status::LaunchReport::CommandNotExecutable(_) => Ok(COMMAND_NOT_FOUND),
        crate::status::LaunchReport::SetupFailed(_) => Err(LaunchError::BwrapSetup { code }),
    }
}

/// bubblewrap started for `args.command` before the plan, in a process group of its own;
/// `None` (and nothing left running) when it could not be started that way.
fn start_early(
    base: &BwrapBase,
    args: &HelperArgs,
    base_env: Option<&[(OsString, OsString)]>,
    env: &[(&str, &str)],
    status_fd: Option<i32>,
) -> Option<EarlyBwrap> {
    let mut command = Command::new(base.bwrap());
    set_env(&mut command, base_env, env);
    // A group of its own: a terminal's signals reach the launcher only, which kills the
    // launch whole (`signals::catch_stopping`, caught already).
    command.process_group(0);
    let keep: Vec<i32> = status_fd.into_iter().collect();
    EarlyBwrap::start(command, base.seccomp_programs(), &keep, &args.command).ok()
}

/// The ordinary bubblewrap command for `launch`: every descriptor but the launch's own,
/// `extra` and the status pipe's writer is marked close-on-exec.
fn bwrap_command(
    launch: &crate::launch::BwrapLaunch,
    base_env: Option<&[(OsString, OsString)]>,
    env: &[(&str, &str)],
    status_fd: Option<i32>,
    extra: &[i32],
) -> Result<Command, LaunchError> {
    // This process runs nothing else concurrently: the descriptors can be inheritable now.
    for fd in &launch.fds {
        crate::fds::make_inheritable(fd).map_err(LaunchError::Prepare)?;
    }
    let keep: Vec<i32> = launch
        .fds
        .iter()
        .map(AsRawFd::as_raw_fd)
        .chain(extra.iter().copied())
        .chain(status_fd)
        .collect();
    crate::fds::close_inherited_on_exec(&keep).map_err(LaunchError::Prepare)?;
    let mut command = Command::new(&launch.bwrap);
    command.args(&launch.args);
    set_env(&mut command, base_env, env);
    Ok(command)
}

/// The status of a command bubblewrap could not execute (as shells report it).
const COMMAND_NOT_FOUND: i32 = 127;

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

fn set_env(
    command: &mut Command,
    base_env: Option<&[(OsString, OsString)]>,
    extra: &[(&str, &str)],
) {
    if let Some(base) = base_env {
        command.env_clear().envs(base.iter().map(|(k, v)| (k, v)));
    }
    command.envs(extra.iter().copied());
}

fn exec_with_seccomp_only(
    args: &HelperArgs,
    network: NetworkSandboxPolicy,
    base_env: Option<&[(OsString, OsString)]>,
    env: &[(&str, &str)],
) -> Result<i32, LaunchError> {
    let (program, rest) = args
        .command
        .split_first()
        .ok_or(LaunchError::Unsupported("no command"))?;
    let mut command = Command::new(program);
    command.args(rest).current_dir(&args.command_cwd);
    set_env(&mut command, base_env, env);
    // Marks the status descriptor close-on-exec too: the command never holds it.
    crate::fds::close_inherited_on_exec(&[]).map_err(LaunchError::Prepare)?;
    crate::seccomp::install(seccomp_mode(network))?;
    if let Some(fd) = args.status_fd {
        crate::status::write_exec_marker(fd);
    }
    let source = command.exec();
    Err(LaunchError::CommandExec {
        program: program.to_string_lossy().into_owned(),
        source,
    })
}
