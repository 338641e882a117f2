//! Where a bracket left open at the end of a rules file was opened. Starlark (and therefore
//! Codex) reports such a file as "unexpected new line" at line 1, column 1 with an empty
//! excerpt; `execpolicy check` keeps that text for Codex compatibility, and the message for
//! people points at the real line (issue 17 item 8).

/// The 1-based line and the character of the last bracket (`(`, `[`, `{`) still open at the
/// end of `source`, skipping strings and comments; `None` when every bracket is closed.
pub(crate) fn last_unclosed_bracket(source: &str) -> Option<(usize, char)> {
    let mut open: Vec<(usize, char)> = Vec::new();
    let mut line = 1;
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '#' => {
                while chars.peek().is_some_and(|next| *next != '\n') {
                    chars.next();
                }
            }
            '"' | '\'' => {
                while let Some(inner) = chars.next() {
                    match inner {
                        '\\' if chars.next() == Some('\n') => line += 1,
                        '\\' => {}
                        '\n' => {
                            line += 1;
                            break;
                        }
                        quote if quote == c => break,
                        _ => {}
                    }
                }
            }
            '(' | '[' | '{' => open.push((line, c)),
            ')' | ']' | '}' => {
                open.pop();
            }
            _ => {}
        }
    }
    open.last().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_open_call() {
        let source =
            "# note (\nprefix_rule(pattern=[\"a\"])\n\nprefix_rule(\n    pattern = [\"b)\"],\n";
        assert_eq!(last_unclosed_bracket(source), Some((4, '(')));
        assert_eq!(last_unclosed_bracket("x = [1, 2]\n"), None);
        assert_eq!(last_unclosed_bracket("x = [1,\n"), Some((1, '[')));
    }
}
