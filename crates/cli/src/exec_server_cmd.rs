//! `airlock exec-server` (spec 09): runs commands and file operations for a remote
//! environment under this host's own sandbox. The server is crate `airlock-exec-server`; this
//! module parses the flags and gives it this binary as the Linux sandbox helper.

use std::path::PathBuf;
use std::process::ExitCode;

use airlock_exec_server::Listen;
use airlock_exec_server::ServerOptions;
use airlock_exec_server::TokenDigest;
use clap::Args;

/// Arguments of `airlock exec-server`.
#[derive(Debug, Args)]
pub struct ExecServerArgs {
    /// Where to listen: `stdio` (one client on stdin/stdout), `ws://ADDR:PORT` (WebSocket; a
    /// non-loopback ADDR needs --ws-token-file) or `unix:PATH` (a socket created with mode 0600).
    #[arg(long, value_name = "URL", default_value = "stdio")]
    listen: String,
    /// A file holding the bearer token WebSocket clients must send (`Authorization: Bearer`).
    #[arg(long, value_name = "FILE")]
    ws_token_file: Option<PathBuf>,
}

/// Runs `airlock exec-server`.
pub fn run(args: ExecServerArgs) -> ExitCode {
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => crate::report_error(&error.context("airlock exec-server")),
    }
}

fn serve(args: ExecServerArgs) -> anyhow::Result<()> {
    let listen = Listen::parse(&args.listen)?;
    let token = args
        .ws_token_file
        .as_deref()
        .map(TokenDigest::from_file)
        .transpose()?;
    // Refused before anything listens (spec 09: a non-loopback listener needs a token).
    listen.check_token(token.as_ref())?;
    let config =
        airlock_permissions::load_config(&airlock_permissions::ConfigEnv::from_process(), &[])
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    let manager = airlock_sandbox::SandboxManager {
        bwrap_path: airlock_sandbox::bwrap_path_from_config(&config.table)?,
        ..airlock_sandbox::SandboxManager::default()
    };
    let options = ServerOptions {
        manager,
        linux_helper: Some(std::env::current_exe()?),
        token,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(airlock_exec_server::serve(listen, options))?;
    Ok(())
}
