//! Where bash ends each heredoc, checked against tree-sitter's reading (finding F3).
//!
//! tree-sitter-bash and bash disagree on some heredocs: a partly quoted delimiter
//! (`<<E"O"F` ends at the line `EOF` for bash, at `E"O"F` for tree-sitter), a line
//! continuation in an unquoted body (`EO\<newline>F` is the delimiter for bash), several
//! heredocs on one line. Where they disagree, text bash runs as commands is read as body
//! text, or the other way round; no view may then trust the tree. [`heredocs_read_as_bash`]
//! recomputes bash's reading of every heredoc from the source and accepts the tree only
//! when it agrees; anything it cannot model exactly counts as a disagreement (fail closed).

use tree_sitter::Node;

use crate::syntax::{children, has_syntax_error, text};

/// Whether every `heredoc_redirect` in the tree rooted at `root` ends where bash ends it.
///
/// For each heredoc: the delimiter is the `heredoc_start` word after quote removal (a
/// word with `$` or `` ` `` is not modelled); its body starts on the line after the
/// command line, which must close every quote on that line and hold no further heredoc,
/// substitution, parenthesis or backslash; bash ends the body at the first line equal to
/// the delimiter (after leading tabs for `<<-`). tree-sitter's `heredoc_end` must be that
/// line and its body must lie before it. An unterminated heredoc, an unquoted body with a
/// line continuation before its end, and a script with a heredoc operator and a syntax
/// error (the recovered tree may have lost a heredoc node) count as a disagreement.
pub(crate) fn heredocs_read_as_bash(root: Node<'_>, src: &str) -> bool {
    // Error recovery may drop or cut a heredoc node; then no node shows where bash ends
    // the body (finding F4).
    if has_heredoc_operator(src) && has_syntax_error(root) {
        return false;
    }
    // Nested heredocs (in substitutions inside a body) scan overlapping lines; past this
    // many bytes in all the script is not modelled (linear work for any input).
    let mut scan_budget = src.len().saturating_mul(SCAN_FACTOR);
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "heredoc_redirect" && !redirect_read_as_bash(node, src, &mut scan_budget)
        {
            return false;
        }
        stack.extend(children(node));
    }
    true
}

/// [`heredocs_read_as_bash`] scans at most this many times the script's length.
const SCAN_FACTOR: usize = 4;

/// Whether `src` contains a heredoc operator `<<` or `<<-` (not the here-string `<<<`),
/// quoted or not.
fn has_heredoc_operator(src: &str) -> bool {
    let bytes = src.as_bytes();
    src.match_indices("<<").any(|(at, _)| {
        bytes.get(at + 2) != Some(&b'<') && (at == 0 || bytes.get(at - 1) != Some(&b'<'))
    })
}

/// One `heredoc_redirect` node against bash's reading (see [`heredocs_read_as_bash`]).
fn redirect_read_as_bash(redirect: Node<'_>, src: &str, scan_budget: &mut usize) -> bool {
    let mut strip_tabs = false;
    let mut start = None;
    let mut body = None;
    let mut end = None;
    for child in children(redirect) {
        match child.kind() {
            "<<-" => strip_tabs = true,
            "heredoc_start" => start = Some(child),
            "heredoc_body" | "simple_heredoc_body" => body = Some(child),
            "heredoc_end" => end = Some(child),
            _ => {}
        }
    }
    let (Some(start), Some(end)) = (start, end) else {
        return false;
    };
    let Some((delimiter, quoted)) = bash_delimiter(text(start, src)) else {
        return false;
    };
    let Some(body_start) = first_body_line(src, start.end_byte()) else {
        return false;
    };
    let Some(marker) = terminator(src, body_start, &delimiter, strip_tabs, quoted) else {
        return false;
    };
    let scanned = marker.end.saturating_sub(start.start_byte());
    let Some(left) = scan_budget.checked_sub(scanned) else {
        return false;
    };
    *scan_budget = left;
    end.start_byte() == marker.start
        && end.end_byte() == marker.end
        && body
            .is_none_or(|body| body.start_byte() >= body_start && body.end_byte() <= marker.start)
}

/// The delimiter bash compares body lines with (the word after quote removal) and whether
/// any part of the word was quoted (then the body is literal text). `None` for a word this
/// model does not read: one with `$`, `` ` ``, a newline or an unclosed quote.
fn bash_delimiter(word: &str) -> Option<(String, bool)> {
    if word.contains(['$', '`', '\n']) {
        return None;
    }
    let mut delimiter = String::with_capacity(word.len());
    let mut quoted = false;
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                quoted = true;
                delimiter.push(chars.next()?);
            }
            '\'' => {
                quoted = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        inner => delimiter.push(inner),
                    }
                }
            }
            '"' => {
                quoted = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => {
                            let escaped = chars.next()?;
                            if !matches!(escaped, '"' | '\\') {
                                delimiter.push('\\');
                            }
                            delimiter.push(escaped);
                        }
                        inner => delimiter.push(inner),
                    }
                }
            }
            _ => delimiter.push(c),
        }
    }
    Some((delimiter, quoted))
}

