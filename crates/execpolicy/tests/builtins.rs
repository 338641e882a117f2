//! Each builtin, each validation error and its order (reference `execpolicy.md` §3–4).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use pretty_assertions::assert_eq;
use support::*;

#[test]
fn prefix_rule_defaults_to_allow_and_accepts_positional_arguments() {
    let p = policy(
        r#"
prefix_rule(["ls"])
prefix_rule(["rm"], "forbidden", [], ["rmdir x"], "never delete", False)
"#,
    );
    assert_eq!(
        json(&check(&p, &["ls", "-la"])),
        r#"{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["ls"],"decision":"allow"}}],"decision":"allow"}"#
    );
    assert_eq!(
        json(&check(&p, &["rm", "-rf", "/"])),
        r#"{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["rm"],"decision":"forbidden","justification":"never delete"}}],"decision":"forbidden"}"#
    );
}

#[test]
fn first_position_alternatives_create_one_rule_each() {
    let p = policy(r#"prefix_rule(pattern=[["npm", "pnpm", "npm"], "test"])"#);
    assert_eq!(p.rules().len(), 3);
    assert_eq!(check(&p, &["pnpm", "test"]).matched_rules.len(), 1);
    // A duplicated first alternative gives a duplicated rule; both match.
    assert_eq!(check(&p, &["npm", "test"]).matched_rules.len(), 2);
}

#[test]
fn later_alternatives_do_not_duplicate_and_single_element_lists_are_strings() {
    let p = policy(r#"prefix_rule(pattern=["gh", ["pr"], ["view", "list", "view"]])"#);
    assert_eq!(p.rules().len(), 1);
    assert_eq!(
        format!("{:?}", p.rules()[0].pattern),
        r#"PrefixPattern { canonical_matching: false, first: "gh", rest: [Single("pr"), Alts(["view", "list", "view"])] }"#
    );
    assert_eq!(check(&p, &["gh", "pr", "view"]).matched_rules.len(), 1);
}

#[test]
fn empty_string_tokens_match_only_empty_tokens() {
    let p = policy(r#"prefix_rule(pattern=["echo", ""])"#);
    assert!(check(&p, &["echo", ""]).decision.is_some());
    assert!(check(&p, &["echo", " "]).decision.is_none());
}

#[test]
fn prefix_rule_validation_messages() {
    for (source, expected) in [
        (
            r#"prefix_rule(pattern=["git"], decision="deny")"#,
            "error: invalid decision: deny",
        ),
        (
            r#"prefix_rule(pattern=["git"], decision="Allow")"#,
            "error: invalid decision: Allow",
        ),
        (
            r#"prefix_rule(pattern=[])"#,
            "error: invalid pattern element: pattern cannot be empty",
        ),
        (
            r#"prefix_rule(pattern=[1])"#,
            "error: invalid pattern element: pattern element must be a string or list of strings (got int)",
        ),
        (
            r#"prefix_rule(pattern=["a", ("b",)])"#,
            "error: invalid pattern element: pattern element must be a string or list of strings (got tuple)",
        ),
        (
            r#"prefix_rule(pattern=["a", None])"#,
            "error: invalid pattern element: pattern element must be a string or list of strings (got NoneType)",
        ),
        (
            r#"prefix_rule(pattern=["a", []])"#,
            "error: invalid pattern element: pattern alternatives cannot be empty",
        ),
        (
            r#"prefix_rule(pattern=["a", ["b", ["c"]]])"#,
            "error: invalid pattern element: pattern alternative must be a string (got list)",
        ),
        (
            r#"prefix_rule(pattern=["a"], justification="  ")"#,
            "error: invalid rule: justification cannot be empty",
        ),
        (
            r#"prefix_rule(pattern="git status")"#,
            "error: Type of parameter `pattern` doesn't match, expected `list`, actual `string (repr: \"git status\")`",
        ),
        (
            r#"prefix_rule(pattern=["a"], decision=None)"#,
            "error: Type of parameter `decision` doesn't match, expected `str`, actual `NoneType (repr: None)`",
        ),
        (
            r#"prefix_rule(decision="allow")"#,
            "error: Missing parameter `pattern` for call to `prefix_rule`",
        ),
        (
            r#"prefix_rule(pattern=["a"], reviewer="x")"#,
            "error: Found `reviewer` extra named parameter(s) for call to prefix_rule",
        ),
        (
            r#"prefix_rule(["a"], "allow", [], [], None, False, 7)"#,
            "error: Found 1 extra positional argument(s) for call to prefix_rule",
        ),
    ] {
        assert_eq!(key_line(&load_error(source)), expected, "source: {source}");
    }
}

#[test]
fn validation_order_is_decision_justification_pattern_examples() {
    let all_bad = r#"prefix_rule(pattern=[], decision="nope", justification="", match=[()])"#;
    assert_eq!(
        key_line(&load_error(all_bad)),
        "error: invalid decision: nope"
    );
    let no_decision = r#"prefix_rule(pattern=[], justification="", match=[()])"#;
    assert_eq!(
        key_line(&load_error(no_decision)),
        "error: invalid rule: justification cannot be empty"
    );
    let pattern_then_example = r#"prefix_rule(pattern=[], match=[()])"#;
    assert_eq!(
        key_line(&load_error(pattern_then_example)),
        "error: invalid pattern element: pattern cannot be empty"
    );
    let match_before_not_match = r#"prefix_rule(pattern=["a"], match=[[]], not_match=[""])"#;
    assert_eq!(
        key_line(&load_error(match_before_not_match)),
        "error: invalid example: example cannot be an empty list"
    );
}

#[test]
fn example_shape_messages() {
    for (examples, expected) in [
        (
            r#"[("a",)]"#,
            "example must be a string or list of strings (got tuple)",
        ),
        (
            r#"[1]"#,
            "example must be a string or list of strings (got int)",
        ),
        (r#"[["a", 1]]"#, "example tokens must be strings (got int)"),
        (r#"[[]]"#, "example cannot be an empty list"),
        (r#"[""]"#, "example cannot be an empty string"),
        (r#"["   "]"#, "example cannot be an empty string"),
        (
            r#"["git 'unterminated"]"#,
            "example string has invalid shell syntax",
        ),
    ] {
        let source = format!(r#"prefix_rule(pattern=["git"], match={examples})"#);
        assert_eq!(
            key_line(&load_error(&source)),
            format!("error: invalid example: {expected}")
        );
    }
}

#[test]
fn host_executable_validation_messages() {
    for (source, expected) in [
        (
            r#"host_executable(name="", paths=[])"#,
            "host_executable name cannot be empty",
        ),
        (
            r#"host_executable(name="bin/git", paths=[])"#,
            "host_executable name must be a bare executable name (got bin/git)",
        ),
        (
            r#"host_executable(name=".", paths=[])"#,
            "host_executable name must be a bare executable name (got .)",
        ),
        (
            r#"host_executable(name="git", paths=["usr/bin/git"])"#,
            "host_executable paths must be absolute (got usr/bin/git)",
        ),
        (
            r#"host_executable(name="git", paths=["~/bin/git"])"#,
            "host_executable paths must be absolute (got ~/bin/git)",
        ),
        (
            r#"host_executable(name="git", paths=[1])"#,
            "host_executable paths must be strings (got int)",
        ),
        (
            r#"host_executable(name="git", paths=["/usr/bin/git2"])"#,
            "host_executable path `/usr/bin/git2` must have basename `git`",
        ),
        (
            r#"host_executable(name="git", paths=["/"])"#,
            "host_executable path `/` must have basename `git`",
        ),
    ] {
        assert_eq!(
            key_line(&load_error(source)),
            format!("error: invalid rule: {expected}"),
            "{source}"
        );
    }
    assert_eq!(
        key_line(&load_error(
            r#"host_executable(name="git", paths="/usr/bin/git")"#
        )),
        "error: Type of parameter `paths` doesn't match, expected `list`, actual `string (repr: \"/usr/bin/git\")`"
    );
}

#[test]
fn host_executable_paths_are_normalised_and_later_definitions_replace_earlier() {
    let p = policy(
        r#"
host_executable(name="git", paths=["/opt/../usr/bin//git"])
host_executable(name="git", paths=["/usr/local/bin/git", "/usr/local/bin/git"])
"#,
    );
    let paths: Vec<_> = p
        .host_executable("git")
        .unwrap()
        .iter()
        .map(|p| p.as_path().to_owned())
        .collect();
    assert_eq!(paths, vec![std::path::PathBuf::from("/usr/local/bin/git")]);
}

#[test]
fn network_rule_is_validated_stored_and_ignored_by_check() {
    let p = policy(
        r#"
network_rule(host="Evil.Example.COM.", protocol="http", decision="deny", justification="exfil")
network_rule("pypi.org:443", "http-connect", "allow")
"#,
    );
    let rules = p.network_rules();
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].host, "evil.example.com");
    assert_eq!(rules[0].decision, airlock_execpolicy::Decision::Forbidden);
    assert_eq!(rules[1].host, "pypi.org");
    assert_eq!(
        rules[1].protocol,
        airlock_execpolicy::NetworkRuleProtocol::Https
    );
    assert_eq!(
        json(&check(&p, &["curl", "pypi.org"])),
        r#"{"matchedRules":[]}"#
    );
    for (source, expected) in [
        (
            r#"network_rule(host="x.com", protocol="ftp", decision="allow")"#,
            "error: invalid rule: network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got ftp)",
        ),
        (
            r#"network_rule(host="x.com", protocol="https", decision="ask")"#,
            "error: invalid decision: ask",
        ),
        (
            r#"network_rule(host="x.com", protocol="https")"#,
            "error: Missing parameter `decision` for call to `network_rule`",
        ),
        (
            r#"network_rule(host="https://x.com", protocol="https", decision="allow")"#,
            "error: invalid rule: network_rule host must be a hostname or IP literal (without scheme or path)",
        ),
        (
            r#"network_rule(host="*.x.com", protocol="https", decision="allow")"#,
            "error: invalid rule: network_rule host must be a specific host; wildcards are not allowed",
        ),
    ] {
        assert_eq!(key_line(&load_error(source)), expected, "{source}");
    }
}

#[test]
fn starlark_subset() {
    let p = policy(
        r#"
def tool(name, *subs):
    prefix_rule(pattern=[name, list(subs)], decision="prompt")

for t in ["cargo", "npm"]:
    tool(t, "publish", "login")
safe = [x for x in ["ls", "pwd"] if x != "pwd"]
prefix_rule(pattern=safe, justification=f"{len(safe)} safe" if safe else "none")
prefix_rule(pattern=["\x41", "\u00e9", r"\n"]); prefix_rule(pattern=["a"] + ["b"] * 2,)
"#,
    );
    assert_eq!(
        check(&p, &["npm", "login"]).decision,
        Some(airlock_execpolicy::Decision::Prompt)
    );
    assert_eq!(
        json(&check(&p, &["ls"])),
        r#"{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["ls"],"decision":"allow","justification":"1 safe"}}],"decision":"allow"}"#
    );
    assert!(check(&p, &["A", "\u{e9}", "\\n"]).decision.is_some());
    assert!(check(&p, &["a", "b", "b"]).decision.is_some());
}

#[test]
fn starlark_errors_name_file_and_line() {
    let message = load_error("\n\nprefix_rule(pattern=[\"git\"], decision=\"deny\")\n");
    assert!(
        message.starts_with("starlark error: Traceback"),
        "{message}"
    );
    assert!(message.contains("test.rules:3"), "{message}");
    for (source, expected) in [
        (
            "prefix_rule(pattern=[\"git\"]\n",
            "starlark error: error: Parse error: unexpected new line, expected symbol ')'",
        ),
        (
            "print(1)",
            "starlark error: error: Variable `print` not found, did you mean `int`?",
        ),
        (
            "struct(a=1)",
            "starlark error: error: Variable `struct` not found",
        ),
        (
            "load(\"x.star\", \"y\")",
            "starlark error: error: No imports are available, you tried `x.star`",
        ),
        (
            "while True:\n  pass",
            "starlark error: error: Parse error: cannot use reserved keyword `while`",
        ),
        (
            "fail(\"policy disabled: sorry\")",
            "error: fail: policy disabled: sorry",
        ),
        (
            "prefix_rule(pattern=[\"a\"])\nprefix_rule = 1",
            "starlark error: error: Local variable `prefix_rule` referenced before assignment",
        ),
        (
            "prefix_rule(pattern=[\"a\"], decision=\"allow\", decision=\"allow\")",
            "starlark error: error: repeated named argument",
        ),
    ] {
        assert_eq!(key_line(&load_error(source)), expected, "{source}");
    }
}

#[test]
fn a_failing_file_adds_nothing() {
    let mut parser = airlock_execpolicy::PolicyParser::new();
    parser
        .parse("a.rules", r#"prefix_rule(pattern=["git"])"#)
        .unwrap();
    let err = parser.parse(
        "b.rules",
        "prefix_rule(pattern=[\"ls\"])\nprefix_rule(pattern=[\"rm\"], decision=\"x\")",
    );
    assert!(err.is_err());
    let p = parser.build();
    assert_eq!(p.rules().len(), 1);
}

#[test]
fn too_deep_nesting_is_a_load_error_not_a_crash() {
    let deep = format!("x = {}{}\n", "[".repeat(5000), "]".repeat(5000));
    assert_eq!(
        load_error(&deep),
        "test.rules:1: expressions nest more than 200 levels deep; .rules files cannot be nested this deeply (split the expression)"
    );
    let unary = format!("x = {}1\n", "-".repeat(5000));
    assert!(load_error(&unary).contains("nest more than 200 levels"));
    // Well within the limit: loads.
    policy(&format!(
        "x = {}{}\nprefix_rule(pattern=[\"ls\"])\n",
        "(".repeat(150),
        ")".repeat(150)
    ));
}

/// Long operator chains build syntax trees as deep as nested brackets do; each shape
/// that used to abort the process (stack overflow) at 20,000 links is a load error,
/// and the longest accepted chain of each shape loads on a 2 MiB thread (the default
/// for spawned threads) in this (debug) build.
#[test]
fn long_operator_chains_are_load_errors_not_crashes() {
    let n = 20_000;
    let shapes = |n: usize| {
        [
            format!("prefix_rule(pattern=[\"a\"{}])\n", " + \"a\"".repeat(n)),
            format!("x = {}True\n", "not ".repeat(n)),
            format!("x = prefix_rule{}\n", ".b".repeat(n)),
            format!("x = {}1\n", "lambda: ".repeat(n)),
            format!("x = {}1\n", "1 if True else ".repeat(n / 2)),
            format!("x = True{}\n", " and True".repeat(n)),
            format!("x = [1]{}\n", "[0:1]".repeat(n)),
            format!("def f():\n    return f\nx = f{}\n", "()".repeat(n)),
        ]
    };
    for source in shapes(n) {
        let error = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || load_error(&source))
            .unwrap()
            .join()
            .unwrap();
        assert!(error.contains("chains more than 1000 operators"), "{error}");
    }
    // At the limit every shape is evaluated by Starlark without overflowing.
    for source in shapes(900) {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                // Evaluation errors (e.g. `.b` on a function) are fine; a crash is not.
                let _ = load(&source);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
