//! Deny-view matching (spec 03 "Policy evaluation over segments" item 2, edge cases 3
//! and 4): every inner command against `forbidden` and `prompt` rules, by its literal
//! program and by its basename, ignoring `host_executable`; allow rules never apply.

use airlock_execpolicy::{Decision, MatchOptions, Policy};
use airlock_shell::{ParsedCommand, SegmentSource, basename};

use super::outcome::InnerRuleMatch;

/// The `forbidden`/`prompt` matches of the deny view of `parsed` (the command `argv`).
///
/// The outer argv of an exact shell wrapper whose script was segmented (plain or heredoc
/// form) is skipped: the wrapper is only the transport of its script, whose commands are
/// the segments (as Codex evaluates it; an allow rule on `bash` does not allow
/// `bash -lc ls` either). Every other inner command is matched, the segments included.
pub(super) fn deny_view_matches(
    policy: &Policy,
    argv: &[String],
    parsed: &ParsedCommand,
) -> Vec<InnerRuleMatch> {
    let skip_outer = matches!(
        parsed.source,
        SegmentSource::PlainScript | SegmentSource::Heredoc
    );
    let literal = MatchOptions::default();
    let mut found = Vec::new();
    for inner in &parsed.inner {
        if skip_outer && inner.via.is_empty() && inner.argv == argv {
            continue;
        }
        let mut matches = policy.matches_for_command_with_options(&inner.argv, &literal);
        if let Some((program, rest)) = inner.argv.split_first() {
            let name = basename(program);
            if name != program {
                let mut renamed = Vec::with_capacity(inner.argv.len());
                renamed.push(name.to_owned());
                renamed.extend_from_slice(rest);
                matches.extend(policy.matches_for_command_with_options(&renamed, &literal));
            }
        }
        for rule in matches {
            if rule.decision() == Decision::Allow {
                continue;
            }
            let entry = InnerRuleMatch {
                command: inner.argv.clone(),
                rule,
            };
            if !found.contains(&entry) {
                found.push(entry);
            }
        }
    }
    found
}
