//! Rules and the matches they produce.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::decision::Decision;
use crate::pattern::PrefixPattern;

/// One rule created by `prefix_rule` (one per first-position alternative).
///
/// The derived `Debug` text (`PrefixRule { pattern: .., decision: Allow,
/// justification: None }`) is quoted verbatim in example-validation errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixRule {
    /// The prefix this rule matches.
    pub pattern: PrefixPattern,
    /// What a match means.
    pub decision: Decision,
    /// Why, shown to users and the model; never empty after trimming.
    pub justification: Option<String>,
}

/// An absolute, lexically normalised path (no `.`/`..` components).
///
/// Serialised as a plain string; its `Debug` form `AbsolutePathBuf("/x")` appears in
/// Codex-compatible error messages.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct AbsolutePathBuf(PathBuf);

impl AbsolutePathBuf {
    /// Wraps `path` if it is absolute, normalising it lexically (see
    /// [`crate::host::normalize_lexically`]); `None` for a relative path.
    pub fn new(path: &Path) -> Option<Self> {
        path.is_absolute()
            .then(|| Self(crate::host::normalize_lexically(path)))
    }

    /// The path.
    pub fn as_path(&self) -> &Path {
        &self.0
    }
}

/// Why a rule (or the fallback heuristics) applies to a command.
///
/// JSON (`execpolicy check` output, reference §2), keys in this order, optional keys
/// omitted when absent:
/// `{"prefixRuleMatch":{"matchedPrefix":[..],"decision":"..","resolvedProgram":"/abs","justification":".."}}`
/// or `{"heuristicsRuleMatch":{"command":[..],"decision":".."}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum RuleMatch {
    /// A `prefix_rule` matched.
    PrefixRuleMatch {
        /// The command's own tokens covered by the pattern (after host resolution the
        /// first one is the resolved basename).
        matched_prefix: Vec<String>,
        /// The rule's decision.
        decision: Decision,
        /// Set when the match was found through host-executable resolution.
        #[serde(skip_serializing_if = "Option::is_none")]
        resolved_program: Option<AbsolutePathBuf>,
        /// The rule's justification, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        justification: Option<String>,
    },
    /// No rule matched this segment; the caller's fallback heuristics decided.
    HeuristicsRuleMatch {
        /// The segment.
        command: Vec<String>,
        /// The fallback's decision.
        decision: Decision,
    },
}

impl RuleMatch {
    /// The decision this match contributes.
    pub fn decision(&self) -> Decision {
        match self {
            Self::PrefixRuleMatch { decision, .. } | Self::HeuristicsRuleMatch { decision, .. } => {
                *decision
            }
        }
    }

    /// Whether this match came from an explicit rule (as opposed to heuristics).
    pub fn is_policy_match(&self) -> bool {
        matches!(self, Self::PrefixRuleMatch { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_omits_absent_fields_and_keeps_key_order() {
        let m = RuleMatch::PrefixRuleMatch {
            matched_prefix: vec!["git".into(), "push".into()],
            decision: Decision::Prompt,
            resolved_program: AbsolutePathBuf::new(Path::new("/usr/bin/../bin/git")),
            justification: Some("review".into()),
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"prefixRuleMatch":{"matchedPrefix":["git","push"],"decision":"prompt","resolvedProgram":"/usr/bin/git","justification":"review"}}"#
        );
        let bare = RuleMatch::PrefixRuleMatch {
            matched_prefix: vec!["ls".into()],
            decision: Decision::Allow,
            resolved_program: None,
            justification: None,
        };
        assert_eq!(
            serde_json::to_string(&bare).unwrap(),
            r#"{"prefixRuleMatch":{"matchedPrefix":["ls"],"decision":"allow"}}"#
        );
        let heuristic = RuleMatch::HeuristicsRuleMatch {
            command: vec!["ls".into()],
            decision: Decision::Prompt,
        };
        assert_eq!(
            serde_json::to_string(&heuristic).unwrap(),
            r#"{"heuristicsRuleMatch":{"command":["ls"],"decision":"prompt"}}"#
        );
    }

    #[test]
    fn debug_form_matches_codex() {
        let m = RuleMatch::PrefixRuleMatch {
            matched_prefix: vec!["git".into(), "status".into()],
            decision: Decision::Allow,
            resolved_program: AbsolutePathBuf::new(Path::new("/usr/bin/git")),
            justification: None,
        };
        assert_eq!(
            format!("{m:?}"),
            r#"PrefixRuleMatch { matched_prefix: ["git", "status"], decision: Allow, resolved_program: Some(AbsolutePathBuf("/usr/bin/git")), justification: None }"#
        );
    }
}
