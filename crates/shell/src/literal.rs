//! Whether bash passes a piece of word text through unchanged (red-team finding F2).
//!
//! The plain view reads words as written (Codex, reference §2). That is only sound when
//! bash's expansions leave the word alone: a glob (`*`, `?`, `[…]`, extglob `@(…)`), a
//! brace expansion (`{a,b}`, `{e..e}`), a parameter or command substitution (`$x`,
//! `$(…)`, `` `…` ``, `$((…))`), a process substitution, an escaped ordinary character
//! (`-exe\c` runs as `-exec`) or a line continuation inside a word all make bash run other
//! words than the text shows, possibly more of them (a planted file named `-exec` turns
//! `find . -exe?` into `find . -exec`). Such words make a script not plain (spec 03 "Two
//! views" item 1: only words bash does not change count as literal), which only ever makes
//! a decision stricter.
//!
//! Two spellings that bash does change stay literal because spec 03 and its conformance
//! cases read them so: a leading `~` or `~/` (decision 8 matches `~` and `~/` as written;
//! it expands to `$HOME`, one absolute path, never an option or several words), and a
//! backslash before a character that needs quoting (`a\ b`, `\;`: the segment keeps the
//! backslash, as Codex does; bash only drops the quoting).

/// Characters that need a backslash to be literal outside quotes. A backslash before one of
/// them only quotes it; before any other character it is a disguise bash drops.
const QUOTABLE: &[char] = &[
    ' ', '\t', '|', '&', ';', '(', ')', '<', '>', '\'', '"', '\\', '`', '$', '*', '?', '[', ']',
    '{', '}', '~', '#', '!',
];

/// Where an unquoted piece of text stands in its argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    /// The whole argument is this one unquoted piece.
    Whole,
    /// The first piece of a concatenation (`~`-expansion may apply, brace pairs may span
    /// the quoted pieces after it).
    First,
    /// A later piece of a concatenation.
    Later,
}

/// Whether bash leaves the unquoted text `raw` (the source text of a `word` or `number`
/// node) unchanged apart from the quoting kept on purpose (see the module docs).
///
/// Refuses unquoted `*`, `?`, `[`, `{` (except the whole word `{}`, which bash and `find`
/// keep as is), `$`, `` ` ``, `(`, `)`, `<`, `>`, `|`, `&`, `;`, a backslash before an
/// ordinary character or a newline, and any `~` other than a leading `~` / `~/` (after `=`
/// or `:` bash expands it in assignment-like words: `x=~`).
pub(crate) fn unquoted_is_literal(raw: &str, position: Position) -> bool {
    if position == Position::Whole && raw == "{}" {
        return true;
    }
    let mut chars = raw.chars().peekable();
    if raw.starts_with('~') {
        let leading_home = (position == Position::Whole && raw == "~")
            || (position != Position::Later && raw.starts_with("~/"));
        if !leading_home {
            return false;
        }
        chars.next();
    }
    let mut previous = None;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(quoted) if QUOTABLE.contains(&quoted) => {
                    previous = Some(quoted);
                    continue;
                }
                _ => return false,
            },
            '*' | '?' | '[' | '{' | '$' | '`' | '(' | ')' | '<' | '>' | '|' | '&' | ';' | '\n' => {
                return false;
            }
            '~' if matches!(previous, Some('=' | ':')) => return false,
            _ => {}
        }
        previous = Some(c);
    }
    true
}

/// Whether bash leaves the content of a double-quoted string (between the quotes) as it is
/// apart from the backslashes kept on purpose: no `$`, no `` ` `` and no line continuation
/// (`"fi\<newline>nd"` is `find`).
pub(crate) fn double_quoted_is_literal(content: &str) -> bool {
    let mut chars = content.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                None | Some('\n') => return false,
                Some(_) => {}
            },
            '$' | '`' => return false,
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_literal() {
        for word in [
            "ls", "-la", "HEAD~1", "a=b", "--x=y", "}", "]", "!", "a#b", "é", "{}",
        ] {
            assert!(unquoted_is_literal(word, Position::Whole), "{word}");
        }
    }

    #[test]
    fn a_leading_home_tilde_is_kept() {
        assert!(unquoted_is_literal("~", Position::Whole));
        assert!(unquoted_is_literal("~/src", Position::Whole));
        assert!(unquoted_is_literal("~/", Position::First));
        for word in ["~root", "~+", "~-", "~1", "x=~", "a=b:~", "~x/y"] {
            assert!(!unquoted_is_literal(word, Position::Whole), "{word}");
        }
        assert!(!unquoted_is_literal("~", Position::First));
        assert!(!unquoted_is_literal("~/x", Position::Later));
    }

    #[test]
    fn expanding_text_is_not_literal() {
        for word in [
            "*", "-r?", "[ab]", "a{b,c}", "{e..e}", "{}x", "a{}b,c}", "$x", "a$", "`id`", "@(a)",
            "-exe\\c", "\\rm", "of\\=x", "a\\\nb", "a\\",
        ] {
            assert!(!unquoted_is_literal(word, Position::Whole), "{word:?}");
        }
    }

    #[test]
    fn quoting_backslashes_are_kept() {
        for word in ["a\\ b", "\\;", "\\*", "\\{a,b}", "\\~", "\\$x", "\\\\"] {
            assert!(unquoted_is_literal(word, Position::Whole), "{word:?}");
        }
    }

    #[test]
    fn double_quoted_content() {
        assert!(double_quoted_is_literal("a b * ? {a,b} ~"));
        assert!(double_quoted_is_literal("\\\" \\\\ \\$ \\q"));
        assert!(!double_quoted_is_literal("$x"));
        assert!(!double_quoted_is_literal("`id`"));
        assert!(!double_quoted_is_literal("fi\\\nnd"));
    }
}
