//! `airlock`: decides whether an agent's command may run, who must agree, and how it
//! is confined. Each subcommand lives in its own module; `main` only parses
//! arguments and dispatches, so start-up does no work before clap has run.

mod apply_patch_cmd;
mod apply_patch_helper;
mod common;
mod doctor_cmd;
mod exec_cmd;
mod exec_server_cmd;
mod execpolicy_cmd;
mod explain_cmd;
mod hook_cmd;
mod instructions_cmd;
mod managed_network;
mod mcp_cmd;
mod network_approval;
mod permissions_cmd;
mod program;
mod sandbox_cmd;
mod serve_cmd;
mod session_setup;
mod terminal_text;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Approval, policy and sandboxing for commands proposed by AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "airlock", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Exec-policy (`.rules`) tools.
    Execpolicy(execpolicy_cmd::ExecpolicyArgs),
    /// Permission profiles: show the compiled, materialised profile.
    Permissions(permissions_cmd::PermissionsArgs),
    /// The `<permissions instructions>` text for the model, or its update after a snapshot.
    Instructions(instructions_cmd::InstructionsArgs),
    /// Run a command under a permission profile's sandbox and exit with its status.
    ///
    /// Exit status: the command's own (128+N when killed by signal N); 125 when Airlock
    /// cannot confine it as the profile requires (nothing ran); 127 when the command is
    /// not found, 126 when it is not executable; 2 for usage errors.
    Sandbox(sandbox_cmd::SandboxArgs),
    /// Check that this host can enforce the sandbox; prints the fix for each failure.
    ///
    /// Exit status: 0 when every check is ok; 1 when any check FAILs (each FAIL line is
    /// followed by its fix).
    Doctor(doctor_cmd::DoctorArgs),
    /// Explain what `exec` would decide for a command, without running it.
    Explain(explain_cmd::ExplainArgs),
    /// Run a command through policy, approval and the sandbox (the main job); exits with its
    /// status, 127 / 126 when the program is not found / not executable, or 125 when Airlock
    /// refuses.
    Exec(exec_cmd::ExecArgs),
    /// Apply an apply_patch patch through approval, policy and the sandbox; exits 0 when
    /// applied, 1 when the patch failed (nothing changed), 125 when Airlock refuses.
    ApplyPatch(apply_patch_cmd::ApplyPatchArgs),
    /// MCP server on stdio: sandboxed `shell` and `apply_patch` tools, approvals through
    /// elicitation (spec 13).
    Mcp(mcp_cmd::McpArgs),
    /// Decide a harness's pre-tool hook (Claude Code, Gemini CLI) from Airlock's policy;
    /// reads the event on stdin, never runs the command (spec 13).
    Hook(hook_cmd::HookArgs),
    /// The JSON-RPC app server for harnesses (stdio, or `--listen unix:PATH`).
    Serve(serve_cmd::ServeArgs),
    /// Write the JSON Schema of the app server's messages (`--out DIR`).
    Schema(serve_cmd::SchemaArgs),
    /// Run commands and file operations for a remote environment under this host's own
    /// sandbox (stdio, `ws://ADDR:PORT` or `unix:PATH`).
    ExecServer(exec_server_cmd::ExecServerArgs),
}

