//! Prefix patterns: what one `prefix_rule` matches, position by position.

use std::fmt;

use crate::canonical::canonical_key;

/// One pattern position after the first: a literal token or a set of alternatives.
///
/// The `Debug` form (`Single("x")`, `Alts(["a", "b"])`) appears in example
/// validation errors and is kept identical to Codex's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternToken {
    /// Exactly this token.
    Single(String),
    /// Any one of these tokens (never empty).
    Alts(Vec<String>),
}

impl PatternToken {
    /// Every token accepted at this position, in declaration order.
    pub fn alternatives(&self) -> &[String] {
        match self {
            Self::Single(token) => std::slice::from_ref(token),
            Self::Alts(tokens) => tokens,
        }
    }
}

/// A complete prefix: the literal program token plus the remaining positions.
///
/// A command matches when it has at least `len()` tokens and every position
/// matches (reference `execpolicy.md` §5.2). With `canonical_matching` each
/// position compares canonical caseless keys instead of bytes (§5.1).
#[derive(Clone, PartialEq, Eq)]
pub struct PrefixPattern {
    /// Compare tokens by canonical caseless match instead of byte equality.
    pub canonical_matching: bool,
    /// The program token; rules are grouped by it.
    pub first: String,
    /// Positions 1.. of the pattern.
    pub rest: Vec<PatternToken>,
    /// Canonical keys per position (0 = `first`), present iff `canonical_matching`.
    folded: Option<Vec<Vec<String>>>,
}

impl PrefixPattern {
    /// Builds a pattern; the canonical keys are computed once here, not per check.
    pub fn new(first: String, rest: Vec<PatternToken>, canonical_matching: bool) -> Self {
        let folded = canonical_matching.then(|| {
            std::iter::once(vec![canonical_key(&first)])
                .chain(rest.iter().map(|tok| {
                    tok.alternatives()
                        .iter()
                        .map(|t| canonical_key(t))
                        .collect()
                }))
                .collect()
        });
        Self {
            canonical_matching,
            first,
            rest,
            folded,
        }
    }

    /// Number of tokens this pattern consumes.
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    /// Always false: a pattern has at least its program token.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `argv` starts with this prefix. `argv[0]` is compared with `first`
    /// (callers may substitute a resolved basename there).
    pub fn matches(&self, argv: &[String]) -> bool {
        if argv.len() < self.len() {
            return false;
        }
        match &self.folded {
            None => {
                argv[0] == self.first
                    && self
                        .rest
                        .iter()
                        .zip(&argv[1..])
                        .all(|(pat, tok)| pat.alternatives().iter().any(|alt| alt == tok))
            }
            Some(folded) => folded.iter().zip(argv).all(|(keys, tok)| {
                let key = canonical_key(tok);
                keys.contains(&key)
            }),
        }
    }
}

impl fmt::Debug for PrefixPattern {
    // Only the user-visible fields: the text is part of Codex's error messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrefixPattern")
            .field("canonical_matching", &self.canonical_matching)
            .field("first", &self.first)
            .field("rest", &self.rest)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn git_pattern(canonical: bool) -> PrefixPattern {
        PrefixPattern::new(
            "git".into(),
            vec![
                PatternToken::Single("status".into()),
                PatternToken::Alts(vec!["c".into(), "d".into()]),
            ],
            canonical,
        )
    }

    #[test]
    fn matches_prefix_with_alternatives_and_extra_tokens() {
        let p = git_pattern(false);
        assert!(p.matches(&argv(&["git", "status", "c"])));
        assert!(p.matches(&argv(&["git", "status", "d", "--more"])));
        assert!(!p.matches(&argv(&["git", "status"])));
        assert!(!p.matches(&argv(&["git", "status", "e"])));
        assert!(!p.matches(&argv(&["GIT", "status", "c"])));
    }

    #[test]
    fn canonical_pattern_folds_every_position() {
        let p = git_pattern(true);
        assert!(p.matches(&argv(&["GIT", "\u{17f}tatus", "C"])));
        assert!(!p.matches(&argv(&["gitx", "status", "c"])));
    }

    #[test]
    fn debug_form_matches_codex() {
        assert_eq!(
            format!("{:?}", git_pattern(false)),
            r#"PrefixPattern { canonical_matching: false, first: "git", rest: [Single("status"), Alts(["c", "d"])] }"#
        );
    }
}
