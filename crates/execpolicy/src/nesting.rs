//! A cheap lexical measure of how deep a `.rules` source's syntax tree can get, so that
//! the Starlark parser and compiler (which recurse, and abort the whole process on a
//! stack overflow instead of returning an error) never run out of stack. Two shapes
//! make deep trees: nested brackets (and runs of unary `-`/`+`/`~`), and long operator
//! chains in one statement (`"a" + "a" + ...`, `not not ...`, `a.b.c...`,
//! `x if c else y if ...`, `lambda: lambda: ...`), each operator adding one level.
//!
//! Sources past [`MAX_NESTING`] / [`MAX_OPERATORS`] are refused. Sources past
//! [`IN_PLACE_LIMIT`] are still accepted, but `PolicyParser` evaluates them on a thread
//! with a [`DEEP_SOURCE_STACK`] stack: measured on a debug build, each level can take
//! tens of KiB of stack, so a few hundred levels overflow an ordinary 2 MiB thread.
//! Real policies nest a few levels and chain a handful of operators.

/// Deepest bracket nesting (or longest run of unary `-`/`+`/`~`) accepted.
pub const MAX_NESTING: usize = 200;

/// Most operator characters and operator keywords accepted in one statement.
pub const MAX_OPERATORS: usize = 1000;

/// Deepest nesting and longest operator chain evaluated on the caller's own stack
/// (measured safe on a 2 MiB thread in a debug build, with margin).
pub const IN_PLACE_LIMIT: usize = 32;

/// Stack size of the thread that evaluates deeper sources: enough for [`MAX_NESTING`]
/// plus [`MAX_OPERATORS`] levels in a debug build (~40 KiB per level measured), with
/// margin. Only touched pages are ever backed by memory.
pub const DEEP_SOURCE_STACK: usize = 256 << 20;

/// How deep a source gets, as far as the lexer can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Depth {
    /// Deepest bracket nesting or longest unary run.
    pub nesting: usize,
    /// Most operators in one statement.
    pub operators: usize,
}

impl Depth {
    /// Whether evaluating on an ordinary thread's stack is safe.
    pub fn fits_in_place(self) -> bool {
        self.nesting <= IN_PLACE_LIMIT && self.operators <= IN_PLACE_LIMIT
    }
}

/// Which limit a source exceeds, and the 1-based line where it first does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooDeep {
    /// Brackets (or unary operators) nest more than [`MAX_NESTING`] levels.
    Nesting(usize),
    /// One statement chains more than [`MAX_OPERATORS`] operators.
    Operators(usize),
}

/// Keywords that build one more expression level each.
const OPERATOR_KEYWORDS: &[&[u8]] = &[
    b"and", b"or", b"not", b"if", b"else", b"lambda", b"in", b"is",
];

