//! `canonicalize_command_for_approval`: one cache key for equivalent spellings of one command
//! (spec 06 §Session cache, spec 03 §Canonical command for the approval cache).

use airlock_shell::WrapperForm;

/// The marker that stands in for "some shell" in the canonical form of a non-plain script.
pub const SHELL_SCRIPT_MARKER: &str = "__shell_script__";

/// The canonical form of `command` for approval cache keys (spec 03 §Canonical command):
/// - an exact wrapper `[shell, -c|-lc, script]` whose script is exactly one plain segment →
///   that segment's words (`bash -lc "ls -la"`, `/bin/zsh -c 'ls -la'` and `ls -la` share a key);
/// - any other exact wrapper → `["__shell_script__", flag, script]`, so the same script under
///   `bash`, `zsh` or `/bin/sh` shares a key while `-c` and `-lc` (a login shell reads profile
///   files) stay distinct;
/// - everything else, including longer wrapper forms whose positional parameters change what the
///   script does → the argv unchanged.
///
/// Nothing else is normalised: two commands share a key only if they run the same words.
#[must_use]
pub fn canonicalize_command_for_approval(command: &[String]) -> Vec<String> {
    let Some(wrapper) = airlock_shell::extract_shell_wrapper(command) else {
        return command.to_vec();
    };
    if wrapper.form != WrapperForm::Exact {
        return command.to_vec();
    }
    if let Some(mut segments) = airlock_shell::parse_plain_commands(wrapper.script)
        && segments.len() == 1
        && let Some(single) = segments.pop()
    {
        return single;
    }
    vec![
        SHELL_SCRIPT_MARKER.to_owned(),
        wrapper.flag.to_owned(),
        wrapper.script.to_owned(),
    ]
}
