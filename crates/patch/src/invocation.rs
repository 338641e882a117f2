//! Recognising an `apply_patch` call inside a shell-tool argv (spec 11 §Where a patch comes
//! from; reference §A5).
//!
//! Recognised, exactly as Codex does: `[apply_patch|applypatch, PATCH]`;
//! `[bash|zsh|sh, -c|-lc, SCRIPT]` where the script is `apply_patch <<DELIM … DELIM` or
//! `cd DIR && apply_patch <<DELIM … DELIM` (DIR one bare, `"double"` or `'single'` word). Any
//! other script is not a patch call (it runs as an ordinary, policed command). Airlock reads
//! the script with a small exact recogniser instead of a full Bash parse: everything it does
//! not fully understand is "not apply_patch", which only ever sends the call down the
//! stricter command path.

use std::path::PathBuf;

use crate::parser::parse_patch;

/// The program names that mean "apply this patch".
pub const APPLY_PATCH_COMMANDS: [&str; 2] = ["apply_patch", "applypatch"];

/// Codex's message for a bare patch sent as a command (reference §A5).
pub const IMPLICIT_INVOCATION_MESSAGE: &str =
    "patch detected without explicit call to apply_patch. Rerun as [\"apply_patch\", \"<patch>\"]";

/// What a shell-tool argv is, as far as `apply_patch` goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyPatchInvocation {
    /// An `apply_patch` call: the patch text and the `cd` directory (relative to the call's
    /// cwd), if the script had one.
    Patch {
        /// The patch text (a heredoc body has its trailing newlines trimmed).
        patch: String,
        /// The `cd DIR` of `cd DIR && apply_patch …`.
        workdir: Option<PathBuf>,
    },
    /// The argv is a patch without the command (reference §A5 `ImplicitInvocation`).
    Implicit,
    /// An ordinary command.
    NotApplyPatch,
}

/// Classifies a shell-tool argv (reference §A5 "Accepted argv forms").
#[must_use]
pub fn maybe_parse_apply_patch(argv: &[String]) -> ApplyPatchInvocation {
    match argv {
        [name, patch] if APPLY_PATCH_COMMANDS.contains(&name.as_str()) => {
            ApplyPatchInvocation::Patch {
                patch: patch.clone(),
                workdir: None,
            }
        }
        [only] if parse_patch(only).is_ok() => ApplyPatchInvocation::Implicit,
        [shell, flag, script] if is_shell(shell) && (flag == "-c" || flag == "-lc") => {
            if let Some((workdir, patch)) = parse_script(script) {
                ApplyPatchInvocation::Patch { patch, workdir }
            } else if parse_patch(script).is_ok() {
                ApplyPatchInvocation::Implicit
            } else {
                ApplyPatchInvocation::NotApplyPatch
            }
        }
        _ => ApplyPatchInvocation::NotApplyPatch,
    }
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    let stem = name.split('.').next().unwrap_or(name).to_ascii_lowercase();
    matches!(stem.as_str(), "bash" | "zsh" | "sh")
}

/// `[cd DIR && ]apply_patch <<DELIM\n…\nDELIM` and nothing else (trailing blank lines allowed).
fn parse_script(script: &str) -> Option<(Option<PathBuf>, String)> {
    let (first, rest) = script.split_once('\n')?;
    let first = first.trim();
    let (workdir, command) = match first.strip_prefix("cd ") {
        Some(after_cd) => {
            let (dir, command) = after_cd.split_once("&&")?;
            (
                Some(PathBuf::from(cd_argument(dir.trim())?)),
                command.trim(),
            )
        }
        None => (None, first),
    };
    let mut words = command.split_whitespace();
    let name = words.next()?;
    if !APPLY_PATCH_COMMANDS.contains(&name) {
        return None;
    }
    let delimiter = heredoc_delimiter(words.next()?)?;
    if words.next().is_some() {
        return None;
    }
    let mut body = Vec::new();
    let mut lines = rest.split('\n');
    loop {
        let line = lines.next()?;
        if line == delimiter {
            break;
        }
        body.push(line);
    }
    if lines.any(|line| !line.trim().is_empty()) {
        return None;
    }
    Some((workdir, body.join("\n").trim_end_matches('\n').to_owned()))
}

/// `<<WORD`, `<<'WORD'` or `<<"WORD"` → `WORD` (no `<<-`, no expansions in the word).
fn heredoc_delimiter(token: &str) -> Option<&str> {
    let word = token.strip_prefix("<<")?;
    let bare = ['\'', '"']
        .iter()
        .find_map(|quote| word.strip_prefix(*quote)?.strip_suffix(*quote))
        .unwrap_or(word);
    let plain = !bare.is_empty() && bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then_some(bare)
}

/// One `cd` argument: a bare word without shell specials, `'single'`, or `"double"` without
/// expansions. `cd -P x`, `cd a b` and anything else → `None`.
fn cd_argument(text: &str) -> Option<String> {
    if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return (!inner.contains('\'')).then(|| inner.to_owned());
    }
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        let plain = !inner.chars().any(|c| matches!(c, '"' | '$' | '`' | '\\'));
        return plain.then(|| inner.to_owned());
    }
    let plain = !text.is_empty()
        && !text.starts_with('-')
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '/' | '.' | '_' | '-' | '+' | ',' | '@' | ':' | '~')
        })
        && !text.starts_with('~');
    plain.then(|| text.to_owned())
}