/// Where the first body starts: just after the newline that ends the command line from
/// `from` on. `None` when that line is not simple enough to know (an unclosed quote, a
/// backslash, a substitution or parenthesis, another heredoc) or has no newline.
fn first_body_line(src: &str, from: usize) -> Option<usize> {
    let rest = src.get(from..)?;
    let bytes = rest.as_bytes();
    let mut quote: Option<u8> = None;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match (quote, byte) {
            (_, b'\n') if quote.is_some() => return None,
            (Some(open), _) if byte == open => quote = None,
            (Some(b'"'), b'\\' | b'`') => return None,
            (Some(b'"'), b'$') if bytes.get(at + 1) == Some(&b'(') => return None,
            (Some(_), _) => {}
            (None, b'\n') => return Some(from + at + 1),
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'\\' | b'`' | b'(' | b')') => return None,
            (None, b'$') if bytes.get(at + 1) == Some(&b'(') => return None,
            (None, b'<') if bytes.get(at + 1) == Some(&b'<') => {
                if bytes.get(at + 2) != Some(&b'<') {
                    return None;
                }
                at += 2;
            }
            (None, b'#') if at == 0 || matches!(bytes.get(at - 1), Some(b' ' | b'\t')) => {
                let newline = rest.get(at..)?.find('\n')?;
                return Some(from + at + newline + 1);
            }
            (None, _) => {}
        }
        at += 1;
    }
    None
}

/// The byte range of the delimiter on the line that ends a body.
struct Marker {
    start: usize,
    end: usize,
}

/// The first line from `body_start` on that bash takes as the end of the body. `None`
/// when no line does (bash reads to the end of the script) or, for an unquoted body, a
/// line continuation comes first (bash joins the lines before comparing).
fn terminator(
    src: &str,
    body_start: usize,
    delimiter: &str,
    strip_tabs: bool,
    quoted: bool,
) -> Option<Marker> {
    let mut line_start = body_start;
    loop {
        let rest = src.get(line_start..)?;
        let line = rest.split('\n').next().unwrap_or_default();
        let candidate = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        if candidate == delimiter {
            let end = line_start + line.len();
            return Some(Marker {
                start: end - candidate.len(),
                end,
            });
        }
        if !quoted && line.ends_with('\\') {
            return None;
        }
        if line.len() == rest.len() {
            return None;
        }
        line_start += line.len() + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredoc_operators_are_told_from_here_strings() {
        assert!(has_heredoc_operator("cat <<EOF"));
        assert!(has_heredoc_operator("cat <<-EOF"));
        assert!(!has_heredoc_operator("cat <<< x"));
        assert!(!has_heredoc_operator("cat < x"));
    }

    #[test]
    fn delimiters_lose_their_quotes() {
        assert_eq!(bash_delimiter("EOF"), Some(("EOF".to_owned(), false)));
        assert_eq!(bash_delimiter("'EOF'"), Some(("EOF".to_owned(), true)));
        assert_eq!(bash_delimiter("E\"O\"F"), Some(("EOF".to_owned(), true)));
        assert_eq!(bash_delimiter("\\EOF"), Some(("EOF".to_owned(), true)));
        assert_eq!(bash_delimiter("'E F'"), Some(("E F".to_owned(), true)));
        assert_eq!(bash_delimiter("E$F"), None);
        assert_eq!(bash_delimiter("'EOF"), None);
    }

    #[test]
    fn the_body_starts_after_a_simple_command_line() {
        assert_eq!(first_body_line("EOF\nx", 0), Some(4));
        assert_eq!(first_body_line(" > 'a b' | wc\nx", 0), Some(14));
        assert_eq!(first_body_line(" # it's\nx", 0), Some(8));
        assert_eq!(first_body_line(" <<<x\nx", 0), Some(6));
        assert_eq!(first_body_line(" <<B\nx", 0), None);
        assert_eq!(first_body_line(" 'a\nb'\nx", 0), None);
        assert_eq!(first_body_line(" $(x\n)\nx", 0), None);
        assert_eq!(first_body_line(")\nx", 0), None);
        assert_eq!(first_body_line("", 0), None);
    }

    #[test]
    fn the_first_matching_line_ends_the_body() {
        let src = "a\nEOF \nEOF\nEOF";
        let marker = terminator(src, 0, "EOF", false, false).unwrap();
        assert_eq!((marker.start, marker.end), (7, 10));
        let tabs = "a\n\t\tEOF\n";
        let marker = terminator(tabs, 0, "EOF", true, false).unwrap();
        assert_eq!((marker.start, marker.end), (4, 7));
        assert!(terminator("a\n\tEOF", 0, "EOF", false, false).is_none());
        assert!(terminator("EO\\\nF\nEOF", 0, "EOF", false, false).is_none());
        assert!(terminator("EO\\\nF\nEOF", 0, "EOF", false, true).is_some());
    }
}
