//! The hidden `airlock __apply-patch` subcommand: the sandboxed child that applies one
//! verified patch (request JSON on stdin; spec 11 §Enforcement). Never run it by hand.

use std::io::Write as _;
use std::process::ExitCode;

/// Runs the child: reads the request from stdin, prints the summary or the error, exits 0 / 1.
pub fn run() -> ExitCode {
    let outcome = airlock_core::apply_patch::run_helper(&mut std::io::stdin().lock());
    let _ = std::io::stdout().write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    ExitCode::from(outcome.exit_code)
}
