//! The unified diff of one change, as Codex shows it (reference §A4: the `similar` crate, 1
//! line of context, no `---`/`+++` headers).

/// The unified diff from `old` to `new`: hunks only (`@@ -a,b +c,d @@` …), 1 line of context;
/// empty when the texts are equal.
#[must_use]
pub fn unified_diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(1)
        .to_string()
}
