//! Reading one hook run's result: exit-0 JSON or exit-2 stderr (reference
//! `orchestrator-and-approvals.md` §8).

use serde_json::Value;

/// The message of a hook deny that gave none (reference §8).
pub const DEFAULT_HOOK_DENY_MESSAGE: &str = "PermissionRequest hook denied approval";

/// The message of a `PreToolUse` deny that gave none.
pub const DEFAULT_PRE_TOOL_USE_DENY_MESSAGE: &str = "PreToolUse hook blocked the call";

/// A hook's decisive answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookVerdict {
    /// Approve (→ `approved`, source hook).
    Allow,
    /// Deny (→ `denied { rejection: message }`, source hook).
    Deny {
        /// The reason shown to the model.
        message: String,
    },
}

/// What one hook run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookRunResult {
    /// A decisive answer, with warnings to show (`systemMessage`, ignored fields).
    Decided {
        /// The answer.
        verdict: HookVerdict,
        /// Messages for the user.
        warnings: Vec<String>,
    },
    /// The hook declined to decide (exit 0 with no JSON, or JSON without a decision).
    NoDecision {
        /// Messages for the user.
        warnings: Vec<String>,
    },
    /// The run failed: no decision, and the reason is logged (spec 06 step 1).
    Failed {
        /// Why, in one line.
        reason: String,
    },
}

/// Fields of the exit-0 JSON this layer cannot honour (reference §8 "Unsupported").
fn unsupported_fields(
    top: &serde_json::Map<String, Value>,
    decision: &serde_json::Map<String, Value>,
) -> Vec<&'static str> {
    let mut found = Vec::new();
    if top.get("continue").and_then(Value::as_bool) == Some(false) {
        found.push("continue:false");
    }
    if top.get("stopReason").is_some_and(|v| !v.is_null()) {
        found.push("stopReason");
    }
    if top.get("suppressOutput").and_then(Value::as_bool) == Some(true) {
        found.push("suppressOutput:true");
    }
    if decision.get("updatedInput").is_some_and(|v| !v.is_null()) {
        found.push("updatedInput");
    }
    if decision
        .get("updatedPermissions")
        .is_some_and(|v| !v.is_null())
    {
        found.push("updatedPermissions");
    }
    if decision.get("interrupt").and_then(Value::as_bool) == Some(true) {
        found.push("interrupt:true");
    }
    found
}

/// Interprets one run: `code` is the exit status (`None` = ended by a signal).
///
/// - exit 0, empty stdout → no decision; stdout not starting with `{` or `[` → no decision
///   (plain text is ignored); otherwise the JSON must be an object: `systemMessage` becomes a
///   warning, `hookSpecificOutput.decision.behavior` = `allow` | `deny` (with `message?`) decides,
///   a missing `hookSpecificOutput` or `decision` is no decision, anything else is a failure;
/// - exit 2 with non-empty stderr → deny with stderr (trimmed) as the message; with empty stderr
///   → failure;
/// - any other status → failure.
///
/// Unsupported fields (`continue:false`, `stopReason`, `suppressOutput:true`, `updatedInput`,
/// `updatedPermissions`, `interrupt:true`) make an **allow** a failure (nothing is approved on
/// terms this layer cannot honour); a **deny** stays a deny with a warning (tighten only —
/// Airlock decision, Codex drops such a deny).
#[must_use]
pub fn parse_hook_output(code: Option<i32>, stdout: &str, stderr: &str) -> HookRunResult {
    match code {
        Some(0) => parse_exit_zero(stdout),
        Some(2) => {
            let message = stderr.trim();
            if message.is_empty() {
                HookRunResult::Failed {
                    reason: "exited with status 2 but wrote no reason on stderr".to_owned(),
                }
            } else {
                HookRunResult::Decided {
                    verdict: HookVerdict::Deny {
                        message: message.to_owned(),
                    },
                    warnings: Vec::new(),
                }
            }
        }
        Some(other) => HookRunResult::Failed {
            reason: with_stderr(format!("exited with status {other}"), stderr),
        },
        None => HookRunResult::Failed {
            reason: with_stderr("was terminated by a signal".to_owned(), stderr),
        },
    }
}

fn with_stderr(mut reason: String, stderr: &str) -> String {
    if let Some(line) = stderr.lines().map(str::trim).find(|line| !line.is_empty()) {
        reason.push_str(": ");
        reason.push_str(&truncate(line, 200));
    }
    reason
}

fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max_chars).collect();
    cut.push('…');
    cut
}

