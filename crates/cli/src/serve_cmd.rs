//! `airlock serve` (the JSON-RPC app server, spec 10 §JSON-RPC app server) and `airlock schema
//! --out DIR` (its JSON Schema). The server itself is crate `airlock-app-server`; this module
//! gives it the CLI's way of building sessions and running `explain`, `instructions` and
//! `sandbox` ([`backend::CliBackend`]).

mod backend;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

/// Arguments of `airlock serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen: `stdio` (default: one client on stdin/stdout) or `unix:PATH` (a Unix
    /// socket created with mode 0600; one connection per client).
    #[arg(long, value_name = "ADDR", default_value = "stdio")]
    listen: String,
}

/// Arguments of `airlock schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The directory to write the schema files into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Runs `airlock serve`.
pub fn run(args: ServeArgs) -> ExitCode {
    crate::exec_cmd::install_warning_printer();
    // What the server inherited beyond stdin, stdout and stderr (a harness's sockets and
    // files) reaches none of the commands it starts, unsandboxed ones included. Before
    // Linux 5.11 (no `close_range`) they keep what they inherit, as from a shell.
    #[cfg(target_os = "linux")]
    let _ = airlock_sandbox::keep_only_in_child(&[]);
    // A long-running server keeps one nested-repository index in process.
    airlock_linux_sandbox::nested_index::enable_in_process();
    let backend = match backend::CliBackend::new() {
        Ok(backend) => Arc::new(backend),
        Err(error) => return crate::report_error(&error),
    };
    let result = if args.listen == "stdio" || args.listen == "stdio://" {
        airlock_app_server::run_stdio(backend)
    } else if let Some(path) = args.listen.strip_prefix("unix:") {
        let path = path.strip_prefix("//").unwrap_or(path);
        airlock_app_server::run_unix(std::path::Path::new(path), backend)
    } else {
        eprintln!(
            "Error: --listen {}: use `stdio` or `unix:PATH`",
            args.listen
        );
        return ExitCode::from(2);
    };
    // The placeholders its launches left in /tmp for the index to remove (none is in use
    // any more: every command of every connection has ended).
    airlock_linux_sandbox::nested_index::keeper::sweep_all();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => crate::report_error(&anyhow::Error::new(error).context("airlock serve")),
    }
}

/// Runs `airlock schema --out DIR`.
pub fn run_schema(args: SchemaArgs) -> ExitCode {
    match airlock_app_server_protocol::schema::write_schema(&args.out) {
        Ok(written) => {
            println!(
                "wrote {} schema files to {} (bundle: {})",
                written.len(),
                args.out.display(),
                airlock_app_server_protocol::schema::BUNDLE_FILE
            );
            ExitCode::SUCCESS
        }
        Err(error) => crate::report_error(
            &anyhow::Error::new(error).context(format!("cannot write {}", args.out.display())),
        ),
    }
}
