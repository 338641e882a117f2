//! Approved command prefixes: the allow prefix rules of the exec policy, as the model sees them
//! (spec 08 §Sections item 2 and §Snapshot and diff).
//!
//! One line per prefix, `- ["tok", "tok"]` (each token JSON-quoted, joined by `", "`), shortest and
//! broadest first. The list is capped so a huge rules file cannot flood the context; the cap drops
//! whole lines and says how many were left out.

use std::collections::BTreeSet;

/// Most prefixes listed before the rest are summarised.
pub const MAX_LISTED_PREFIXES: usize = 100;
/// Most characters of listed lines before the rest are summarised.
pub const MAX_PREFIX_LIST_CHARS: usize = 5_000;

/// First line of the update sent when prefixes were approved since the last full text (spec 08,
/// exact).
pub const PREFIX_SAVED_HEADING: &str = "Approved command prefix saved:";

/// A sorted, deduplicated set of approved prefixes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovedPrefixList {
    prefixes: Vec<Vec<String>>,
}

impl ApprovedPrefixList {
    /// Sorts by (token count, total token bytes, tokens) and removes repeats and empty prefixes.
    #[must_use]
    pub fn new<I>(prefixes: I) -> Self
    where
        I: IntoIterator<Item = Vec<String>>,
    {
        let mut prefixes: Vec<Vec<String>> = prefixes
            .into_iter()
            .filter(|prefix| !prefix.is_empty())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        prefixes.sort_by(|left, right| sort_key(left).cmp(&sort_key(right)));
        Self { prefixes }
    }

    /// The prefixes in display order.
    #[must_use]
    pub fn prefixes(&self) -> &[Vec<String>] {
        &self.prefixes
    }

    /// The prefixes as a set (what a snapshot stores).
    #[must_use]
    pub fn to_set(&self) -> BTreeSet<Vec<String>> {
        self.prefixes.iter().cloned().collect()
    }

    /// Whether there is nothing to list.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// The bullet lines joined by `\n` (no trailing newline), capped by [`MAX_LISTED_PREFIXES`]
    /// and [`MAX_PREFIX_LIST_CHARS`].
    #[must_use]
    pub fn render_lines(&self) -> String {
        let mut lines: Vec<String> = Vec::new();
        let mut chars = 0usize;
        for prefix in &self.prefixes {
            let line = prefix_line(prefix);
            let added = line.chars().count() + usize::from(!lines.is_empty());
            if lines.len() == MAX_LISTED_PREFIXES || chars + added > MAX_PREFIX_LIST_CHARS {
                break;
            }
            chars += added;
            lines.push(line);
        }
        let omitted = self.prefixes.len() - lines.len();
        if omitted > 0 {
            lines.push(format!(
                "({omitted} more approved prefixes are not listed here.)"
            ));
        }
        lines.join("\n")
    }
}

fn sort_key(prefix: &[String]) -> (usize, usize, &[String]) {
    (prefix.len(), prefix.iter().map(String::len).sum(), prefix)
}

/// `- ["git", "pull"]`: tokens JSON-quoted (so quotes and control characters are escaped).
#[must_use]
pub fn prefix_line(prefix: &[String]) -> String {
    let tokens: Vec<String> = prefix
        .iter()
        .map(|token| serde_json::Value::String(token.clone()).to_string())
        .collect();
    format!("- [{}]", tokens.join(", "))
}

/// The update that announces newly approved prefixes without re-sending the whole text:
/// `Approved command prefix saved:\n- ["touch", "allow-prefix.txt"]` (spec 08, exact form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovedCommandPrefixSaved {
    /// The new prefixes, in display order (never empty).
    pub prefixes: ApprovedPrefixList,
}

impl ApprovedCommandPrefixSaved {
    /// The update for `prefixes`, or `None` when there are none.
    #[must_use]
    pub fn new<I>(prefixes: I) -> Option<Self>
    where
        I: IntoIterator<Item = Vec<String>>,
    {
        let prefixes = ApprovedPrefixList::new(prefixes);
        (!prefixes.is_empty()).then_some(Self { prefixes })
    }

    /// The developer-message text (no markers, no trailing newline).
    #[must_use]
    pub fn render(&self) -> String {
        format!("{PREFIX_SAVED_HEADING}\n{}", self.prefixes.render_lines())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(tokens: &[&str]) -> Vec<String> {
        tokens.iter().map(|token| (*token).to_owned()).collect()
    }

    #[test]
    fn sorts_by_length_then_bytes_then_tokens_and_dedups() {
        let list = ApprovedPrefixList::new(vec![
            owned(&["cargo", "test", "--all"]),
            owned(&["npm", "run", "dev"]),
            owned(&["ls"]),
            owned(&["git", "pull"]),
            owned(&["gh", "pr", "check"]),
            owned(&["git", "pull"]),
            Vec::new(),
        ]);
        assert_eq!(
            list.render_lines(),
            "- [\"ls\"]\n- [\"git\", \"pull\"]\n- [\"gh\", \"pr\", \"check\"]\n\
             - [\"npm\", \"run\", \"dev\"]\n- [\"cargo\", \"test\", \"--all\"]"
        );
        assert_eq!(list.prefixes().len(), 5);
    }

    #[test]
    fn tokens_are_json_escaped() {
        assert_eq!(
            prefix_line(&owned(&["echo", "say \"hi\"", "tab\there"])),
            r#"- ["echo", "say \"hi\"", "tab\there"]"#
        );
    }

    #[test]
    fn saved_fragment_has_the_exact_form() {
        let saved = ApprovedCommandPrefixSaved::new(vec![owned(&["touch", "allow-prefix.txt"])]);
        assert_eq!(
            saved.map(|saved| saved.render()).as_deref(),
            Some("Approved command prefix saved:\n- [\"touch\", \"allow-prefix.txt\"]")
        );
        assert!(ApprovedCommandPrefixSaved::new(Vec::new()).is_none());
    }

    #[test]
    fn caps_by_count_and_by_characters() {
        let many = ApprovedPrefixList::new((0..150).map(|i| owned(&["tool", &format!("{i:03}")])));
        let text = many.render_lines();
        assert_eq!(text.lines().count(), MAX_LISTED_PREFIXES + 1);
        assert!(text.ends_with("(50 more approved prefixes are not listed here.)"));

        let long = "x".repeat(1_000);
        let wide = ApprovedPrefixList::new((0..10).map(|i| owned(&[&format!("{long}{i}")])));
        let text = wide.render_lines();
        let listed: Vec<&str> = text.lines().filter(|line| line.starts_with("- ")).collect();
        assert_eq!(listed.len(), 4);
        assert!(
            listed
                .iter()
                .map(|line| line.chars().count() + 1)
                .sum::<usize>()
                <= MAX_PREFIX_LIST_CHARS + 1
        );
        assert!(text.ends_with("(6 more approved prefixes are not listed here.)"));
    }
}
