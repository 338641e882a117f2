//! `airlock explain` for people: a short report, one layer after the other (policy:
//! segments, deny view, heuristics; approval: requirement, reviewer; enforcement: the
//! first attempt).

use std::fmt::Write as _;

use airlock_execpolicy::RuleMatch;
use airlock_protocol::{ExecApprovalRequirement, FileSystemSandboxKind, PermissionProfile};

use super::Explanation;

/// The command as one shell-quoted line, with control, invisible and bidirectional
/// characters shown as `\u{..}` escapes so that a terminal cannot hide or reorder text.
fn words(command: &[String]) -> String {
    let joined =
        shlex::try_join(command.iter().map(String::as_str)).unwrap_or_else(|_| command.join(" "));
    visible(&joined)
}

fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}');
        if hidden {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// The report.
pub(super) fn render(explanation: &Explanation) -> String {
    let mut out = String::new();
    let outcome = &explanation.outcome;
    let parsed = &outcome.parsed;
    let _ = writeln!(out, "command:      {}", words(&explanation.command));
    let _ = writeln!(out, "cwd:          {}", explanation.cwd.display());
    let _ = writeln!(
        out,
        "settings:     approval {} · profile {} ({}) · {}",
        plain_json(&explanation.approval_policy),
        explanation.profile_id,
        file_system(explanation.fs_policy.kind),
        plain_json(&explanation.sandbox_permissions),
    );
    let rules = if outcome.policy_unavailable.is_some() {
        "UNAVAILABLE (every command needs approval)".to_owned()
    } else if explanation.rules_files.is_empty() {
        "none".to_owned()
    } else {
        explanation
            .rules_files
            .iter()
            .map(|file| file.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "rules:        {rules}");
    for line in &explanation.network {
        let _ = writeln!(out, "{line}");
    }

    let _ = writeln!(out, "\npolicy layer");
    let kind = if parsed.plain { "plain" } else { "not plain" };
    let _ = writeln!(out, "  segments ({kind}):");
    for (index, segment) in outcome.segments.iter().enumerate() {
        let how = segment
            .matches
            .iter()
            .map(describe_match)
            .collect::<Vec<_>>()
            .join("; ");
        let mut flags = Vec::new();
        if segment.known_safe {
            flags.push("known-safe");
        }
        if segment.dangerous {
            flags.push("dangerous");
        }
        let flags = if flags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", flags.join(", "))
        };
        let _ = writeln!(
            out,
            "    {}. {} → {}{flags} ({how})",
            index + 1,
            words(&segment.command),
            segment.decision.as_str()
        );
    }
    for note in &parsed.notes {
        let _ = writeln!(out, "  note: {}", visible(&note.to_string()));
    }
    let _ = writeln!(
        out,
        "  deny view: {} command(s) inspected",
        parsed.inner.len()
    );
    for found in &outcome.deny_view_matches {
        let _ = writeln!(
            out,
            "    {} → {}",
            words(&found.command),
            describe_match(&found.rule)
        );
    }
    if let Some(danger) = &outcome.dangerous {
        let _ = writeln!(
            out,
            "  dangerous: {} ({})",
            words(&danger.command),
            danger.description
        );
    }
    if !outcome.code_loading_variables.is_empty() {
        let _ = writeln!(
            out,
            "  code-loading assignments: {}",
            outcome.code_loading_variables.join(", ")
        );
    }
    let _ = writeln!(out, "  decision: {}", outcome.decision.as_str());

    let _ = writeln!(out, "\napproval layer");
    let (kind, reason) = match &outcome.requirement {
        ExecApprovalRequirement::Skip { bypass_sandbox, .. } => (
            if *bypass_sandbox {
                "skip (no approval; every segment explicitly allowed, may bypass the sandbox)"
            } else {
                "skip (no approval)"
            },
            None,
        ),
        ExecApprovalRequirement::NeedsApproval { reason, .. } => {
            ("needs approval", reason.as_deref())
        }
        ExecApprovalRequirement::Forbidden { reason } => {
            ("forbidden (rejected without asking)", Some(reason.as_str()))
        }
    };
    let _ = writeln!(out, "  requirement: {kind}");
    if let Some(reason) = reason {
        let _ = writeln!(out, "  reason: {reason}");
    }
    for cause in &outcome.prompt_causes {
        if Some(cause.detail.as_str()) != reason {
            let _ = writeln!(out, "  because: {}", visible(&cause.detail));
        }
    }
    if let Some(amendment) = outcome.requirement.proposed_execpolicy_amendment() {
        let _ = writeln!(
            out,
            "  offered rule: prefix_rule(pattern={}, decision=\"allow\")",
            serde_json::to_string(amendment.command()).unwrap_or_default()
        );
        let _ = writeln!(
            out,
            "    {}",
            crate::common::amendment_scope(&explanation.amendment_file)
        );
    }
    let _ = writeln!(out, "  reviewer: {}", explanation.reviewer);
    let unsandboxed = &outcome.unsandboxed;
    if unsandboxed.bypass_disabled_by_config {
        let _ = writeln!(
            out,
            "  stays in the sandbox: `[exec_policy] allow_rules_bypass_sandbox = false` (allow rules skip only the prompt)"
        );
    }
    if let Some(refused) = &unsandboxed.refused {
        let _ = writeln!(
            out,
            "  never runs outside the sandbox: {}",
            visible(refused)
        );
    }
    for note in &unsandboxed.notes {
        let _ = writeln!(out, "  runs workspace code unconfined: {}", visible(note));
    }

    let _ = writeln!(out, "\nenforcement layer");
    let first = match explanation.first_attempt_sandboxed {
        None => "nothing runs".to_owned(),
        Some(true) => "sandboxed".to_owned(),
        Some(false) => format!("not sandboxed ({})", unsandboxed_why(explanation)),
    };
    let _ = writeln!(out, "  first attempt: {first}");
    out
}

/// A value's JSON form, without the quotes of a plain string.
fn plain_json<T: serde::Serialize>(value: &T) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    text.trim_matches('"').to_owned()
}

