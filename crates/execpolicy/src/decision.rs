//! The three outcomes a prefix rule can assign to a command.

use serde::{Deserialize, Serialize};

use crate::error::RuleError;

/// What a matching rule says about a command.
///
/// Ordered by strictness (`Allow < Prompt < Forbidden`), so `max()` over a set of
/// matches yields the decision that wins (reference `execpolicy.md` §2:
/// forbidden > prompt > allow). Serialised in lowercase (`"allow"`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The command may run without asking.
    Allow,
    /// A reviewer must approve the command first.
    Prompt,
    /// The command must never run.
    Forbidden,
}

impl Decision {
    /// Parses the `decision=` argument of `prefix_rule`: exactly `allow`, `prompt` or
    /// `forbidden`, case-sensitive (reference §4.1).
    ///
    /// # Errors
    /// [`RuleError::InvalidDecision`] carrying the raw value for anything else.
    pub fn parse(raw: &str) -> Result<Self, RuleError> {
        match raw {
            "allow" => Ok(Self::Allow),
            "prompt" => Ok(Self::Prompt),
            "forbidden" => Ok(Self::Forbidden),
            other => Err(RuleError::InvalidDecision(other.to_string())),
        }
    }

    /// The `.rules` spelling of this decision.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Prompt => "prompt",
            Self::Forbidden => "forbidden",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_lowercase_names_only() {
        assert_eq!(Decision::parse("allow").unwrap(), Decision::Allow);
        assert_eq!(Decision::parse("prompt").unwrap(), Decision::Prompt);
        assert_eq!(Decision::parse("forbidden").unwrap(), Decision::Forbidden);
        for bad in ["deny", "Allow", "ask", "prompt-user", ""] {
            assert_eq!(
                Decision::parse(bad).unwrap_err().to_string(),
                format!("invalid decision: {bad}")
            );
        }
    }

    #[test]
    fn strictness_order() {
        assert!(Decision::Forbidden > Decision::Prompt);
        assert!(Decision::Prompt > Decision::Allow);
        assert_eq!(
            [Decision::Allow, Decision::Forbidden, Decision::Prompt]
                .iter()
                .max(),
            Some(&Decision::Forbidden)
        );
    }
}
