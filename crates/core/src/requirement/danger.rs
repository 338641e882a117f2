//! Dangerous commands anywhere in the deny view (spec 03 "Dangerous commands", edge
//! cases 7 and 19).

use airlock_shell::{DANGER_PATTERNS, InnerCommand};

use super::outcome::{DangerSummary, SegmentVerdict};

/// The first dangerous deny-view command that the user did not explicitly allow.
///
/// A dangerous command counts wherever the deny view finds it (edge case 7), also inside
/// a segment an allow rule matched (edge case 19: `timeout 5 rm -rf x` with an allow rule
/// for `timeout`). The only exception is a segment that is itself the dangerous command
/// and that explicit rules allow (`rm -rf build` with an allow rule for `rm -rf build`):
/// the user's rule names exactly that command.
///
/// The heuristic is a prompt source only where it raises the decision (decision 13 as
/// clarified): when every dangerous segment is already decided `prompt` (or stricter) by
/// its own rules, the danger adds nothing, so under granular it is not checked against
/// `sandbox_approval`. A danger the deny view finds but no segment accounts for still
/// counts (fail closed).
pub(super) fn first_unallowed_danger(
    inner: &[InnerCommand],
    verdicts: &[SegmentVerdict],
) -> Option<DangerSummary> {
    let mut dangerous_segments = verdicts
        .iter()
        .filter(|verdict| verdict.dangerous)
        .peekable();
    if dangerous_segments.peek().is_some()
        && dangerous_segments.all(SegmentVerdict::raised_by_rules_alone)
    {
        return None;
    }
    inner.iter().find_map(|command| {
        let pattern = DANGER_PATTERNS
            .iter()
            .find(|pattern| pattern.matches(&command.argv))?;
        let allowed = verdicts
            .iter()
            .any(|verdict| verdict.allowed_by_rule() && verdict.command == command.argv);
        (!allowed).then(|| DangerSummary {
            pattern: pattern.id,
            description: pattern.description,
            command: command.argv.clone(),
        })
    })
}
