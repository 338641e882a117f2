//! Deny-read globs as Seatbelt regexes (reference `seatbelt.md` §4).
//!
//! The translation follows the glob dialect that `airlock-permissions` enforces in process
//! (`ReadDenyMatcher`: git-style, `*` and `?` within one component, `**` across components,
//! `\` escapes, `{a,b}` alternatives, unclosed `[` literal), so a path denied there is denied
//! here. Two deliberate differences from Codex, both stricter: a leading `^` in a class negates
//! it (as in the in-process matcher) instead of being a literal, and every regex also covers the
//! subtree below a match (`(/.*)?`), since a glob that matches a directory denies its contents.

use std::path::Path;

use super::paths::canonicalize_for_seatbelt;

/// Characters that start glob syntax; a pattern without any is a plain path.
const GLOB_SYNTAX: [char; 7] = ['*', '?', '[', ']', '{', '}', '\\'];

/// Characters escaped with `\` when they stand for themselves in the regex.
const REGEX_SPECIAL: &str = ".^$*+?()[]{}|\\";

/// The anchored regex for one absolute glob pattern: `^…(/.*)?$`.
///
/// `*` → `[^/]*`; `**/` → `(.*/)?`; other `**` → `.*`; `?` → `[^/]`; a closed `[...]` stays a
/// class (`!` or `^` first → negated, `\` doubled); an unclosed `[` and a stray `]` are
/// literals; `{a,b}` → `(a|b)`; `\x` → the literal `x`; anything else is escaped when special.
pub(crate) fn glob_to_regex(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::from("^");
    let mut index = 0;
    let mut brace_depth = 0usize;
    while let Some(&c) = chars.get(index) {
        index += 1;
        match c {
            '*' if chars.get(index) == Some(&'*') => {
                index += 1;
                if chars.get(index) == Some(&'/') {
                    index += 1;
                    out.push_str("(.*/)?");
                } else {
                    out.push_str(".*");
                }
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => match class_end(&chars, index) {
                Some(end) => {
                    push_class(&mut out, chars.get(index..end).unwrap_or_default());
                    index = end + 1;
                }
                None => push_literal(&mut out, '['),
            },
            '{' => {
                brace_depth += 1;
                out.push('(');
            }
            ',' if brace_depth > 0 => out.push('|'),
            '}' if brace_depth > 0 => {
                brace_depth -= 1;
                out.push(')');
            }
            '\\' => {
                if let Some(&escaped) = chars.get(index) {
                    index += 1;
                    push_literal(&mut out, escaped);
                } else {
                    push_literal(&mut out, '\\');
                }
            }
            other => push_literal(&mut out, other),
        }
    }
    // An unbalanced `{` never compiles in the in-process matcher (the policy is refused before
    // this point); close it anyway so the regex stays well formed.
    out.extend(std::iter::repeat_n(')', brace_depth));
    out.push_str("(/.*)?$");
    out
}

/// Index of the `]` closing a class whose body starts at `start`: a leading `!`/`^` and a
/// leading `]` belong to the body (git rules).
fn class_end(chars: &[char], start: usize) -> Option<usize> {
    let mut index = start;
    if matches!(chars.get(index), Some('!' | '^')) {
        index += 1;
    }
    if chars.get(index) == Some(&']') {
        index += 1;
    }
    chars
        .iter()
        .skip(index)
        .position(|&c| c == ']')
        .map(|offset| index + offset)
}

fn push_class(out: &mut String, body: &[char]) {
    out.push('[');
    let mut body = body;
    if let Some((first, rest)) = body.split_first()
        && matches!(first, '!' | '^')
    {
        out.push('^');
        body = rest;
    }
    for &c in body {
        if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    out.push(']');
}

fn push_literal(out: &mut String, c: char) {
    if REGEX_SPECIAL.contains(c) {
        out.push('\\');
    }
    out.push(c);
}

/// The pattern with its static prefix (the directories before the first component holding
/// glob syntax; the whole path when there is none) resolved through symlinks; `None` when the
/// resolved prefix is not UTF-8 (the regex as written still applies).
fn with_canonical_prefix(pattern: &str) -> Option<String> {
    let first_syntax = pattern.find(GLOB_SYNTAX).unwrap_or(pattern.len());
    let split = if first_syntax == pattern.len() {
        pattern.len()
    } else {
        pattern
            .get(..first_syntax)
            .and_then(|head| head.rfind('/'))
            .unwrap_or(0)
    };
    let (prefix, rest) = pattern.split_at(split);
    if prefix.is_empty() {
        return None;
    }
    let canonical = canonicalize_for_seatbelt(Path::new(prefix));
    canonical.to_str().map(|prefix| format!("{prefix}{rest}"))
}

/// The regexes for one pattern: as written, then with a canonical static prefix if that
/// differs (reference §4).
pub(crate) fn regexes_for_glob(pattern: &str) -> Vec<String> {
    let mut regexes = vec![glob_to_regex(pattern)];
    if let Some(canonical) = with_canonical_prefix(pattern).map(|p| glob_to_regex(&p))
        && !regexes.contains(&canonical)
    {
        regexes.push(canonical);
    }
    regexes
}

/// An SBPL regex literal, `#"…"`, with `"` escaped.
pub(crate) fn sbpl_regex(regex: &str) -> String {
    format!("#\"{}\"", regex.replace('"', "\\\""))
}

/// The deny-glob section: for every regex, deny reads and every kind of write (reference §4
/// denies reads and unlinking; Airlock denies all writes, as a `deny` entry means neither read
/// nor write). Empty without globs.
pub(crate) fn deny_glob_section(globs: &[String]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for pattern in globs {
        for regex in regexes_for_glob(pattern) {
            let literal = sbpl_regex(&regex);
            lines.push(format!("(deny file-read* (regex {literal}))"));
            lines.push(format!("(deny file-write* (regex {literal}))"));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "; deny-read globs, matched as regexes (exact deny paths are excluded above)\n{}\n",
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_stays_within_a_component() {
        assert_eq!(glob_to_regex("/ws/*.env"), r"^/ws/[^/]*\.env(/.*)?$");
    }

    #[test]
    fn double_star_slash_spans_zero_or_more_directories() {
        assert_eq!(
            glob_to_regex("/ws/**/*.pem"),
            r"^/ws/(.*/)?[^/]*\.pem(/.*)?$"
        );
    }

    #[test]
    fn trailing_double_star_matches_everything_below() {
        assert_eq!(glob_to_regex("/ws/secrets/**"), r"^/ws/secrets/.*(/.*)?$");
    }

    #[test]
    fn question_mark_is_one_non_separator() {
        assert_eq!(glob_to_regex("/ws/key?"), r"^/ws/key[^/](/.*)?$");
    }

    #[test]
    fn classes_are_kept_and_negated_with_bang_or_caret() {
        assert_eq!(glob_to_regex("/ws/[abc].txt"), r"^/ws/[abc]\.txt(/.*)?$");
        assert_eq!(glob_to_regex("/ws/[!a-z]"), r"^/ws/[^a-z](/.*)?$");
        assert_eq!(glob_to_regex("/ws/[^a]"), r"^/ws/[^a](/.*)?$");
        assert_eq!(glob_to_regex(r"/ws/[\x]"), r"^/ws/[\\x](/.*)?$");
        assert_eq!(glob_to_regex("/ws/[]]"), r"^/ws/[]](/.*)?$");
    }

    #[test]
    fn unclosed_and_stray_brackets_are_literals() {
        assert_eq!(glob_to_regex("/ws/a[b"), r"^/ws/a\[b(/.*)?$");
        assert_eq!(glob_to_regex("/ws/a]b"), r"^/ws/a\]b(/.*)?$");
    }

    #[test]
    fn braces_become_alternatives() {
        assert_eq!(
            glob_to_regex("/ws/*.{pem,key}"),
            r"^/ws/[^/]*\.(pem|key)(/.*)?$"
        );
        assert_eq!(glob_to_regex("/ws/a,b"), r"^/ws/a,b(/.*)?$");
    }

    #[test]
    fn backslash_escapes_the_next_character() {
        assert_eq!(glob_to_regex(r"/ws/\*literal"), r"^/ws/\*literal(/.*)?$");
    }

    #[test]
    fn plain_paths_cover_the_path_and_its_subtree() {
        assert_eq!(
            glob_to_regex("/ws/my.secret+1"),
            r"^/ws/my\.secret\+1(/.*)?$"
        );
    }

    #[test]
    fn quotes_are_escaped_in_the_literal() {
        assert_eq!(sbpl_regex(r#"^/ws/a"b$"#), r#"#"^/ws/a\"b$""#);
    }

    #[test]
    fn missing_prefix_gives_a_single_regex() {
        assert_eq!(
            regexes_for_glob("/nonexistent-airlock/**/*.env"),
            vec![r"^/nonexistent-airlock/(.*/)?[^/]*\.env(/.*)?$".to_owned()]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_prefix_adds_a_canonical_regex() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let canonical = std::fs::canonicalize(dir.path())?;
        std::fs::create_dir(dir.path().join("real"))?;
        std::os::unix::fs::symlink("real", dir.path().join("link"))?;
        let pattern = format!("{}/link/*.env", dir.path().display());
        let regexes = regexes_for_glob(&pattern);
        assert_eq!(regexes.len(), 2);
        assert_eq!(
            regexes.get(1).map(String::as_str),
            Some(glob_to_regex(&format!("{}/real/*.env", canonical.display())).as_str())
        );
        Ok(())
    }
}
