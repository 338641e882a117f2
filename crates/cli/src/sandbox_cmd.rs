//! `airlock sandbox`: run a command under a permission profile's sandbox, like
//! `codex sandbox` (issue 4 item 7, spec 10 §CLI), and the hidden helper entry
//! `airlock linux-sandbox` that the sandbox manager's transforms invoke.
//!
//! Exit status: the command's own (`128 + N` when it was stopped by signal N, also when
//! the signal was sent to `airlock sandbox`, which forwards it); 127 when the program is not
//! found and 126 when it is not executable, a `#!` interpreter included
//! ([`crate::program`]); 125 when Airlock could not start it confined (nothing ran); 2 for
//! usage errors.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use airlock_linux_sandbox::HelperArgs;
use airlock_permissions::{PermissionProfile, load_config};
use airlock_sandbox::ShellEnvironmentPolicy;
use anyhow::Context;
use clap::Args;

/// The program of `command` cannot be started: prints why and returns 127 or 126.
fn unrunnable(command: &[OsString], env: &[(OsString, OsString)], cwd: &Path) -> Option<i32> {
    let program = command.first()?;
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    let error = crate::program::check_program(program, path, cwd).err()?;
    eprintln!("airlock: {}", crate::terminal_text::safe(&error.message()));
    Some(i32::from(error.exit_code()))
}

/// Exit status when the sandbox could not be set up (as `env`, `timeout` and container
/// runtimes use it): distinguishes Airlock's failure from the command's.
pub const SETUP_FAILURE: u8 = 125;

/// Arguments of `airlock sandbox`.
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Permission profile id (`:read-only`, `:workspace`, `:danger-full-access`, or a
    /// `[permissions.<id>]` table); default: the configured one.
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    profile: Option<String>,

    /// Working directory (the first workspace root); default: the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,

    /// Config override `dotted.key=value` (value parsed as TOML, else a string); repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// Use the legacy in-process Landlock sandbox instead of bubblewrap (read-only
    /// profiles only).
    #[arg(long)]
    use_legacy_landlock: bool,

    /// Print the launch command (e.g. the bubblewrap argv) instead of running it. The
    /// real launch passes the same options, after `bwrap --args FD`, through a pipe.
    #[arg(long)]
    dry_run: bool,

    /// With --dry-run: write each descriptor the printed command reads (the seccomp
    /// programs) into DIR as `fd-N.bpf`, and end the printed line with the shell
    /// redirections (`N<DIR/fd-N.bpf`) so it runs with the same mounts, namespaces and
    /// seccomp as Airlock would. The environment policy is not part of the line: run
    /// it from the environment you want the command to see.
    #[arg(long, value_name = "DIR", requires = "dry_run")]
    save_fds: Option<PathBuf>,

    /// The command to run, after `--`.
    #[arg(value_name = "COMMAND", required = true, num_args = 1.., trailing_var_arg = true)]
    command: Vec<OsString>,
}

/// Runs `airlock sandbox`. Returns only when the command could not be started or
/// had to be waited for.
pub fn run(args: SandboxArgs) -> ExitCode {
    enable_index_daemon();
    match run_sandbox(args) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprint!("{}", crate::format_error(&error));
            ExitCode::from(SETUP_FAILURE)
        }
    }
}

/// One-shot launches ask the per-user nested-repository index daemon (started from this
/// executable when none runs; `AIRLOCK_NESTED_INDEX=off` turns it off).
fn enable_index_daemon() {
    if let Some(exe) = crate::common::current_exe() {
        airlock_linux_sandbox::nested_index::enable_daemon(exe.to_path_buf());
    }
}

/// Prints a `--dry-run` line. Shell quoting keeps an `ESC` raw inside `'…'`, so a line
/// with control characters is printed escaped ([`crate::terminal_text::lines`]) with a
/// note that it no longer runs as printed (issue 17: nothing the agent chose reaches the
/// terminal raw).
fn print_dry_run(line: &str) {
    let shown = crate::terminal_text::lines(line);
    println!("{shown}");
    if shown != line {
        eprintln!(
            "airlock: note: the command contains control characters, shown escaped as \\xNN; \
             the line above does not run as printed"
        );
    }
}

