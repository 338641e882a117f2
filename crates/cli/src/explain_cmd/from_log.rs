//! `airlock explain --from-log CALL_ID`: one audit entry of `$AIRLOCK_HOME/log/audit.jsonl`
//! re-rendered for a person (spec 10 §Audit log): when and where, the command, what the
//! policy layer found per segment, the requirement, who decided what, each attempt with its
//! sandbox and exit code, why it was (not) retried, amendments, and the outcome. With
//! `--json`, the entry itself.
//!
//! Every value comes from a file a confined command may have influenced (the command, the
//! reasons), so everything printed goes through [`crate::terminal_text::safe`].
//!
//! Exit codes: 0 shown; 1 no entry with that call id, or the log cannot be read.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde_json::Value;

use crate::terminal_text::safe;

/// The entry of `call_id` in `log` (the last one, if the id repeats), and how many matched.
///
/// # Errors
/// The log cannot be read, or holds no entry for `call_id`.
pub(super) fn find(log: &Path, call_id: &str) -> anyhow::Result<(Value, usize)> {
    let text = std::fs::read_to_string(log)
        .with_context(|| format!("cannot read the audit log {}", log.display()))?;
    let mut found = None;
    let mut count = 0;
    let mut last_id = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a JSON audit entry", log.display(), n + 1))?;
        let id = entry["call_id"].as_str().unwrap_or_default().to_owned();
        if id == call_id {
            count += 1;
            found = Some(entry);
        }
        last_id = Some(id);
    }
    match found {
        Some(entry) => Ok((entry, count)),
        None => anyhow::bail!(
            "no audit entry with call id `{}` in {}{}; `airlock exec -v` prints the call id of each run",
            safe(call_id),
            log.display(),
            last_id.map_or_else(
                || " (the log is empty)".to_owned(),
                |id| format!(" (the last entry is `{}`)", safe(&id))
            )
        ),
    }
}

