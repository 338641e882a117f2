//! `airlock execpolicy check`: evaluate a command against `.rules` files, with the
//! same CLI shape and output as `codex execpolicy check` (spec 02, reference
//! `execpolicy.md` §1–2).
//!
//! Exit codes: 0 evaluated (whatever the decision), 1 a policy file failed to load,
//! 2 usage error.
//!
//! As in Codex (conformance case `cli-11`), the first token that is not one of this
//! command's options starts the command, even when it looks like an option: scripts written
//! for `codex execpolicy check` get the same answers. Unlike `exec`, where a mistyped option
//! would run something, this only evaluates; the `--help` text says so.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_execpolicy::{MatchOptions, PolicyParser};
use anyhow::Context;
use clap::{Args, Subcommand};

/// Arguments of `airlock execpolicy`.
#[derive(Debug, Args)]
pub struct ExecpolicyArgs {
    #[command(subcommand)]
    command: ExecpolicyCommand,
}

#[derive(Debug, Subcommand)]
enum ExecpolicyCommand {
    /// Evaluate a command against one or more `.rules` files and print the matches as JSON.
    ///
    /// Output: {"matchedRules":[{"prefixRuleMatch":{...}}],"decision":"allow|prompt|forbidden"},
    /// or {"matchedRules":[]} when no rule matches. Exit 0 when evaluated, 1 when a rules
    /// file cannot be loaded, 2 on usage errors.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// A `.rules` file to load (repeatable; loaded in the order given).
    #[arg(short = 'r', long = "rules", value_name = "PATH", required = true)]
    rules: Vec<PathBuf>,

    /// Pretty-print the JSON output.
    #[arg(long)]
    pretty: bool,

    /// When no rule matches the program token exactly, resolve it to an absolute path
    /// and fall back to rules for its basename (gated by `host_executable`).
    #[arg(long)]
    resolve_host_executables: bool,

    /// The command to evaluate (after `--`, or from the first token that is not an option).
    /// The first command token ends option parsing, and an unknown `--option` is such a token
    /// (as in Codex): `check -r R --prety -- ls` evaluates `--prety -- ls`.
    #[arg(
        value_name = "COMMAND",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<String>,
}

/// Runs `airlock execpolicy ...`.
pub fn run(args: ExecpolicyArgs) -> ExitCode {
    match args.command {
        ExecpolicyCommand::Check(check) => match run_check(&check) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                let code = crate::report_error(&error);
                // Codex's text above keeps its Rust debug form of the rule; say it for a
                // person too: the rule as written and where its call is (issue 17).
                if let Some(parse) = error
                    .chain()
                    .find_map(|cause| cause.downcast_ref::<airlock_execpolicy::ParseError>())
                    && let airlock_execpolicy::ParseError::Example(_) = parse
                {
                    eprintln!("note: {}", parse.for_people());
                }
                code
            }
        },
    }
}

fn run_check(args: &CheckArgs) -> anyhow::Result<()> {
    let mut parser = PolicyParser::new();
    for path in &args.rules {
        parser.load_file(path)?;
    }
    let policy = parser.build();
    let options = MatchOptions {
        resolve_host_executables: args.resolve_host_executables,
        resolution: None,
    };
    let evaluation = policy.check(&args.command, &options);
    let mut text = if args.pretty {
        serde_json::to_string_pretty(&evaluation)?
    } else {
        serde_json::to_string(&evaluation)?
    };
    text.push('\n');
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .context("failed to write to stdout")?;
    stdout.flush().context("failed to write to stdout")
}
