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

use crate::literal::{Position, double_quoted_is_literal, unquoted_is_literal};
use crate::syntax::{children, named_children, text};

/// Codex's literal reading of an argument node. `None` means the node is not a plain
/// literal: an expansion, a substitution, an unsupported node kind, a concatenation that
/// reads as the empty string, or text that bash would turn into other words (globs,
/// brace expansion, `$`, disguising backslashes; see [`crate::literal`], finding F2).
pub(crate) fn plain_word(node: Node<'_>, src: &str) -> Option<String> {
    plain_piece(node, src, Position::Whole)
}

fn plain_piece(node: Node<'_>, src: &str, position: Position) -> Option<String> {
    match node.kind() {
        "word" | "number" => {
            let raw = text(node, src);
            (node.named_child_count() == 0 && unquoted_is_literal(raw, position))
                .then(|| raw.to_owned())
        }
        "string" => plain_double_quoted(node, src),
        "raw_string" => strip_delimiters(text(node, src), "'", "'").map(str::to_owned),
        "concatenation" if position == Position::Whole => {
            let mut joined = String::new();
            for (index, part) in named_children(node).into_iter().enumerate() {
                let position = if index == 0 {
                    Position::First
                } else {
                    Position::Later
                };
                let piece = match part.kind() {
                    "word" | "number" | "string" | "raw_string" => {
                        plain_piece(part, src, position)?
                    }
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
/// `string_content` (no `$VAR`, `${..}`, `$(..)` inside) and the content has no
/// expansion or line continuation that tree-sitter left in it; its value is the raw text
/// between the quotes.
fn plain_double_quoted(node: Node<'_>, src: &str) -> Option<String> {
    if named_children(node)
        .iter()
        .any(|part| part.kind() != "string_content")
    {
        return None;
    }
    strip_delimiters(text(node, src), "\"", "\"")
        .filter(|content| double_quoted_is_literal(content))
        .map(str::to_owned)
}

fn strip_delimiters<'s>(raw: &'s str, open: &str, close: &str) -> Option<&'s str> {
    raw.strip_prefix(open)?.strip_suffix(close)
}

/// Deny-view words are cut at this many bytes. Rules never name such long tokens, and
/// the cut keeps the view linear in the script's size: without it, nested substitutions
/// (`$( $( $( ...`) would copy the rest of the script once per level. Commands inside a
/// long word are still found by the tree walk itself.
pub(crate) const MAX_LOOSE_WORD_BYTES: usize = 4096;

/// The deny view's reading of any argument-like node: quotes removed, backslash escapes
/// resolved the way bash resolves them in that quoting context, and every expansion or
/// substitution kept as its source text (cut at [`MAX_LOOSE_WORD_BYTES`]). Never fails.
pub(crate) fn loose_word(node: Node<'_>, src: &str) -> String {
    let raw = bounded(text(node, src));
    match node.kind() {
        "word" | "number" => unescape_unquoted(raw),
        "string" => {
            let inner = raw.strip_prefix('"').unwrap_or(raw);
            unescape_double_quoted(inner.strip_suffix('"').unwrap_or(inner))
        }
        "raw_string" => strip_delimiters(raw, "'", "'").unwrap_or(raw).to_owned(),
        "ansi_c_string" => decode_ansi_c(strip_delimiters(raw, "$'", "'").unwrap_or(raw)),
        "translated_string" => {
            let inner = raw.strip_prefix("$\"").unwrap_or(raw);
            unescape_double_quoted(inner.strip_suffix('"').unwrap_or(inner))
        }
        "concatenation" | "command_name" => {
            let mut joined = String::new();
            for part in children(node) {
                if joined.len() >= MAX_LOOSE_WORD_BYTES {
                    break;
                }
                // Anonymous pieces (rare) are kept verbatim so nothing is dropped.
                if part.is_named() {
                    joined.push_str(&loose_word(part, src));
                } else {
                    joined.push_str(bounded(text(part, src)));
                }
            }
            bounded(&joined).to_owned()
        }
        _ => raw.to_owned(),
    }
}

/// `raw` cut to at most [`MAX_LOOSE_WORD_BYTES`] bytes, at a character boundary.
fn bounded(raw: &str) -> &str {
    if raw.len() <= MAX_LOOSE_WORD_BYTES {
        return raw;
    }
    let mut end = MAX_LOOSE_WORD_BYTES;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    raw.get(..end).unwrap_or_default()
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

/// The value of a `$'...'` string: bash's backslash escapes resolved (`\x72m` → `rm`,
/// octal, `\u`/`\U`, `\cX`, the C escapes; issue 18 item 2). An escape that names no
/// character (`\u{d800}`, past U+10FFFF) is dropped, as bash drops it.
pub(crate) fn decode_ansi_c(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut digits = |radix: u32, max: usize, first: Option<char>| {
            let mut value: u32 = 0;
            let mut count = 0;
            if let Some(first) = first.and_then(|first| first.to_digit(radix)) {
                value = first;
                count = 1;
            }
            while count < max {
                match chars.peek().and_then(|next| next.to_digit(radix)) {
                    Some(digit) => {
                        value = value.saturating_mul(radix).saturating_add(digit);
                        count += 1;
                        chars.next();
                    }
                    None => break,
                }
            }
            (count > 0).then_some(value)
        };
        let decoded = match escape {
            'a' => Some(0x07),
            'b' => Some(0x08),
            'e' | 'E' => Some(0x1b),
            'f' => Some(0x0c),
            'n' => Some(0x0a),
            'r' => Some(0x0d),
            't' => Some(0x09),
            'v' => Some(0x0b),
            '\\' | '\'' | '"' | '?' => Some(u32::from(escape)),
            'x' => digits(16, 2, None),
            'u' => digits(16, 4, None),
            'U' => digits(16, 8, None),
            '0'..='7' => digits(8, 3, Some(escape)),
            'c' => chars.next().map(|control| u32::from(control) & 0x1f),
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        match decoded {
            Some(value) => out.extend(char::from_u32(value)),
            // `\x` without digits stays as written.
            None => {
                out.push('\\');
                out.push(escape);
            }
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
    fn ansi_c_strings_are_decoded() {
        assert_eq!(decode_ansi_c(r"\x72m"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"\u0072\U0000006d"), "rm");
        assert_eq!(decode_ansi_c(r"a\tb\'c\\"), "a\tb'c\\");
        assert_eq!(decode_ansi_c(r"\x"), r"\x");
        assert_eq!(decode_ansi_c(r"\q\"), r"\q\");
    }

    #[test]
    fn long_words_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_LOOSE_WORD_BYTES);
        let cut = bounded(&long);
        assert!(cut.len() <= MAX_LOOSE_WORD_BYTES);
        assert!(cut.len() > MAX_LOOSE_WORD_BYTES - 2);
    }

    #[test]
    fn double_quoted_backslashes_escape_only_special_characters() {
        assert_eq!(unescape_double_quoted(r#"\"x\" \$y \n"#), r#""x" $y \n"#);
    }
}