fn run_sandbox(args: SandboxArgs) -> anyhow::Result<i32> {
    // As `airlock exec -- ""`: an empty program name is a usage mistake, not a missing program.
    anyhow::ensure!(
        !args
            .command
            .first()
            .is_some_and(|program| program.is_empty()),
        "invalid command: empty command; pass the program to run after `--`"
    );
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    let config_env = crate::common::config_env()?;
    let config = load_config(&config_env, &args.overrides)?;
    let selected = crate::common::select_profile(&config, args.profile.as_deref(), &cwd)?;
    crate::common::refuse_root_workspace(&cwd, selected.symbolic())?;
    for warning in &selected.warnings {
        eprintln!("warning: {}", crate::terminal_text::safe(warning));
    }
    if let Some(warning) =
        crate::common::executable_inside_writable_root(&selected.materialized(), &cwd)
    {
        eprintln!("warning: {warning}");
    }
    let env = ShellEnvironmentPolicy::from_config(&config.table)?.apply(std::env::vars_os());
    let profile = selected.materialized();
    match profile {
        // No Airlock sandbox: full access, or a container/VM that owns isolation.
        PermissionProfile::Disabled | PermissionProfile::External { .. } => {
            let (program, rest) = args.command.split_first().context("no command given")?;
            if args.dry_run {
                let words: Vec<String> = args
                    .command
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect();
                print_dry_run(&format!(
                    "(no Airlock sandbox for this profile) {}",
                    shlex::try_join(words.iter().map(String::as_str))
                        .unwrap_or_else(|_| words.join(" "))
                ));
                return Ok(0);
            }
            if let Some(code) = unrunnable(&args.command, &env, &cwd) {
                return Ok(code);
            }
            let error = std::process::Command::new(program)
                .args(rest)
                .current_dir(&cwd)
                .env_clear()
                .envs(env)
                .exec();
            Err(error).with_context(|| format!("could not start {}", program.to_string_lossy()))
        }
        PermissionProfile::Managed { .. } => {
            if !args.dry_run
                && let Some(code) = unrunnable(&args.command, &env, &cwd)
            {
                return Ok(code);
            }
            let helper_cwd = cwd.clone();
            let helper = HelperArgs {
                sandbox_policy_cwd: cwd.clone(),
                command_cwd: cwd,
                permission_profile: profile,
                use_legacy_landlock: args.use_legacy_landlock,
                no_proc: false,
                apply_seccomp_then_exec: false,
                bwrap_path: airlock_sandbox::bwrap_path_from_config(&config.table)?,
                status_fd: None,
                // The helper runs in this process and reads the same environment.
                protected_homes: Vec::new(),
                user_homes: Vec::new(),
                network_proxy_dir: None,
                managed_network: crate::managed_network::effective(
                    &config,
                    &config_env,
                    &selected,
                    &helper_cwd,
                    Vec::new(),
                )?,
                command: args.command,
            };
            if args.dry_run {
                let description = airlock_linux_sandbox::describe_launch(&helper)?;
                print_dry_run(&describe_for_shell(&description, args.save_fds.as_deref())?);
                return Ok(0);
            }
            // Nobody above this process can tell bubblewrap's set-up failure from the
            // command's exit code, so the helper waits and reports it (exit 125).
            if let Some(network) = helper.managed_network.clone() {
                let proxy = crate::managed_network::RunningProxy::start(network)?;
                let result = airlock_linux_sandbox::run_helper_with_proxy(
                    &helper,
                    Some(&env),
                    &proxy.mount()?,
                    true,
                );
                proxy.finish();
                return Ok(result?);
            }
            Ok(airlock_linux_sandbox::run_helper_reporting_setup(
                &helper,
                Some(&env),
            )?)
        }
    }
}

/// The launch as one shell line; with `save_fds`, the descriptor contents are written
/// there and redirected in, so the line can be run as is.
fn describe_for_shell(
    description: &airlock_linux_sandbox::LaunchDescription,
    save_fds: Option<&Path>,
) -> anyhow::Result<String> {
    use airlock_linux_sandbox::DescriptorContent;
    let words: Vec<String> = description
        .argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut line =
        shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "));
    let Some(dir) = save_fds else {
        return Ok(line);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--save-fds: cannot create {}", dir.display()))?;
    for (fd, content) in &description.descriptors {
        let source = match content {
            DescriptorContent::Empty => PathBuf::from("/dev/null"),
            DescriptorContent::SeccompProgram(bytes) => {
                let path = dir.join(format!("fd-{fd}.bpf"));
                std::fs::write(&path, bytes)
                    .with_context(|| format!("--save-fds: cannot write {}", path.display()))?;
                path
            }
        };
        let source = source.to_string_lossy().into_owned();
        line.push_str(&format!(
            " {fd}<{}",
            shlex::try_quote(&source).unwrap_or_else(|_| source.as_str().into())
        ));
    }
    Ok(line)
}

/// `airlock linux-sandbox ...`: the helper the sandbox manager's transform invokes.
/// Parsed by hand (no clap) so the helper starts as fast as possible.
pub fn run_helper_subcommand(args: impl Iterator<Item = OsString>) -> ExitCode {
    enable_index_daemon();
    let result = HelperArgs::parse(args)
        .map_err(anyhow::Error::from)
        .and_then(|helper| match helper.managed_network.clone() {
            // The launcher's proxy (it may hold requests for the session's approval).
            Some(_) if helper.network_proxy_dir.is_some() => {
                let mount = airlock_linux_sandbox::ProxyMount {
                    socket_dir: helper.network_proxy_dir.clone().unwrap_or_default(),
                    bridge_exe: std::env::current_exe()
                        .context("cannot locate the airlock executable")?,
                };
                airlock_linux_sandbox::run_helper_with_proxy(&helper, None, &mount, false)
                    .map_err(anyhow::Error::from)
            }
            // The proxy lives in this process for as long as the command runs.
            Some(network) => {
                let proxy = crate::managed_network::RunningProxy::start(network)?;
                let result = airlock_linux_sandbox::run_helper_with_proxy(
                    &helper,
                    None,
                    &proxy.mount()?,
                    false,
                );
                proxy.finish();
                result.map_err(anyhow::Error::from)
            }
            None => airlock_linux_sandbox::run_helper(&helper).map_err(anyhow::Error::from),
        });
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprint!("{}", crate::format_error(&error));
            ExitCode::from(SETUP_FAILURE)
        }
    }
}