fn describe_match(found: &RuleMatch) -> String {
    match found {
        RuleMatch::PrefixRuleMatch {
            matched_prefix,
            decision,
            resolved_program,
            justification,
        } => {
            let mut text = format!(
                "rule {} → {}",
                serde_json::to_string(matched_prefix).unwrap_or_default(),
                decision.as_str()
            );
            if let Some(program) = resolved_program {
                let _ = write!(text, " via {}", program.as_path().display());
            }
            if let Some(justification) = justification {
                let _ = write!(text, ": {justification}");
            }
            text
        }
        RuleMatch::HeuristicsRuleMatch { .. } => "no rule; heuristics".to_owned(),
    }
}

fn file_system(kind: FileSystemSandboxKind) -> &'static str {
    match kind {
        FileSystemSandboxKind::Restricted => "restricted filesystem",
        FileSystemSandboxKind::Unrestricted => "unrestricted filesystem",
        FileSystemSandboxKind::ExternalSandbox => "external sandbox",
    }
}

fn unsandboxed_why(explanation: &Explanation) -> &'static str {
    if matches!(
        explanation.outcome.requirement,
        ExecApprovalRequirement::Skip {
            bypass_sandbox: true,
            ..
        }
    ) {
        "every segment is explicitly allowed"
    } else if explanation
        .sandbox_permissions
        .requires_escalated_permissions()
    {
        "escalation requested"
    } else {
        match explanation.profile {
            PermissionProfile::External { .. } => "an external sandbox confines it",
            PermissionProfile::Disabled => "the profile disables the sandbox",
            PermissionProfile::Managed { .. } => "the profile needs no sandbox",
        }
    }
}