fn main() -> ExitCode {
    // The sandbox helper is internal and hot: dispatch it before clap.
    let mut raw = std::env::args_os();
    let first = raw.nth(1);
    if first
        .as_ref()
        .is_some_and(|first| airlock_linux_sandbox::args::is_helper_subcommand(first))
    {
        return sandbox_cmd::run_helper_subcommand(raw);
    }
    // The in-sandbox network bridge and the ssh ProxyCommand connector (spec 12).
    if first
        .as_ref()
        .is_some_and(|first| first == airlock_linux_sandbox::bridge::BRIDGE_SUBCOMMAND)
    {
        let code = airlock_linux_sandbox::bridge::run_bridge_subcommand(raw);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if first
        .as_ref()
        .is_some_and(|first| first == airlock_linux_sandbox::bridge::PROXY_CONNECT_SUBCOMMAND)
    {
        let code = airlock_linux_sandbox::bridge::run_proxy_connect(raw);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // The per-user nested-repository index daemon (started by a launch, detached).
    if first.as_ref().is_some_and(|first| {
        first == airlock_linux_sandbox::nested_index::daemon::DAEMON_SUBCOMMAND
    }) {
        let code = airlock_linux_sandbox::nested_index::daemon::run_daemon_subcommand(raw);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // The sandboxed child that applies a patch (spec 11 §Enforcement).
    if first.is_some_and(|first| first == airlock_core::apply_patch::APPLY_PATCH_HELPER_SUBCOMMAND)
    {
        return apply_patch_helper::run();
    }
    let command = parse_hot(std::env::args_os().collect()).unwrap_or_else(|| Cli::parse().command);
    match command {
        Command::Execpolicy(args) => execpolicy_cmd::run(args),
        Command::Permissions(args) => permissions_cmd::run(args),
        Command::Instructions(args) => instructions_cmd::run(args),
        Command::Sandbox(args) => sandbox_cmd::run(args),
        Command::Doctor(args) => doctor_cmd::run(args),
        Command::Explain(args) => explain_cmd::run(args),
        Command::Exec(args) => exec_cmd::run(args),
        Command::ApplyPatch(args) => apply_patch_cmd::run(args),
        Command::Mcp(args) => mcp_cmd::run(args),
        Command::Hook(args) => hook_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Schema(args) => serve_cmd::run_schema(args),
        Command::ExecServer(args) => exec_server_cmd::run(args),
    }
}

/// `airlock sandbox …` and `airlock exec …` start every confined command, so they are
/// parsed with only their own subcommand built: building every subcommand's arguments
/// costs about 0.2 ms of each launch. Anything but a clean parse (`--help`, a usage
/// error, another subcommand) gives `None`, and the full parse then handles it as it
/// always did: help, errors and exit codes come from the whole command tree.
fn parse_hot(argv: Vec<std::ffi::OsString>) -> Option<Command> {
    match argv.get(1)?.to_str()? {
        "sandbox" => parse_one(argv, "sandbox").map(Command::Sandbox),
        "exec" => parse_one(argv, "exec").map(Command::Exec),
        _ => None,
    }
}

fn parse_one<A: clap::Args + clap::FromArgMatches>(
    argv: Vec<std::ffi::OsString>,
    name: &'static str,
) -> Option<A> {
    let matches = clap::Command::new("airlock")
        .subcommand(A::augment_args(clap::Command::new(name)))
        .try_get_matches_from(argv)
        .ok()?;
    let (_, sub) = matches.subcommand()?;
    A::from_arg_matches(sub).ok()
}

/// Prints `error` the way anyhow-based tools do (`Error: msg`, then an indented
/// `Caused by:` chain) and returns the exit code for "input could not be used".
pub(crate) fn report_error(error: &anyhow::Error) -> ExitCode {
    eprint!("{}", format_error(error));
    ExitCode::from(1)
}

/// `Error: <msg>` plus, when there are causes, a blank line and `Caused by:` with each
/// cause indented by four spaces (numbered when there are several) — the layout of
/// `codex execpolicy check` errors. Never a backtrace: `RUST_BACKTRACE` is for
/// debugging Airlock, not for reading why a rules file was refused.
pub(crate) fn format_error(error: &anyhow::Error) -> String {
    let mut out = format!("Error: {error}\n");
    let causes: Vec<String> = error.chain().skip(1).map(ToString::to_string).collect();
    if !causes.is_empty() {
        out.push_str("\nCaused by:\n");
        for (i, cause) in causes.iter().enumerate() {
            let prefix = if causes.len() > 1 {
                format!("{i}: ")
            } else {
                String::new()
            };
            for (n, line) in cause.split('\n').enumerate() {
                let lead = if n == 0 {
                    prefix.clone()
                } else {
                    " ".repeat(prefix.len())
                };
                out.push_str(&format!("    {lead}{line}\n"));
            }
        }
    }
    // Errors name paths and commands the agent chose: no control character reaches the
    // terminal (issue 17).
    terminal_text::lines(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(argv: &[&str]) -> Option<String> {
        Cli::try_parse_from(argv)
            .ok()
            .map(|cli| format!("{:?}", cli.command))
    }

    fn hot(argv: &[&str]) -> Option<String> {
        parse_hot(argv.iter().map(Into::into).collect()).map(|c| format!("{c:?}"))
    }

    #[test]
    fn the_hot_parse_gives_what_the_full_parse_gives() {
        let cases: &[&[&str]] = &[
            &["airlock", "sandbox", "--", "/bin/true"],
            &[
                "airlock",
                "sandbox",
                "-P",
                ":workspace",
                "-C",
                "/tmp",
                "--",
                "ls",
                "-la",
            ],
            &[
                "airlock",
                "sandbox",
                "-c",
                "a.b=1",
                "--dry-run",
                "--save-fds",
                "/x",
                "--",
                "true",
            ],
            &[
                "airlock",
                "sandbox",
                "--use-legacy-landlock",
                "echo",
                "-n",
                "hi",
            ],
            &["airlock", "exec", "--", "git", "status"],
            &[
                "airlock",
                "exec",
                "-v",
                "-P",
                ":read-only",
                "-r",
                "/x.rules",
                "--",
                "ls",
            ],
            &[
                "airlock", "exec", "-a", "never", "--", "sh", "-c", "echo hi",
            ],
        ];
        for argv in cases {
            let want = full(argv);
            assert!(want.is_some(), "{argv:?} should parse");
            assert_eq!(hot(argv), want, "{argv:?}");
        }
    }

    #[test]
    fn anything_but_a_clean_parse_is_left_to_the_full_parse() {
        let cases: &[&[&str]] = &[
            &["airlock", "sandbox", "--help"],
            &["airlock", "sandbox"],
            &["airlock", "sandbox", "--bogus", "--", "true"],
            &["airlock", "exec", "-h"],
            &["airlock", "exec", "--version"],
            &["airlock", "doctor"],
            &["airlock", "--version"],
            &["airlock"],
        ];
        for argv in cases {
            assert_eq!(hot(argv), None, "{argv:?}");
        }
    }
}