fn parse_exit_zero(stdout: &str) -> HookRunResult {
    let text = stdout.trim();
    if text.is_empty() || !(text.starts_with('{') || text.starts_with('[')) {
        return HookRunResult::NoDecision {
            warnings: Vec::new(),
        };
    }
    let json: Value = match serde_json::from_str(text) {
        Ok(json) => json,
        Err(error) => {
            return HookRunResult::Failed {
                reason: format!(
                    "printed invalid JSON output ({error}): {}",
                    truncate(text, 200)
                ),
            };
        }
    };
    let Value::Object(top) = json else {
        return HookRunResult::Failed {
            reason: "printed JSON that is not an object".to_owned(),
        };
    };
    let mut warnings = Vec::new();
    if let Some(message) = top.get("systemMessage").and_then(Value::as_str)
        && !message.trim().is_empty()
    {
        warnings.push(message.trim().to_owned());
    }
    let Some(specific) = top.get("hookSpecificOutput").filter(|v| !v.is_null()) else {
        return no_decision_or_unsupported(&top, warnings);
    };
    let Some(specific) = specific.as_object() else {
        return failed("`hookSpecificOutput` is not an object");
    };
    if let Some(event) = specific.get("hookEventName")
        && event.as_str() != Some("PermissionRequest")
    {
        return failed(format!(
            "`hookSpecificOutput.hookEventName` is {event}, expected \"PermissionRequest\""
        ));
    }
    let Some(decision) = specific.get("decision").filter(|v| !v.is_null()) else {
        return no_decision_or_unsupported(&top, warnings);
    };
    let Some(decision) = decision.as_object() else {
        return failed("`hookSpecificOutput.decision` is not an object");
    };
    let unsupported = unsupported_fields(&top, decision);
    match decision.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            if unsupported.is_empty() {
                HookRunResult::Decided {
                    verdict: HookVerdict::Allow,
                    warnings,
                }
            } else {
                failed(format!(
                    "allowed with unsupported fields ({}); not approved",
                    unsupported.join(", ")
                ))
            }
        }
        Some("deny") => {
            if !unsupported.is_empty() {
                warnings.push(format!(
                    "PermissionRequest hook output fields not supported and ignored: {}",
                    unsupported.join(", ")
                ));
            }
            let message = decision
                .get("message")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|message| !message.is_empty())
                .unwrap_or(DEFAULT_HOOK_DENY_MESSAGE)
                .to_owned();
            HookRunResult::Decided {
                verdict: HookVerdict::Deny { message },
                warnings,
            }
        }
        Some(other) => failed(format!(
            "`decision.behavior` is {other:?}; expected \"allow\" or \"deny\""
        )),
        None => failed("`decision.behavior` is missing; expected \"allow\" or \"deny\""),
    }
}

fn no_decision_or_unsupported(
    top: &serde_json::Map<String, Value>,
    warnings: Vec<String>,
) -> HookRunResult {
    let unsupported = unsupported_fields(top, &serde_json::Map::new());
    if unsupported.is_empty() {
        HookRunResult::NoDecision { warnings }
    } else {
        failed(format!(
            "unsupported output fields: {}",
            unsupported.join(", ")
        ))
    }
}

fn failed(reason: impl Into<String>) -> HookRunResult {
    HookRunResult::Failed {
        reason: reason.into(),
    }
}

/// Interprets one `PreToolUse` run (issue 18 item 7). Codex's `PreToolUse` is deny-only
/// (reference `adapters.md` C1): exit 2 with a reason on stderr, or exit 0 with
/// `hookSpecificOutput.permissionDecision: "deny"` (reason in `permissionDecisionReason`),
/// or the older top-level `decision: "block"` (reason in `reason`), blocks the call;
/// `allow`, `ask` and `defer` are reported as unsupported and ignored, so a hook can never
/// approve anything here. Everything else is no decision or a failure (no decision).
#[must_use]
pub fn parse_pre_tool_use_output(code: Option<i32>, stdout: &str, stderr: &str) -> HookRunResult {
    if code != Some(0) {
        return parse_hook_output(code, stdout, stderr);
    }
    let text = stdout.trim();
    if text.is_empty() || !(text.starts_with('{') || text.starts_with('[')) {
        return HookRunResult::NoDecision {
            warnings: Vec::new(),
        };
    }
    let top = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(top)) => top,
        Ok(_) => return failed("printed JSON that is not an object"),
        Err(error) => {
            return failed(format!(
                "printed invalid JSON output ({error}): {}",
                truncate(text, 200)
            ));
        }
    };
    let mut warnings = Vec::new();
    if let Some(message) = top.get("systemMessage").and_then(Value::as_str)
        && !message.trim().is_empty()
    {
        warnings.push(message.trim().to_owned());
    }
    let reason_of = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|reason| !reason.is_empty())
            .unwrap_or(DEFAULT_PRE_TOOL_USE_DENY_MESSAGE)
            .to_owned()
    };
    if top.get("decision").and_then(Value::as_str) == Some("block") {
        return HookRunResult::Decided {
            verdict: HookVerdict::Deny {
                message: reason_of(top.get("reason")),
            },
            warnings,
        };
    }
    let Some(specific) = top.get("hookSpecificOutput").and_then(Value::as_object) else {
        return HookRunResult::NoDecision { warnings };
    };
    if let Some(event) = specific.get("hookEventName")
        && event.as_str() != Some("PreToolUse")
    {
        return failed(format!(
            "`hookSpecificOutput.hookEventName` is {event}, expected \"PreToolUse\""
        ));
    }
    match specific.get("permissionDecision").and_then(Value::as_str) {
        Some("deny") => HookRunResult::Decided {
            verdict: HookVerdict::Deny {
                message: reason_of(specific.get("permissionDecisionReason")),
            },
            warnings,
        },
        Some(other) => {
            warnings.push(format!(
                "PreToolUse hook decision {other:?} is not supported and ignored (only \"deny\")"
            ));
            HookRunResult::NoDecision { warnings }
        }
        None => HookRunResult::NoDecision { warnings },
    }
}