/// The first limit `source` exceeds, if any; else how deep it gets. Strings (single,
/// double, triple-quoted, with escapes) and comments are skipped. A statement ends at
/// a newline outside brackets that does not follow a `\` continuation.
///
/// # Errors
/// The [`TooDeep`] limit passed first, with its line.
pub fn measure(source: &str) -> Result<Depth, TooDeep> {
    let bytes = source.as_bytes();
    let (mut i, mut line, mut depth, mut unary_run) = (0usize, 1usize, 0usize, 0usize);
    let mut operators = 0usize;
    let mut continued = false;
    // The last significant byte: `(`/`[` right after a name, a closing bracket or a
    // string is a call or an index, which nests like a binary operator
    // (`x[0][0]...`, `f()()...`); after anything else it opens a literal or a group.
    let mut last = b'\n';
    let mut deepest = Depth::default();
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line += 1;
                if depth == 0 && !continued {
                    operators = 0;
                }
            }
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
                continued = false;
                last = b'"';
                continue;
            }
            b'(' | b'['
                if last.is_ascii_alphanumeric() || matches!(last, b'_' | b')' | b']' | b'"') =>
            {
                operators += 1;
                depth += 1;
                deepest.nesting = deepest.nesting.max(depth);
                if depth > MAX_NESTING {
                    return Err(TooDeep::Nesting(line));
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest.nesting = deepest.nesting.max(depth);
                if depth > MAX_NESTING {
                    return Err(TooDeep::Nesting(line));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'+' | b'-' | b'*' | b'/' | b'%' | b'|' | b'&' | b'^' | b'<' | b'>' | b'!' | b'.'
            | b'~' => operators += 1,
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                if OPERATOR_KEYWORDS.contains(&&bytes[start..i]) {
                    operators += 1;
                }
                deepest.operators = deepest.operators.max(operators);
                if operators > MAX_OPERATORS {
                    return Err(TooDeep::Operators(line));
                }
                unary_run = 0;
                continued = false;
                last = b'a';
                continue;
            }
            _ => {}
        }
        deepest.operators = deepest.operators.max(operators);
        if operators > MAX_OPERATORS {
            return Err(TooDeep::Operators(line));
        }
        if matches!(b, b'-' | b'+' | b'~') {
            unary_run += 1;
            deepest.nesting = deepest.nesting.max(unary_run);
            if unary_run > MAX_NESTING {
                return Err(TooDeep::Nesting(line));
            }
        } else if !b.is_ascii_whitespace() {
            unary_run = 0;
        }
        if !b.is_ascii_whitespace() {
            continued = b == b'\\';
            last = b;
        }
        i += 1;
    }
    Ok(deepest)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn accepts_normal_sources_and_ignores_strings_and_comments() {
        let plain = measure("prefix_rule(pattern=[\"a\", [\"b\"]])\n").unwrap();
        assert_eq!(
            plain,
            Depth {
                nesting: 3,
                operators: 1
            }
        );
        assert!(plain.fits_in_place());
        let brackets_in_strings = format!(
            "x = \"{}\"\n# {}\ny = '''{}'''\n",
            "(".repeat(500),
            "[".repeat(500),
            "{".repeat(500)
        );
        assert_eq!(measure(&brackets_in_strings), Ok(Depth::default()));
        let operators_in_strings =
            format!("x = \"{}\"\n# {}\n", "+".repeat(5000), " and".repeat(5000));
        assert_eq!(measure(&operators_in_strings), Ok(Depth::default()));
        // Many statements with a few operators each are fine.
        let many = "prefix_rule(pattern=[\"a\" + \"b\"], justification=\"x\" * 3)\n".repeat(5000);
        assert_eq!(
            measure(&many),
            Ok(Depth {
                nesting: 2,
                operators: 3
            })
        );
        // Big literals: brackets that open lists are not calls or indexes.
        let examples = format!(
            "prefix_rule(pattern=[\"git\"], match=[{}])\n",
            "[\"git\", \"a\"], ".repeat(5000)
        );
        assert_eq!(
            measure(&examples),
            Ok(Depth {
                nesting: 3,
                operators: 1
            })
        );
        // Words that merely contain a keyword are not operators.
        let words = format!("x = [{}]\n", "\"a\", ".repeat(3000).replace('a', "android"));
        assert_eq!(measure(&words).map(|d| d.operators), Ok(0));
        // Deep but within the limits: accepted, evaluated off the caller's stack.
        let deep = format!("x = 1{}\n", " + 1".repeat(IN_PLACE_LIMIT + 1));
        assert!(!measure(&deep).unwrap().fits_in_place());
    }

    #[test]
    fn rejects_deep_brackets_and_unary_chains_with_the_line() {
        let deep = format!(
            "a = 1\nx = {}{}\n",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        assert_eq!(measure(&deep), Err(TooDeep::Nesting(2)));
        let unary = format!("\n\nx = {}1\n", "- ".repeat(MAX_NESTING + 1));
        assert_eq!(measure(&unary), Err(TooDeep::Nesting(3)));
    }

    #[test]
    fn rejects_long_operator_chains_even_across_lines() {
        let n = MAX_OPERATORS + 1;
        for (source, line) in [
            (format!("x = \"a\"{}\n", " + \"a\"".repeat(n)), 1),
            (format!("x = {}True\n", "not ".repeat(n)), 1),
            (format!("x = a{}\n", ".b".repeat(n)), 1),
            (format!("x = {}1\n", "lambda: ".repeat(n)), 1),
            (format!("x = {}1\n", "1 if True else ".repeat(n)), 1),
            (format!("x = True{}\n", " and True".repeat(n)), 1),
            (format!("x = [1]{}\n", "[0:1]".repeat(n)), 1),
            (format!("x = f{}\n", "()".repeat(n)), 1),
            // Inside brackets and after `\` continuations the statement goes on.
            (
                format!("x = (\n{})\n", "1 +\n".repeat(n)),
                MAX_OPERATORS + 2,
            ),
            (
                format!("x = 1 {}\n", "+ 1 \\\n".repeat(n)),
                MAX_OPERATORS + 1,
            ),
        ] {
            assert_eq!(
                measure(&source),
                Err(TooDeep::Operators(line)),
                "{}",
                &source[..40]
            );
        }
    }
}
