//! Turning word-like syntax nodes into argv tokens.
//!
//! Two readings exist on purpose:
//! - [`plain_word`] is Codex's strict reading for the plain view (reference §2): literal
//!   words, numbers, quoted strings without expansions and concatenations of those; the
//!   text is taken as written (no backslash unescaping), and anything else is refused.
//! - [`loose_word`] is the deny view's best-effort reading (spec 03 "Two views", item 2):
//!   never refuses, strips quoting the way bash would so that `'g'it` or `\git` still read
//!   as `git`, and keeps expansions as their literal text.

use tree_sitter::Node;

use crate::syntax::{children, named_children, text};

/// Codex's literal reading of an argument node. `None` means the node is not a plain
/// literal (an expansion, a substitution, an unsupported node kind, or a concatenation
/// that reads as the empty string).
pub(crate) fn plain_word(node: Node<'_>, src: &str) -> Option<String> {
    match node.kind() {
        "word" | "number" => Some(text(node, src).to_owned()),
        "string" => plain_double_quoted(node, src),
        "raw_string" => strip_delimiters(text(node, src), "'", "'").map(str::to_owned),
        "concatenation" => {
            let mut joined = String::new();
            for part in named_children(node) {
                let piece = match part.kind() {
                    "word" | "number" | "string" | "raw_string" => plain_word(part, src)?,
                    _ => return None,
                };
                joined.push_str(&piece);
            }
            (!joined.is_empty()).then_some(joined)
        }
        _ => None,
    }
}

/// A double-quoted string counts as literal only when every named child is
/// `string_content` (no `$VAR`, `${..}`, `$(..)` inside); its value is the raw text
/// between the quotes.
fn plain_double_quoted(node: Node<'_>, src: &str) -> Option<String> {
    if named_children(node)
        .iter()
        .any(|part| part.kind() != "string_content")
    {
        return None;
    }
    strip_delimiters(text(node, src), "\"", "\"").map(str::to_owned)
}

fn strip_delimiters<'s>(raw: &'s str, open: &str, close: &str) -> Option<&'s str> {
    raw.strip_prefix(open)?.strip_suffix(close)
}

/// The deny view's reading of any argument-like node: quotes removed, backslash escapes
/// resolved the way bash resolves them in that quoting context, and every expansion or
/// substitution kept as its source text. Never fails.
pub(crate) fn loose_word(node: Node<'_>, src: &str) -> String {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" => unescape_unquoted(raw),
        "string" => {
            let inner = strip_delimiters(raw, "\"", "\"").unwrap_or(raw);
            unescape_double_quoted(inner)
        }
        "raw_string" => strip_delimiters(raw, "'", "'").unwrap_or(raw).to_owned(),
        "ansi_c_string" => strip_delimiters(raw, "$'", "'").unwrap_or(raw).to_owned(),
        "translated_string" => {
            let inner = strip_delimiters(raw, "$\"", "\"").unwrap_or(raw);
            unescape_double_quoted(inner)
        }
        "concatenation" | "command_name" => {
            // Anonymous pieces (rare) are kept verbatim so nothing is dropped.
            children(node)
                .into_iter()
                .map(|part| {
                    if part.is_named() {
                        loose_word(part, src)
                    } else {
                        text(part, src).to_owned()
                    }
                })
                .collect()
        }
        _ => raw.to_owned(),
    }
}

/// Outside quotes a backslash quotes the next character, and backslash-newline is a
/// line continuation that disappears.
fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&next @ ('$' | '`' | '"' | '\\')) => {
                    chars.next();
                    out.push(next);
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoted_backslashes_quote_the_next_character() {
        assert_eq!(unescape_unquoted(r"\git"), "git");
        assert_eq!(unescape_unquoted(r"a\ b"), "a b");
        assert_eq!(unescape_unquoted("a\\\nb"), "ab");
        assert_eq!(unescape_unquoted(r"a\\b"), r"a\b");
    }

    #[test]
    fn double_quoted_backslashes_escape_only_special_characters() {
        assert_eq!(unescape_double_quoted(r#"\"x\" \$y \n"#), r#""x" $y \n"#);
    }
}
