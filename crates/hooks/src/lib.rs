//! Airlock as the policy engine behind another harness's own pre-tool hook (spec 13
//! §`airlock hook claude-code` and `airlock hook gemini`).
//!
//! Owns:
//! - the hook event payloads Airlock understands ([`event`]): Claude Code `PreToolUse` and
//!   `PermissionRequest` for tool `Bash`, Gemini CLI `BeforeTool` for `run_shell_command`;
//! - the policy verdict of the command ([`decide`]): the same requirement computation as
//!   `airlock explain` (rules, shell splitting, heuristics, profile);
//! - the mapping of that verdict to each harness's answer ([`answer`]), and the settings
//!   snippet that installs the hook ([`install`]).
//!
//! Must not: run the command (the harness does), prompt anyone (the harness shows its own
//! prompt), or ever answer "allow" because of its own error: a payload or configuration it
//! cannot use gives *no decision* and a line on stderr (never block the harness on Airlock's
//! error, never allow on it either).

#![deny(missing_docs)]

pub mod answer;
pub mod decide;
pub mod event;
pub mod install;

pub use answer::{Answer, answer_for, no_decision};
pub use decide::{DecideSettings, PolicyVerdict, VerdictKind, decide};
pub use event::{Harness, HookEvent, HookEventKind, PayloadError, parse_event};
pub use install::print_config;
