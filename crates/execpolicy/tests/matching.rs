//! Evaluation: prefixes, precedence, canonical matching, host resolution, examples,
//! multiple files, `check_multiple` and allowed prefixes (reference §2, §4.2, §5).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use airlock_execpolicy::{Decision, MatchOptions, PolicyParser, RuleMatch};
use pretty_assertions::assert_eq;
use support::*;

#[test]
fn strictest_decision_wins_and_matches_keep_load_order() {
    let p = policy(
        r#"
prefix_rule(pattern=["git"], decision="prompt")
prefix_rule(pattern=["git", "push"], decision="forbidden", justification="no")
prefix_rule(pattern=["git", "push", "--dry-run"])
"#,
    );
    assert_eq!(
        json(&check(&p, &["git", "push", "--dry-run"])),
        concat!(
            r#"{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt"}},"#,
            r#"{"prefixRuleMatch":{"matchedPrefix":["git","push"],"decision":"forbidden","justification":"no"}},"#,
            r#"{"prefixRuleMatch":{"matchedPrefix":["git","push","--dry-run"],"decision":"allow"}}],"decision":"forbidden"}"#
        )
    );
    assert_eq!(
        check(&p, &["git", "status"]).decision,
        Some(Decision::Prompt)
    );
}

#[test]
fn matching_is_positional_byte_exact_and_ignores_shell_syntax() {
    let p = policy(r#"prefix_rule(pattern=["git", "push"])"#);
    assert!(check(&p, &["git", "-C", "x", "push"]).decision.is_none());
    assert!(
        check(&p, &["git", "push", "&&", "rm", "-rf", "/"])
            .decision
            .is_some()
    );
    assert!(check(&p, &["bash", "-lc", "git push"]).decision.is_none());
    assert!(check(&p, &["Git", "push"]).decision.is_none());
    assert!(check(&p, &["git"]).decision.is_none());
    assert!(check(&p, &[]).decision.is_none());
}

#[test]
fn canonical_matching_folds_program_and_arguments() {
    let p = policy(
        r#"prefix_rule(pattern=["git", ["status", "log"]], canonical_matching=True, decision="prompt")"#,
    );
    let e = check(&p, &["GIT", "\u{17f}tatus"]);
    assert_eq!(
        e.matched_rules,
        vec![RuleMatch::PrefixRuleMatch {
            matched_prefix: argv(&["GIT", "\u{17f}tatus"]),
            decision: Decision::Prompt,
            resolved_program: None,
            justification: None,
        }]
    );
    assert!(check(&p, &["git.exe", "status"]).decision.is_none());
    assert!(
        check(&p, &["\u{ff27}\u{ff29}\u{ff34}", "status"])
            .decision
            .is_none()
    );
}

#[test]
fn canonical_rules_from_other_groups_follow_the_exact_group() {
    let p = policy(
        r#"
prefix_rule(pattern=["GIT", "log"], canonical_matching=True, decision="forbidden")
prefix_rule(pattern=["git", "log"], decision="allow")
prefix_rule(pattern=["Git", "log"], decision="prompt")
"#,
    );
    // Group `git` first (exact rule), then canonical rules of other groups; the exact
    // rule of group `Git` never matches `git`.
    let decisions: Vec<_> = check(&p, &["git", "log"])
        .matched_rules
        .iter()
        .map(RuleMatch::decision)
        .collect();
    assert_eq!(decisions, vec![Decision::Allow, Decision::Forbidden]);
}

#[test]
fn basename_fallback_only_when_resolution_is_on_and_nothing_matched_exactly() {
    let p = policy(
        r#"
prefix_rule(pattern=["git", "push"], decision="forbidden")
prefix_rule(pattern=["/usr/bin/git"], decision="allow")
"#,
    );
    assert!(
        check(&p, &["/usr/local/bin/git", "push"])
            .decision
            .is_none()
    );
    assert_eq!(
        json(&check_resolved(&p, &["/usr/local/bin/git", "push"])),
        r#"{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","push"],"decision":"forbidden","resolvedProgram":"/usr/local/bin/git"}}],"decision":"forbidden"}"#
    );
    // An exact match suppresses resolution even when resolution would be stricter.
    assert_eq!(
        check_resolved(&p, &["/usr/bin/git", "push"]).decision,
        Some(Decision::Allow)
    );
    // Relative and `~` tokens resolve against the context's cwd and home.
    assert_eq!(
        json(&check_resolved(&p, &["./bin/../git", "push"])),
        r#"{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","push"],"decision":"forbidden","resolvedProgram":"/work/repo/git"}}],"decision":"forbidden"}"#
    );
    assert_eq!(
        check_resolved(&p, &["~/git", "push"]).matched_rules[0],
        RuleMatch::PrefixRuleMatch {
            matched_prefix: argv(&["git", "push"]),
            decision: Decision::Forbidden,
            resolved_program: airlock_execpolicy::AbsolutePathBuf::new("/home/me/git".as_ref()),
            justification: None,
        }
    );
    assert!(check_resolved(&p, &["/", "push"]).decision.is_none());
}

#[test]
fn host_executable_gates_basename_fallback() {
    let p = policy(
        r#"
host_executable(name="git", paths=["/usr/bin/git"])
host_executable(name="rg", paths=[])
prefix_rule(pattern=["git", "status"])
prefix_rule(pattern=["rg"])
prefix_rule(pattern=["GIT", "log"], canonical_matching=True)
host_executable(name="GIT", paths=["/x/GIT"])
"#,
    );
    assert_eq!(
        check_resolved(&p, &["/usr/bin/git", "status"]).decision,
        Some(Decision::Allow)
    );
    assert!(
        check_resolved(&p, &["/tmp/git", "status"])
            .decision
            .is_none()
    );
    assert!(
        check_resolved(&p, &["/usr/bin/rg", "x"]).decision.is_none(),
        "paths=[] never resolves"
    );
    // Gate 2: the canonical group `GIT` is bound elsewhere, so `/usr/bin/git log` skips it.
    assert!(
        check_resolved(&p, &["/usr/bin/git", "log"])
            .decision
            .is_none()
    );
    assert_eq!(
        check_resolved(&p, &["/x/GIT", "log"]).decision,
        Some(Decision::Allow)
    );
}

#[test]
fn examples_are_checked_against_their_own_rule_only() {
    // The second rule would match "git push", but examples only see their own call.
    let message = load_error(
        r#"
prefix_rule(pattern=["git", "status"], match=["git stat", ["git", "log", "-1"], "hg 'a b'"])
prefix_rule(pattern=["git"])
"#,
    );
    assert_eq!(
        message,
        r#"expected every example to match at least one rule. rules: ["PrefixRule { pattern: PrefixPattern { canonical_matching: false, first: \"git\", rest: [Single(\"status\")] }, decision: Allow, justification: None }"]; unmatched examples: ["git stat", "git log -1", "hg 'a b'"]"#
    );
    let message = load_error(
        r#"prefix_rule(pattern=["git", "pull"], decision="forbidden", justification="j", not_match=["git pull origin"], match=["nope"])"#,
    );
    assert_eq!(
        message,
        r#"expected example to not match rule `PrefixRuleMatch { matched_prefix: ["git", "pull"], decision: Forbidden, resolved_program: None, justification: Some("j") }`: git pull origin"#
    );
    policy(
        r#"
prefix_rule(pattern=["git", "status"], canonical_matching=True, match=["GIT STATUS", "/x/Git Status"], not_match=["gitx status"])
prefix_rule(pattern=["ls"], not_match=["LS"])
"#,
    );
}

#[test]
fn examples_use_host_resolution_with_the_files_own_bindings() {
    let message = load_error(
        r#"
prefix_rule(pattern=["git", "status"], not_match=["/usr/bin/git status"])
"#,
    );
    assert!(
        message.contains(r#"resolved_program: Some(AbsolutePathBuf("/usr/bin/git"))"#),
        "{message}"
    );
    // A later binding in the same file gates the example out, so it passes.
    policy(
        r#"
prefix_rule(pattern=["git", "status"], not_match=["/usr/bin/git status"])
host_executable(name="git", paths=["/opt/git"])
"#,
    );
    // A binding in a later file cannot break an earlier file's examples.
    let mut parser = PolicyParser::new();
    parser
        .parse(
            "a.rules",
            r#"prefix_rule(pattern=["git"], match=["/opt/git x"])"#,
        )
        .unwrap();
    parser
        .parse(
            "b.rules",
            r#"host_executable(name="git", paths=["/usr/bin/git"])"#,
        )
        .unwrap();
}

#[test]
fn files_load_in_order_and_host_bindings_are_global() {
    let mut parser = PolicyParser::new();
    parser
        .parse(
            "a.rules",
            r#"host_executable(name="git", paths=["/usr/bin/git"])"#,
        )
        .unwrap();
    parser
        .parse(
            "b.rules",
            r#"prefix_rule(pattern=["git"], match=["/usr/bin/git log"])"#,
        )
        .unwrap();
    parser
        .parse(
            "c.rules",
            r#"prefix_rule(pattern=["git"], decision="prompt")"#,
        )
        .unwrap();
    let p = parser.build();
    let decisions: Vec<_> = check(&p, &["git"])
        .matched_rules
        .iter()
        .map(RuleMatch::decision)
        .collect();
    assert_eq!(decisions, vec![Decision::Allow, Decision::Prompt]);
}

#[test]
fn check_multiple_adds_heuristics_for_unmatched_segments() {
    let p = policy(r#"prefix_rule(pattern=["git", "status"])"#);
    let segments = vec![argv(&["git", "status"]), argv(&["rm", "-rf", "x"])];
    let fallback = |cmd: &[String]| {
        if cmd[0] == "rm" {
            Decision::Forbidden
        } else {
            Decision::Prompt
        }
    };
    let e = p.check_multiple(&segments, &MatchOptions::default(), &fallback);
    assert_eq!(
        json(&e),
        r#"{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","status"],"decision":"allow"}},{"heuristicsRuleMatch":{"command":["rm","-rf","x"],"decision":"forbidden"}}],"decision":"forbidden"}"#
    );
    assert!(e.has_policy_match());
}

#[test]
fn allowed_prefixes_expand_alternatives_and_skip_stricter_rules() {
    let p = policy(
        r#"
prefix_rule(pattern=[["npm", "pnpm"], "run", ["test", "lint"]])
prefix_rule(pattern=["git", "push"], decision="prompt")
prefix_rule(pattern=["npm", "run", "test"])
"#,
    );
    assert_eq!(
        p.get_allowed_prefixes(),
        vec![
            argv(&["npm", "run", "test"]),
            argv(&["npm", "run", "lint"]),
            argv(&["pnpm", "run", "test"]),
            argv(&["pnpm", "run", "lint"]),
        ]
    );
}

#[test]
fn live_amendment_adds_an_allow_rule_once() {
    let mut p = policy(r#"prefix_rule(pattern=["git", "push"], decision="forbidden")"#);
    p.add_allow_prefix_rule(&argv(&["cargo", "test"]));
    p.add_allow_prefix_rule(&argv(&["cargo", "test"]));
    assert_eq!(p.rules().len(), 2);
    assert_eq!(
        check(&p, &["cargo", "test", "--all"]).decision,
        Some(Decision::Allow)
    );
    // An appended allow never overrides a stricter rule.
    p.add_allow_prefix_rule(&argv(&["git", "push"]));
    assert_eq!(
        check(&p, &["git", "push"]).decision,
        Some(Decision::Forbidden)
    );
}

#[test]
fn large_groups_use_the_second_token_index_without_changing_order() {
    let mut source = String::new();
    for i in 0..500 {
        source.push_str(&format!("prefix_rule(pattern=[\"git\", \"sub{i}\"])\n"));
    }
    source.push_str("prefix_rule(pattern=[\"git\"], decision=\"prompt\")\n");
    source.push_str(
        "prefix_rule(pattern=[\"git\", [\"sub7\", \"other\"], \"x\"], decision=\"forbidden\")\n",
    );
    let p = policy(&source);
    let e = check(&p, &["git", "sub7", "x"]);
    let prefixes: Vec<usize> = e
        .matched_rules
        .iter()
        .map(|m| match m {
            RuleMatch::PrefixRuleMatch { matched_prefix, .. } => matched_prefix.len(),
            RuleMatch::HeuristicsRuleMatch { .. } => 0,
        })
        .collect();
    assert_eq!(prefixes, vec![2, 1, 3]);
    assert_eq!(e.decision, Some(Decision::Forbidden));
}
