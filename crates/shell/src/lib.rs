//! Airlock's shell layer: from one proposed argv to the commands it would run.
//!
//! Owns (spec `03-shell.md`, reference `shell-parsing-and-heuristics.md`):
//! - shell-wrapper detection (`bash`/`zsh`/`sh`/`dash`/`ksh`, `-c`/`-lc` and the longer
//!   forms of edge cases 2 and 20): [`extract_shell_wrapper`];
//! - the **plain view**: Codex-compatible word-only segments joined by `&&`, `||`, `;`,
//!   `|`, with harmless redirects allowed (edge cases 6, 22): [`parse_plain_commands`];
//! - Codex's heredoc single-command fallback (edge case 5);
//! - the **deny view**: every command the shell could execute, through subshells,
//!   substitutions, control flow, functions, exec wrappers and nested shells, with a
//!   depth limit: [`deny_view`];
//! - the segmentation result combining both: [`parse_command`] → [`ParsedCommand`];
//! - heuristics: [`is_known_safe_command`], [`command_might_be_dangerous`],
//!   [`is_code_loading_variable`].
//!
//! Must not: evaluate exec-policy rules, decide approval or sandboxing (the requirement
//! computation consumes [`ParsedCommand`] and the verdicts), or touch the filesystem.
//!
//! The deny view also reads (issue 18): unquoted heredoc bodies as shell code, `coproc`,
//! `trap` actions, `find -exec`-style actions, `watch`/`flock -c` scripts, brace
//! expansion, ANSI-C quoting and `$IFS` in script words, git global options and `-c`
//! aliases; a script piped into a shell is unknown code ([`Note::UnknownCode`]), with
//! printed literal words (`echo '…' | sh`) read as its script.
//!
//! The plain view takes a word as written only when bash passes it on unchanged (red-team
//! finding F2: globs, brace expansion, tilde forms other than `~`/`~/`, `$`, disguising
//! backslashes and line continuations make a script non-plain), only when tree-sitter
//! splits the script into the commands and words bash does, and never after tree-sitter's
//! error recovery or with a reserved word as a command name (F4). Heredocs are checked
//! against bash's reading of their delimiter and end; a disagreement leaves the deny view
//! incomplete (F3).
//!
//! Current limitations (the deny view is best-effort text, spec 03 "Two views"):
//! commands hidden behind variables (`$CMD push`), shell aliases, `source`d files and
//! what a pipe feeds a shell beyond literal `echo`/`printf` words are not seen.
//! Everything here only ever makes a decision stricter; fail-closed functions return
//! `Option`, where `None` means "not safely understood".

#![deny(missing_docs)]

mod argv;
mod code_loading;
mod danger;
mod deny;
mod error;
mod git;
mod heredoc;
mod heredoc_bounds;
mod literal;
mod notes;
mod parsed;
mod plain;
mod redirect;
mod safe;
mod syntax;
mod words;
mod wrapper;

pub use argv::{argv_from_os, validate_argv};
pub use code_loading::{code_loading_assignments, is_code_loading_variable};
pub use danger::{
    DANGER_PATTERNS, DangerFinding, DangerPattern, command_might_be_dangerous,
    find_dangerous_command,
};
pub use deny::{
    AssignmentKind, DEFAULT_MAX_DEPTH, DenyView, EXEC_WRAPPERS, EnvAssignment, InnerCommand,
    Unwrapped, Via, basename, deny_view, deny_view_with_depth, is_exec_wrapper,
    unwrap_exec_wrapper,
};
pub use error::{Result, ShellError};
pub use heredoc::parse_shell_lc_single_command_prefix;
pub use notes::{NotPlainReason, Note};
pub use parsed::{ParsedCommand, SegmentSource, parse_command, parse_command_with_depth};
pub use plain::{parse_plain_commands, parse_shell_lc_plain_commands};
pub use safe::{
    ExtraSafeCommand, ExtraSafeCommandError, SafeCommandOptions, TRUSTED_PROGRAM_DIRS,
    is_known_safe_command, is_safe_to_call_with_exec, is_trusted_program_path,
};
pub use syntax::{MAX_SCRIPT_BYTES, PARSE_TIME_BACKSTOP, PARSE_WORK_BUDGET_TICKS};
pub use wrapper::{
    ShellType, ShellWrapper, WrapperForm, detect_shell_type, extract_bash_command,
    extract_shell_wrapper,
};
