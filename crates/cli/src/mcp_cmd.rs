//! `airlock mcp`: placeholder until the MCP server lands.

use clap::Args;
use std::process::ExitCode;

/// Arguments of `airlock mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {}

/// Runs `airlock mcp`.
pub fn run(_args: McpArgs) -> ExitCode {
    eprintln!("airlock mcp: not built yet");
    ExitCode::from(1)
}
