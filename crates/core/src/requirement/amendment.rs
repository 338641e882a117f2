//! Amendment proposals: which prefix rule is offered with a requirement (spec 03
//! "Amendment proposals", edge cases 5, 11 and 21; reference §8).

use airlock_execpolicy::RuleMatch;
use airlock_shell::{
    DANGER_PATTERNS, basename, deny_view, is_code_loading_variable, is_exec_wrapper,
};

use super::BANNED_PREFIX_SUGGESTIONS;
use super::outcome::SegmentVerdict;

/// Network tools: a prefix rule for one of them alone would allow any transfer to any
/// host (issue 18 item 6, field log BL-15).
const NETWORK_TOOLS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "rsync", "telnet", "ftp",
];

/// Interpreters and shells: a prefix rule for one of them alone would allow any program
/// (issue 18 item 6, field log BL-15).
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "py",
    "pypy",
    "pypy3",
    "pythonw",
    "pyw",
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "irb",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "rscript",
    "osascript",
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "pwsh",
    "powershell",
    "powershell.exe",
];

/// Whether `candidate` names a network tool or an interpreter (by basename, `python3.12`
/// counting as `python3`) followed by nothing but options: such a prefix covers every
/// invocation (`["curl"]`, `["python3", "-u"]`, `["node", "-e"]`).
fn is_bare_tool(candidate: &[String]) -> bool {
    let Some((program, rest)) = candidate.split_first() else {
        return false;
    };
    let name = basename(program).to_ascii_lowercase();
    let versionless = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let known = |list: &[&str]| list.contains(&name.as_str()) || list.contains(&versionless);
    (known(NETWORK_TOOLS) || known(INTERPRETERS)) && rest.iter().all(|arg| arg.starts_with('-'))
}

/// Whether `candidate` may never be proposed: empty, equal to a banned prefix (reference
/// §8, spec 03 edge case 11), starting with an exec wrapper (edge case 21), a bare
/// network tool or interpreter (issue 18 item 6), or — read as a command — dangerous or
/// carrying a code-loading assignment (edge case 11). A candidate whose deny view is
/// incomplete is refused too (fail closed).
pub(super) fn is_refused(candidate: &[String]) -> bool {
    let Some(program) = candidate.first() else {
        return true;
    };
    if is_banned(candidate) || is_exec_wrapper(program) || is_bare_tool(candidate) {
        return true;
    }
    let view = deny_view(candidate);
    !view.is_complete()
        || view.commands.iter().any(|inner| {
            DANGER_PATTERNS
                .iter()
                .any(|pattern| pattern.matches(&inner.argv))
        })
        || view
            .assignments
            .iter()
            .any(|assignment| is_code_loading_variable(&assignment.name))
}

/// Whether `candidate` equals one of [`BANNED_PREFIX_SUGGESTIONS`] (equality, not prefix).
fn is_banned(candidate: &[String]) -> bool {
    BANNED_PREFIX_SUGGESTIONS.iter().any(|banned| {
        banned.len() == candidate.len()
            && banned
                .iter()
                .zip(candidate)
                .all(|(word, token)| *word == token.as_str())
    })
}

/// What decides a proposal besides the segment verdicts.
pub(super) struct ProposalInputs<'a> {
    /// Whether the command is plain: non-plain commands get no proposal (edge case 5).
    pub plain: bool,
    /// The segment verdicts.
    pub verdicts: &'a [SegmentVerdict],
    /// Whether a `prompt` rule matched anywhere (segments or deny view).
    pub prompt_rule_matched: bool,
}

/// The proposal for a `NeedsApproval` requirement (reference §8 "Prompt"):
/// 1. the model's `prefix_rule`, when no rule matched any segment, no segment is refused
///    as a command, the prefix itself is not refused, and `allows_every_segment(prefix)`
///    (the policy plus that allow rule would allow every segment);
/// 2. otherwise nothing when a `prompt` rule matched;
/// 3. otherwise the first segment whose heuristic verdict is `prompt`, unless refused —
///    without falling back to a later segment (edge case 21).
pub(super) fn propose_for_prompt(
    inputs: &ProposalInputs<'_>,
    model_prefix: Option<&[String]>,
    allows_every_segment: &dyn Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    if !inputs.plain {
        return None;
    }
    if let Some(prefix) = model_prefix {
        let no_rule_matched = inputs
            .verdicts
            .iter()
            .all(|verdict| !verdict.matches.iter().any(RuleMatch::is_policy_match));
        if no_rule_matched
            && !is_refused(prefix)
            && inputs
                .verdicts
                .iter()
                .all(|verdict| !is_refused(&verdict.command))
            && allows_every_segment(prefix)
        {
            return Some(prefix.to_vec());
        }
    }
    if inputs.prompt_rule_matched {
        return None;
    }
    first_heuristic(inputs.verdicts, airlock_execpolicy::Decision::Prompt)
}

/// The proposal for a `Skip` requirement, offered in case a sandboxed run fails
/// (reference §8 "Skip"): nothing when any rule matched; otherwise the first segment
/// whose heuristic verdict is `allow`, unless refused (no fallback, edge case 21).
pub(super) fn propose_for_skip(inputs: &ProposalInputs<'_>) -> Option<Vec<String>> {
    if !inputs.plain
        || inputs
            .verdicts
            .iter()
            .any(|verdict| verdict.matches.iter().any(RuleMatch::is_policy_match))
    {
        return None;
    }
    first_heuristic(inputs.verdicts, airlock_execpolicy::Decision::Allow)
}

fn first_heuristic(
    verdicts: &[SegmentVerdict],
    decision: airlock_execpolicy::Decision,
) -> Option<Vec<String>> {
    let candidate = verdicts.iter().find(|verdict| {
        verdict.matches.iter().any(|found| {
            matches!(found, RuleMatch::HeuristicsRuleMatch { decision: d, .. } if *d == decision)
        })
    })?;
    (!is_refused(&candidate.command)).then(|| candidate.command.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn refusals() {
        for refused in [
            &[][..],
            &["git"],
            &["python3", "-c"],
            &["bash", "-lc"],
            &["sudo", "apt", "update"],
            &["/usr/bin/env", "make"],
            &["timeout", "5", "make"],
            &["rm", "-rf", "build"],
            &["git", "push", "--force"],
            &["env", "LD_PRELOAD=/tmp/x", "make"],
            &["curl"],
            &["/usr/bin/wget", "-q"],
            &["ssh"],
            &["nc", "-l"],
            &["python3.12"],
            &["node", "-e"],
            &["perl", "-e"],
            &["ruby"],
            &["bash"],
            &["setsid"],
        ] {
            assert!(is_refused(&argv(refused)), "{refused:?} should be refused");
        }
        for offered in [
            &["cargo", "build"][..],
            &["git", "fetch"],
            &["python3", "-c", "print(1)"],
            &["bash", "script.sh"],
            &["rm", "x"],
            &["curl", "https://example.com/x"],
            &["ssh", "host", "uptime"],
            &["node", "build.js"],
        ] {
            assert!(!is_refused(&argv(offered)), "{offered:?} should be offered");
        }
    }
}