/// The entry for a person.
pub(super) fn render(entry: &Value) -> String {
    let mut out = String::new();
    let text = |value: &Value| safe(value.as_str().unwrap_or("?"));
    let _ = writeln!(out, "call:    {}", text(&entry["call_id"]));
    let _ = writeln!(
        out,
        "when:    {} (session {}, turn {})",
        text(&entry["time"]),
        text(&entry["session_id"]),
        text(&entry["turn_id"])
    );
    let _ = writeln!(out, "cwd:     {}", text(&entry["cwd"]));
    let _ = writeln!(out, "command: {}", words(&entry["command"]));

    out.push_str("policy layer:\n");
    let policy = &entry["policy"];
    if policy.is_null() {
        out.push_str("  not evaluated (the command was unusable)\n");
    }
    for segment in policy["matched_rules"].as_array().into_iter().flatten() {
        let mut why = Vec::new();
        for rule in segment["matches"].as_array().into_iter().flatten() {
            if let Some(prefix) = rule.get("prefixRuleMatch") {
                let justification = prefix["justification"]
                    .as_str()
                    .map(|j| format!(": {}", safe(j)))
                    .unwrap_or_default();
                why.push(format!(
                    "rule `{}` → {}{justification}",
                    words(&prefix["matchedPrefix"]),
                    text(&prefix["decision"])
                ));
            } else if rule.get("heuristicsRuleMatch").is_some() {
                why.push("heuristics".to_owned());
            }
        }
        if segment["known_safe"] == Value::Bool(true) {
            why.push("known safe".to_owned());
        }
        if segment["dangerous"] == Value::Bool(true) {
            why.push("dangerous".to_owned());
        }
        let _ = writeln!(
            out,
            "  segment `{}`: {} ({})",
            words(&segment["command"]),
            text(&segment["decision"]),
            why.join(", ")
        );
    }
    for cause in policy["heuristics"]["prompt_causes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let _ = writeln!(out, "  prompt cause: {}", text(&cause["detail"]));
    }
    if let Some(reason) = policy["policy_unavailable"].as_str() {
        let _ = writeln!(out, "  exec policy unavailable: {}", safe(reason));
    }
    let requirement = &entry["requirement"];
    if !requirement.is_null() {
        let mut line = text(&requirement["type"]).replace('_', " ");
        if requirement["bypass_sandbox"] == Value::Bool(true) {
            line.push_str(", first attempt may bypass the sandbox");
        }
        if let Some(reason) = requirement["reason"].as_str() {
            let _ = write!(line, ": {}", safe(reason));
        }
        let _ = writeln!(out, "  requirement: {line}");
    }

    out.push_str("approval layer:\n");
    let approvals = entry["approvals"].as_array().cloned().unwrap_or_default();
    if approvals.is_empty() {
        out.push_str("  nobody was asked\n");
    }
    for approval in &approvals {
        let decision = match &approval["decision"] {
            Value::String(word) => safe(word),
            Value::Object(map) => map
                .keys()
                .next()
                .map_or_else(|| "?".to_owned(), |k| safe(k)),
            _ => "?".to_owned(),
        };
        // A missing reviewer is recorded with the spec's source `config` (nobody was asked);
        // for a person that is not a decision of the configuration but its absence.
        let no_reviewer = approval["decision"]["denied"]["rejection"]
            .as_str()
            .is_some_and(|reason| reason.starts_with(airlock_approval::NO_REVIEWER_AVAILABLE));
        let by = if no_reviewer {
            format!(
                "— no reviewer available (nobody was asked; source {})",
                text(&approval["source"])
            )
        } else {
            format!("by {}", text(&approval["source"]))
        };
        let _ = writeln!(
            out,
            "  {}: {decision} {by} ({} ms)",
            text(&approval["phase"]),
            approval["duration_ms"]
        );
    }

    out.push_str("enforcement layer:\n");
    let attempts = entry["attempts"].as_array().cloned().unwrap_or_default();
    if attempts.is_empty() {
        out.push_str("  nothing ran\n");
    }
    for attempt in &attempts {
        let ending = if let Some(error) = attempt["error"].as_str() {
            format!("not started: {}", safe(error))
        } else if let Some(code) = attempt["exit_code"].as_i64() {
            if attempt["sandbox_denied"] == Value::Bool(true) {
                format!("exit {code}, blocked by the sandbox")
            } else {
                format!("exit {code}")
            }
        } else {
            "no result".to_owned()
        };
        let _ = writeln!(
            out,
            "  {} attempt: sandbox {} → {ending} ({} ms)",
            text(&attempt["phase"]),
            text(&attempt["sandbox"]),
            attempt["duration_ms"]
        );
    }
    if let Some(reason) = entry["retry_reason"].as_str() {
        let _ = writeln!(out, "  retry reason: {}", safe(reason));
    }
    if let Some(reason) = entry["no_retry"].as_str() {
        let _ = writeln!(out, "  not retried: {}", safe(&reason.replace('_', " ")));
    }
    for amendment in entry["amendments"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  saved prefix rule: {} (in {})",
            words(amendment),
            text(&entry["amendment_file"])
        );
    }

    let outcome = &entry["outcome"];
    let ending = match outcome["status"].as_str() {
        Some("ran") => format!("ran, exit {}", outcome["exit_code"]),
        Some("sandbox_denied") => format!("blocked by the sandbox, exit {}", outcome["exit_code"]),
        Some("rejected") => format!("refused: {}", text(&outcome["message"])),
        Some("unrunnable") => format!(
            "not started, exit {}: {}",
            outcome["exit_code"],
            text(&outcome["message"])
        ),
        Some("error") => format!("not run: {}", text(&outcome["message"])),
        _ => "unknown".to_owned(),
    };
    let _ = writeln!(out, "outcome: {ending}");
    out
}

/// A JSON array of strings as shell words, escaped.
fn words(value: &Value) -> String {
    let list: Vec<&str> = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    safe(&shlex::try_join(list.iter().copied()).unwrap_or_else(|_| list.join(" ")))
}
