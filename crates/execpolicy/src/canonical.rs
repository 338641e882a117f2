//! Unicode canonical caseless comparison for `canonical_matching=True` rules.
//!
//! Codex 0.169 compares such tokens by the Unicode "canonical caseless match"
//! (Unicode §3.13, definition D145): `NFD(toCasefold(NFD(x)))`. That is canonical
//! decomposition plus *full* case folding (so `straße` equals `STRASSE` and the
//! Kelvin sign equals `k`), but no compatibility normalisation (fullwidth letters
//! stay distinct) and no trimming (reference `execpolicy.md` §5.1).

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;

/// The canonical caseless key of `token`: two tokens match canonically exactly when
/// their keys are equal.
pub fn canonical_key(token: &str) -> String {
    token.nfd().default_case_fold().nfd().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        canonical_key(a) == canonical_key(b)
    }

    #[test]
    fn folds_case_and_canonical_forms() {
        assert!(same("GIT", "git"));
        assert!(same("\u{17f}tatus", "status"));
        assert!(same("STRASSE", "stra\u{df}e"));
        assert!(same("FILE", "\u{fb01}le"));
        assert!(same(
            "\u{3c3}\u{3bf}\u{3c6}\u{3bf}\u{3c2}",
            "\u{3a3}\u{39f}\u{3a6}\u{39f}\u{3a3}"
        ));
        assert!(same("\u{212a}", "k"));
        assert!(same("e\u{301}", "\u{e9}"));
    }

    #[test]
    fn keeps_compatibility_forms_suffixes_and_spaces_distinct() {
        assert!(!same(
            "\u{ff33}\u{ff34}\u{ff21}\u{ff34}\u{ff35}\u{ff33}",
            "status"
        ));
        assert!(!same("git.exe", "git"));
        assert!(!same("status ", "status"));
    }
}
