//! Section 4, denied reads (spec 08 §Sections: "when any").
//!
//! Exact paths and glob patterns, resolved against the cwd exactly as enforcement resolves them.
//! Deny-read is sticky (spec README invariant 2): the text says so, because it changes what an
//! escalation can achieve.

use std::path::PathBuf;

/// The denied-reads section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeniedReadsSection {
    /// Exact paths, sorted.
    pub paths: Vec<PathBuf>,
    /// Absolute glob patterns, sorted.
    pub globs: Vec<String>,
}

impl DeniedReadsSection {
    /// The section, or `None` when nothing is denied.
    #[must_use]
    pub fn new(paths: &[PathBuf], globs: &[String]) -> Option<Self> {
        if paths.is_empty() && globs.is_empty() {
            return None;
        }
        Some(Self {
            paths: paths.to_vec(),
            globs: globs.to_vec(),
        })
    }

    /// The section text (no trailing newline).
    #[must_use]
    pub fn render(&self) -> String {
        let mut lines = vec![
            "## Denied filesystem reads".to_owned(),
            "The active permission profile forbids reading the paths below. This is a policy \
             decision, not a sandbox limitation: do not ask for escalation or additional \
             permissions to read them. Because of these entries every command keeps the \
             filesystem sandbox, even one that is approved or allowed by a rule."
                .to_owned(),
        ];
        lines.extend(
            self.paths
                .iter()
                .map(|path| format!("- path `{}`", path.display())),
        );
        lines.extend(self.globs.iter().map(|glob| format!("- glob `{glob}`")));
        lines.join("\n")
    }
}
