//! Known-safe commands (`is_known_safe_command`): read-only commands that may run
//! without asking (spec 03 "Known-safe commands", reference §4).

mod builtin_list;
mod extra;
mod program;

use std::collections::BTreeSet;

pub use extra::{ExtraSafeCommand, ExtraSafeCommandError};
pub use program::{TRUSTED_PROGRAM_DIRS, is_trusted_program_path};

use crate::danger::command_might_be_dangerous;
use crate::deny::basename;
use crate::plain::parse_plain_commands;
use crate::wrapper::{WrapperForm, extract_shell_wrapper};

/// Inputs of the known-safe check that come from configuration and policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SafeCommandOptions {
    /// `[shell] extra_safe_commands` from the configuration (spec 03, spec 10).
    pub extra_safe_commands: Vec<ExtraSafeCommand>,
    /// Absolute program paths registered with `host_executable` in the exec policy;
    /// they count as trustworthy program paths (spec 03 edge case 10).
    pub host_executables: BTreeSet<String>,
}

/// Codex's `is_known_safe_command` with Airlock's rules (spec 03 "Known-safe commands",
/// edge cases 9 and 10).
///
/// `argv` is safe when either
/// - it is itself safe ([`is_safe_to_call_with_exec`]), or
/// - it is an exact shell wrapper `[shell, -c|-lc, script]` whose script is plain and
///   every plain segment is safe (heredoc and other non-plain scripts never are).
///
/// An empty argv is not safe.
pub fn is_known_safe_command(argv: &[String], options: &SafeCommandOptions) -> bool {
    if is_safe_to_call_with_exec(argv, options) {
        return true;
    }
    let Some(wrapper) = extract_shell_wrapper(argv) else {
        return false;
    };
    if wrapper.form != WrapperForm::Exact {
        return false;
    }
    parse_plain_commands(wrapper.script).is_some_and(|segments| {
        segments
            .iter()
            .all(|segment| is_safe_to_call_with_exec(segment, options))
    })
}

/// Whether one argv, run directly, is safe: the program path is trustworthy
/// ([`is_trusted_program_path`], spec 03 edge case 10) and its basename with its
/// arguments passes Codex's built-in list (reference §4, spec 03 edge case 9) or matches
/// an `extra_safe_commands` entry. Extra entries never vouch for a command that
/// [`command_might_be_dangerous`] flags, so a broad entry such as `git` cannot make
/// `git push --force` safe.
pub fn is_safe_to_call_with_exec(argv: &[String], options: &SafeCommandOptions) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    if argv.iter().any(|token| token.contains('\0')) {
        // No process can receive such an argument; not a command we can vouch for.
        return false;
    }
    if builtin_list::is_builtin_safe(basename(program), argv)
        && is_trusted_program_path(program, &options.host_executables)
    {
        return true;
    }
    options.extra_safe_commands.iter().any(|entry| {
        let explicit_path = entry
            .prefix()
            .first()
            .is_some_and(|word| word.contains('/'));
        entry.matches(argv)
            && (explicit_path || is_trusted_program_path(program, &options.host_executables))
    }) && !command_might_be_dangerous(argv)
}
