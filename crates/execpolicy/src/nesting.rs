//! A cheap lexical pre-check that rejects `.rules` sources nested so deeply that the
//! Starlark parser would exhaust the stack (which aborts the process instead of
//! returning an error). Real policies nest a few levels; the limit is generous.

/// Deepest bracket nesting (or longest run of unary `-`/`+`/`~`) accepted.
pub const MAX_NESTING: usize = 200;

/// The 1-based line where nesting first exceeds [`MAX_NESTING`], if it does.
/// Strings (single, double, triple-quoted, with escapes) and comments are skipped.
pub fn first_too_deep_line(source: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let (mut i, mut line, mut depth, mut unary_run) = (0usize, 1usize, 0usize, 0usize);
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => line += 1,
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                let triple = bytes.get(i..i + 3).is_some_and(|s| s == [b, b, b]);
                i += if triple { 3 } else { 1 };
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 1,
                        b'\n' => line += 1,
                        c if c == b
                            && (!triple || bytes.get(i..i + 3).is_some_and(|s| s == [b, b, b])) =>
                        {
                            i += if triple { 3 } else { 1 };
                            break;
                        }
                        _ => {}
                    }
                    i += 1;
                }
                unary_run = 0;
                continue;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(line);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if matches!(b, b'-' | b'+' | b'~') {
            unary_run += 1;
            if unary_run > MAX_NESTING {
                return Some(line);
            }
        } else if !b.is_ascii_whitespace() {
            unary_run = 0;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_normal_sources_and_ignores_strings_and_comments() {
        assert_eq!(
            first_too_deep_line("prefix_rule(pattern=[\"a\", [\"b\"]])\n"),
            None
        );
        let brackets_in_strings = format!(
            "x = \"{}\"\n# {}\ny = '''{}'''\n",
            "(".repeat(500),
            "[".repeat(500),
            "{".repeat(500)
        );
        assert_eq!(first_too_deep_line(&brackets_in_strings), None);
    }

    #[test]
    fn rejects_deep_brackets_and_unary_chains_with_the_line() {
        let deep = format!(
            "a = 1\nx = {}{}\n",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        assert_eq!(first_too_deep_line(&deep), Some(2));
        let unary = format!("\n\nx = {}1\n", "- ".repeat(MAX_NESTING + 1));
        assert_eq!(first_too_deep_line(&unary), Some(3));
    }
}
