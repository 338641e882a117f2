//! Airlock's verdict as each harness's answer (spec 13; reference `adapters.md` §C1, §C2).
//!
//! | event | `Forbidden` | `NeedsApproval` | `Skip` |
//! | --- | --- | --- | --- |
//! | Claude `PreToolUse` (`Bash`) | `deny` + reason | `ask` + reason | `allow` only with `--allow-skip`, else none |
//! | Claude `PermissionRequest` (`Bash`) | `deny` only for a `forbidden` rule | none | `allow` only when every segment is allowed by a rule |
//! | Gemini `BeforeTool` (`run_shell_command`) | `{"decision":"deny","reason"}` | none (Gemini has no "ask") | none |
//!
//! "None" is exit 0 with no decision in it: nothing on stdout for Claude Code (which parses
//! stdout only when it is JSON), `{}` for Gemini CLI (which parses stdout as JSON and wants
//! nothing else there); the harness's own rules and prompt still apply. Other tools always get
//! none.

use serde_json::Value;
use serde_json::json;

use crate::decide::PolicyVerdict;
use crate::decide::VerdictKind;
use crate::event::Harness;
use crate::event::HookEventKind;

/// What to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// No decision (exit 0): the harness decides as if there were no hook ([`no_decision`]).
    NoDecision,
    /// This JSON object on stdout, on one line (exit 0).
    Json(Value),
}

impl Answer {
    /// The exact stdout for `harness`: [`no_decision`], or the object and a newline.
    #[must_use]
    pub fn stdout(&self, harness: Harness) -> String {
        match self {
            Self::NoDecision => no_decision(harness).to_owned(),
            Self::Json(value) => format!("{value}\n"),
        }
    }
}

/// The stdout that carries no decision: empty for Claude Code, `{}` for Gemini CLI.
#[must_use]
pub const fn no_decision(harness: Harness) -> &'static str {
    match harness {
        Harness::ClaudeCode => "",
        Harness::Gemini => "{}\n",
    }
}

/// The reason shown with a `deny`.
fn deny_reason(verdict: &PolicyVerdict) -> String {
    format!(
        "airlock: {}",
        verdict
            .reason
            .as_deref()
            .unwrap_or("this command is forbidden by Airlock's policy")
    )
}

/// The reason shown with an `ask`.
fn ask_reason(verdict: &PolicyVerdict) -> String {
    format!(
        "airlock: {}",
        verdict
            .reason
            .as_deref()
            .unwrap_or("this command needs approval under Airlock's policy")
    )
}

/// The answer to a shell-tool event of `kind` with `verdict`; `allow_skip` is Claude Code's
/// `--allow-skip` (answer `allow` to `Skip` in `PreToolUse`).
#[must_use]
pub fn answer_for(kind: HookEventKind, verdict: &PolicyVerdict, allow_skip: bool) -> Answer {
    match kind {
        HookEventKind::PreToolUse => {
            let (decision, reason) = match verdict.kind {
                VerdictKind::Forbidden => ("deny", deny_reason(verdict)),
                VerdictKind::NeedsApproval => ("ask", ask_reason(verdict)),
                VerdictKind::Skip if allow_skip => (
                    "allow",
                    "airlock: no approval needed (known safe or allowed by a rule)".to_owned(),
                ),
                VerdictKind::Skip => return Answer::NoDecision,
            };
            Answer::Json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision,
                    "permissionDecisionReason": reason,
                }
            }))
        }
        HookEventKind::PermissionRequest => {
            let decision = if verdict.forbidden_by_rule {
                json!({"behavior": "deny", "message": deny_reason(verdict)})
            } else if verdict.allowed_by_rule {
                json!({"behavior": "allow"})
            } else {
                return Answer::NoDecision;
            };
            Answer::Json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": decision,
                }
            }))
        }
        HookEventKind::BeforeTool => match verdict.kind {
            VerdictKind::Forbidden => Answer::Json(json!({
                "decision": "deny",
                "reason": deny_reason(verdict),
            })),
            VerdictKind::NeedsApproval | VerdictKind::Skip => Answer::NoDecision,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn verdict(kind: VerdictKind, allowed: bool, forbidden: bool) -> PolicyVerdict {
        PolicyVerdict {
            kind,
            reason: (kind != VerdictKind::Skip).then(|| "because".to_owned()),
            allowed_by_rule: allowed,
            forbidden_by_rule: forbidden,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn every_cell_of_the_table() {
        use HookEventKind::{BeforeTool, PermissionRequest, PreToolUse};
        use VerdictKind::{Forbidden, NeedsApproval, Skip};
        let cases = [
            (
                PreToolUse,
                verdict(Forbidden, false, false),
                false,
                "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"airlock: because\"}}\n",
            ),
            (
                PreToolUse,
                verdict(NeedsApproval, false, false),
                false,
                "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"airlock: because\"}}\n",
            ),
            (PreToolUse, verdict(Skip, true, false), false, ""),
            (
                PreToolUse,
                verdict(Skip, false, false),
                true,
                "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"airlock: no approval needed (known safe or allowed by a rule)\"}}\n",
            ),
            (
                PermissionRequest,
                verdict(Skip, true, false),
                false,
                "{\"hookSpecificOutput\":{\"decision\":{\"behavior\":\"allow\"},\"hookEventName\":\"PermissionRequest\"}}\n",
            ),
            (PermissionRequest, verdict(Skip, false, false), true, ""),
            (
                PermissionRequest,
                verdict(NeedsApproval, false, false),
                false,
                "",
            ),
            (
                PermissionRequest,
                verdict(Forbidden, false, false),
                false,
                "",
            ),
            (
                PermissionRequest,
                verdict(Forbidden, false, true),
                false,
                "{\"hookSpecificOutput\":{\"decision\":{\"behavior\":\"deny\",\"message\":\"airlock: because\"},\"hookEventName\":\"PermissionRequest\"}}\n",
            ),
            (
                BeforeTool,
                verdict(Forbidden, false, true),
                false,
                "{\"decision\":\"deny\",\"reason\":\"airlock: because\"}\n",
            ),
            (BeforeTool, verdict(NeedsApproval, false, false), false, ""),
            (BeforeTool, verdict(Skip, true, false), true, ""),
        ];
        for (kind, verdict, allow_skip, expected) in cases {
            let harness = if kind == BeforeTool {
                Harness::Gemini
            } else {
                Harness::ClaudeCode
            };
            let expected = if expected.is_empty() {
                no_decision(harness)
            } else {
                expected
            };
            assert_eq!(
                answer_for(kind, &verdict, allow_skip).stdout(harness),
                expected,
                "{kind:?} {verdict:?} allow_skip={allow_skip}"
            );
        }
    }
}
