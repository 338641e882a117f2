//! Reading the automatic reviewer's answer (spec 10: `{"outcome":"allow"|"deny","rationale":..}`;
//! reference `orchestrator-and-approvals.md` §11).

use serde_json::Value;

/// The reviewer's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewOutcome {
    /// `"allow"` → `approved`.
    Allow,
    /// `"deny"` → `denied`.
    Deny,
}

/// A usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewerVerdict {
    /// Allow or deny.
    pub outcome: ReviewOutcome,
    /// The reviewer's explanation, if any.
    pub rationale: Option<String>,
    /// `low` | `medium` | `high` | `critical`, if given.
    pub risk_level: Option<String>,
}

/// Parses the answer text: the JSON object from the first `{` to the last `}` (so a reviewer may
/// wrap it in prose or a code fence); `outcome` is required and must be `allow` or `deny`;
/// `rationale` and `risk_level` are optional strings.
///
/// # Errors
/// A one-line description of why the answer is unusable (no object, invalid JSON, missing or
/// unknown `outcome`); the caller turns it into a denial (fail closed).
pub fn parse_reviewer_verdict(text: &str) -> Result<ReviewerVerdict, String> {
    let (Some(start), Some(end)) = (text.find('{'), text.rfind('}')) else {
        return Err(format!("no JSON object in the answer: {}", snippet(text)));
    };
    if end < start {
        return Err(format!("no JSON object in the answer: {}", snippet(text)));
    }
    let json: Value = serde_json::from_str(&text[start..=end])
        .map_err(|error| format!("invalid JSON in the answer ({error}): {}", snippet(text)))?;
    let outcome = match json.get("outcome").and_then(Value::as_str) {
        Some("allow") => ReviewOutcome::Allow,
        Some("deny") => ReviewOutcome::Deny,
        Some(other) => {
            return Err(format!(
                "`outcome` is {other:?}; expected \"allow\" or \"deny\""
            ));
        }
        None => return Err("the answer has no string `outcome`".to_owned()),
    };
    let text_field = |name: &str| {
        json.get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    Ok(ReviewerVerdict {
        outcome,
        rationale: text_field("rationale"),
        risk_level: text_field("risk_level"),
    })
}

/// At most 200 characters of `text` on one line, for messages.
pub(crate) fn snippet(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return "(empty)".to_owned();
    }
    if flat.chars().count() <= 200 {
        return flat;
    }
    let mut cut: String = flat.chars().take(200).collect();
    cut.push('…');
    cut
}
