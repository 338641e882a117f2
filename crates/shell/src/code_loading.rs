//! Environment variables that make a program load or run code chosen by whoever sets
//! them (spec 03 "Policy evaluation" item 4 and edge case 14).
//!
//! A command that assigns one of them — as a prefix (`LD_PRELOAD=x ls`), through `env` or
//! `sudo`, or with `export`/`declare`/`typeset`/`local` anywhere in the script — is never
//! auto-allowed: at least `prompt`.

use crate::deny::EnvAssignment;

/// Exactly named code-loading variables (spec 03 "Policy evaluation" item 4).
const EXACT: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "NODE_OPTIONS",
    "RUBYOPT",
    // The `GIT_*` members, exactly as spec 03 edge case 14 lists them.
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// Code-loading variable families, by prefix (spec 03 item 4 and edge case 14).
const PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"];

/// Whether assigning the environment variable `name` can make a program load or run
/// code (spec 03 "Policy evaluation" item 4, edge case 14). Case-sensitive, as the
/// environment is.
pub fn is_code_loading_variable(name: &str) -> bool {
    EXACT.contains(&name) || PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

/// The assignments among `assignments` that name a code-loading variable, including
/// `export NAME` without a value (spec 03 edge cases 14 and 22).
pub fn code_loading_assignments(assignments: &[EnvAssignment]) -> Vec<&EnvAssignment> {
    assignments
        .iter()
        .filter(|assignment| is_code_loading_variable(&assignment.name))
        .collect()
}
