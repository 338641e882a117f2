//! A fast path for `.rules` files made only of literal builtin calls.
//!
//! Nearly every `.rules` file in the wild, and every file Airlock or Codex amends, is a
//! list of `prefix_rule(...)` / `host_executable(...)` / `network_rule(...)` calls whose
//! arguments are string, list and `True`/`False` literals. Evaluating those with the
//! `starlark` crate costs ~15 M instructions before the first call runs, because its
//! compiler builds the whole standard library (parsing every builtin's docstring with
//! freshly compiled regexes) the first time it compiles any call. This module reads
//! such files straight from the syntax tree instead, and hands the same arguments to
//! the same validation code as the Starlark builtins (`builtins.rs`).
//!
//! Contract: [`evaluate`] returns `Some(definitions)` only when Starlark evaluation of
//! the module would succeed with exactly those definitions, in that order. Anything
//! else — another kind of statement, a non-literal argument, an argument binding that
//! Starlark might refuse, any validation error — gives `None`, and the caller evaluates
//! the module with Starlark, which also produces the error text users see. The
//! differential tests below (every public rules file, every argument binding, string
//! literal forms, random modules) hold it to that.

use starlark::syntax::AstModule;
use starlark::syntax::ast::{ArgumentP, AstArgument, AstExpr, AstLiteral, AstStmt, ExprP, StmtP};

use crate::arg_value::ArgValue;
use crate::builtins::{
    Definition, PrefixRuleArgs, host_executable_definition, prefix_rule_definition, with_line,
};
use crate::network::NetworkRule;

/// Parameter names of `prefix_rule`, in positional order (reference `execpolicy.md` §4.1).
const PREFIX_RULE_PARAMS: &[&str] = &[
    "pattern",
    "decision",
    "match",
    "not_match",
    "justification",
    "canonical_matching",
];
/// Parameter names of `host_executable`, in positional order.
const HOST_EXECUTABLE_PARAMS: &[&str] = &["name", "paths"];
/// Parameter names of `network_rule`, in positional order.
const NETWORK_RULE_PARAMS: &[&str] = &["host", "protocol", "decision", "justification"];

/// The definitions of `ast` if it is a literal-only module that evaluates without
/// error; `None` means "evaluate it with Starlark".
pub(crate) fn evaluate(ast: &AstModule) -> Option<Vec<Definition>> {
    let mut statements = Vec::new();
    flatten(ast.statement(), &mut statements);
    statements
        .into_iter()
        .map(|statement| match &statement.node {
            StmtP::Expression(expr) => {
                let line = ast.file_span(expr.span).resolve_span().begin.line + 1;
                call(expr).map(|definition| with_line(definition, Some(line)))
            }
            _ => None,
        })
        .collect()
}

fn flatten<'a>(statement: &'a AstStmt, out: &mut Vec<&'a AstStmt>) {
    match &statement.node {
        StmtP::Statements(list) => list.iter().for_each(|s| flatten(s, out)),
        _ => out.push(statement),
    }
}

/// One `builtin(args...)` expression statement.
fn call(expr: &AstExpr) -> Option<Definition> {
    let ExprP::Call(callee, args) = &expr.node else {
        return None;
    };
    let ExprP::Identifier(name) = &callee.node else {
        return None;
    };
    match name.node.ident.as_str() {
        "prefix_rule" => {
            let [
                pattern,
                decision,
                matches,
                not_matches,
                justification,
                canonical,
            ] = bind(PREFIX_RULE_PARAMS, &args.args)?;
            prefix_rule_definition(PrefixRuleArgs {
                pattern: &list(pattern?)?,
                decision: optional(decision, string)?,
                matches: &optional(matches, list)?.unwrap_or_default(),
                not_matches: &optional(not_matches, list)?.unwrap_or_default(),
                justification: optional(justification, string)?,
                canonical_matching: optional(canonical, boolean)?,
            })
            .ok()
        }
        "host_executable" => {
            let [name, paths] = bind(HOST_EXECUTABLE_PARAMS, &args.args)?;
            host_executable_definition(string(name?)?, &list(paths?)?).ok()
        }
        "network_rule" => {
            let [host, protocol, decision, justification] = bind(NETWORK_RULE_PARAMS, &args.args)?;
            NetworkRule::parse(
                string(host?)?,
                string(protocol?)?,
                string(decision?)?,
                optional(justification, string)?,
            )
            .ok()
            .map(Definition::Network)
        }
        _ => None,
    }
}

/// Binds call arguments to parameters the way Starlark does for a builtin whose
/// parameters are all positional-or-named. `None` for anything Starlark could refuse
/// (too many positionals, a positional after a named argument, an unknown or repeated
/// name, `*args` / `**kwargs`).
fn bind<'a, const N: usize>(
    params: &[&str],
    args: &'a [AstArgument],
) -> Option<[Option<&'a AstExpr>; N]> {
    debug_assert_eq!(params.len(), N);
    let mut slots: [Option<&AstExpr>; N] = [None; N];
    let mut next_positional = 0;
    let mut seen_named = false;
    for arg in args {
        let slot = match &arg.node {
            ArgumentP::Positional(_) if seen_named => return None,
            ArgumentP::Positional(_) => {
                next_positional += 1;
                next_positional - 1
            }
            ArgumentP::Named(name, _) => {
                seen_named = true;
                params.iter().position(|p| *p == name.node)?
            }
            ArgumentP::Args(_) | ArgumentP::KwArgs(_) => return None,
        };
        let target = slots.get_mut(slot)?;
        if target.is_some() {
            return None;
        }
        *target = Some(arg.node.expr());
    }
    Some(slots)
}

/// `Some(None)` when the argument is absent, `Some(Some(v))` when present and
/// literal, `None` when present but not something the fast path evaluates.
fn optional<'a, T>(
    arg: Option<&'a AstExpr>,
    convert: impl FnOnce(&'a AstExpr) -> Option<T>,
) -> Option<Option<T>> {
    match arg {
        None => Some(None),
        Some(expr) => convert(expr).map(Some),
    }
}

fn string(expr: &AstExpr) -> Option<&str> {
    match &expr.node {
        ExprP::Literal(AstLiteral::String(text)) => Some(&text.node),
        _ => None,
    }
}

/// `True` / `False`: a literal-only module cannot rebind them.
fn boolean(expr: &AstExpr) -> Option<bool> {
    match &expr.node {
        ExprP::Identifier(name) if name.node.ident == "True" => Some(true),
        ExprP::Identifier(name) if name.node.ident == "False" => Some(false),
        _ => None,
    }
}

/// A list literal of strings and lists of strings (all validation ever accepts).
fn list(expr: &AstExpr) -> Option<Vec<ArgValue>> {
    let ExprP::List(items) = &expr.node else {
        return None;
    };
    items
        .iter()
        .map(|item| match &item.node {
            ExprP::List(inner) => inner
                .iter()
                .map(|x| string(x).map(|s| ArgValue::Str(s.to_string())))
                .collect::<Option<Vec<_>>>()
                .map(ArgValue::List),
            _ => string(item).map(|s| ArgValue::Str(s.to_string())),
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
mod tests {
    use std::path::PathBuf;

    use proptest::prelude::*;
    use starlark::environment::GlobalsBuilder;
    use starlark::syntax::{AstModule, Dialect};

    use super::evaluate;
    use crate::builtins::policy_builtins;
    use crate::parser::evaluate_with_starlark;

    fn parse(source: &str) -> starlark::Result<AstModule> {
        let dialect = Dialect {
            enable_f_strings: true,
            ..Dialect::Extended
        };
        AstModule::parse("t.rules", source.to_owned(), &dialect)
    }

    /// The fast path's answer and Starlark's, as `Debug` text (`Err` = Starlark
    /// failed). A syntax error never reaches either evaluator.
    fn both(source: &str) -> (Option<String>, Result<String, String>) {
        let ast = match parse(source) {
            Ok(ast) => ast,
            Err(error) => return (None, Err(error.to_string())),
        };
        let fast = evaluate(&ast).map(|d| format!("{d:?}"));
        let globals = GlobalsBuilder::standard().with(policy_builtins).build();
        let slow = evaluate_with_starlark(ast, &globals)
            .map(|d| format!("{d:?}"))
            .map_err(|e| e.to_string());
        (fast, slow)
    }

    /// The contract: the fast path answers only with Starlark's own successful result.
    fn assert_agrees(source: &str) -> bool {
        let (fast, slow) = both(source);
        if let Some(fast) = &fast {
            assert_eq!(Ok(fast), slow.as_ref(), "fast path differs on:\n{source}");
        }
        fast.is_some()
    }

    #[test]
    fn literal_calls_take_the_fast_path_with_starlarks_result() {
        for source in [
            "",
            "# only a comment\n",
            r#"prefix_rule(pattern=["git", ["status", "log"]], decision="allow", match=["git status"], not_match=[["git", "push"]])"#,
            r#"prefix_rule(["rm"], "forbidden", [], ["rmdir x"], "never delete", False)"#,
            r#"prefix_rule(pattern=[["npm", "pnpm"], "test"], canonical_matching=True)"#,
            "prefix_rule(pattern = [\"a\\\"b\", 'c d'])\nhost_executable(name = \"git\", paths = [\"/usr/bin/git\"])",
            r#"network_rule("pypi.org", "https", "allow", "package index"); prefix_rule(["ls"])"#,
            r#"host_executable("git", [])"#,
        ] {
            assert!(
                assert_agrees(source),
                "expected the fast path for:\n{source}"
            );
        }
    }

    #[test]
    fn anything_else_is_left_to_starlark() {
        for source in [
            "x = 1",
            "prefix_rule = 1\nprefix_rule(pattern=[\"ls\"])",
            r#"prefix_rule(pattern=["ls"]) if True else None"#,
            r#"prefix_rule(pattern=["ls"], decision=None)"#,
            r#"prefix_rule(pattern=("ls",))"#,
            r#"prefix_rule(pattern=["ls"] + ["-l"])"#,
            r#"prefix_rule(pattern=[f"ls"])"#,
            r#"prefix_rule(pattern=["ls"], pattern=["rm"])"#,
            r#"prefix_rule(["ls"], pattern=["rm"])"#,
            r#"prefix_rule(pattern=["ls"], reviewer="x")"#,
            r#"prefix_rule(["ls"], "allow", [], [], "why", False, 1)"#,
            r#"prefix_rule(*[["ls"]])"#,
            r#"prefix_rule(**{"pattern": ["ls"]})"#,
            r#"prefix_rule(decision="allow")"#,
            r#"prefix_rule(pattern=[])"#,
            r#"prefix_rule(pattern=["ls"], decision="maybe")"#,
            r#"prefix_rule(pattern=["ls"], justification="  ")"#,
            r#"prefix_rule(pattern=["ls"], match=[""])"#,
            r#"prefix_rule(pattern=[["ls", ["x"]]])"#,
            r#"host_executable(name="git", paths=["usr/bin/git"])"#,
            r#"host_executable(name="git", paths=["/usr/bin/ls"])"#,
            r#"network_rule(host="*.example.com", protocol="https", decision="allow")"#,
            r#"network_rule(host="example.com", protocol="gopher", decision="allow")"#,
            r#"print("hi")"#,
            r#"load("x.star", "y")"#,
            "def f():\n    prefix_rule(pattern=[\"ls\"])\nf()",
            "\"docstring\"\nprefix_rule(pattern=[\"ls\"])",
            r#"len([])"#,
        ] {
            let (fast, _) = both(source);
            assert_eq!(fast, None, "fast path taken for:\n{source}");
        }
    }

    #[test]
    fn valid_literal_shapes_that_starlark_accepts_are_not_refused() {
        // Guards against a fast path that silently never triggers.
        assert!(assert_agrees(
            r#"network_rule(host="api.example.com", protocol="socks5_tcp", decision="deny")"#
        ));
        assert!(assert_agrees(
            r#"prefix_rule(pattern=["gh", ["pr"]], match=[["gh", "pr", "x"]], not_match=["gh issue"])"#
        ));
    }

    /// Every way of passing every argument of each builtin (absent, positional, named,
    /// named in several orders).
    #[test]
    fn every_argument_binding_agrees() {
        let specs: [(&str, &[(&str, &str)]); 3] = [
            (
                "prefix_rule",
                &[
                    ("pattern", r#"["git", ["a", "b"]]"#),
                    ("decision", r#""forbidden""#),
                    ("match", r#"["git a"]"#),
                    ("not_match", r#"[["git", "c"]]"#),
                    ("justification", r#""why""#),
                    ("canonical_matching", "True"),
                ],
            ),
            (
                "host_executable",
                &[("name", r#""git""#), ("paths", r#"["/usr/bin/git"]"#)],
            ),
            (
                "network_rule",
                &[
                    ("host", r#""example.com""#),
                    ("protocol", r#""https""#),
                    ("decision", r#""deny""#),
                    ("justification", r#""j""#),
                ],
            ),
        ];
        let mut fast = 0;
        for (function, params) in specs {
            let count = params.len();
            // Each parameter: 0 absent, 1 positional, 2 named.
            for mask in 0..3usize.pow(count as u32) {
                let modes: Vec<usize> = (0..count)
                    .map(|i| mask / 3usize.pow(i as u32) % 3)
                    .collect();
                for rotation in 0..count {
                    let positional = params
                        .iter()
                        .zip(&modes)
                        .filter(|(_, m)| **m == 1)
                        .map(|((_, v), _)| v.to_string());
                    let mut named: Vec<String> = params
                        .iter()
                        .zip(&modes)
                        .filter(|(_, m)| **m == 2)
                        .map(|((n, v), _)| format!("{n}={v}"))
                        .collect();
                    if !named.is_empty() {
                        let by = rotation % named.len();
                        named.rotate_left(by);
                    }
                    let args: Vec<String> = positional.chain(named).collect();
                    let source = format!("{function}({})", args.join(", "));
                    fast += usize::from(assert_agrees(&source));
                }
            }
        }
        assert!(fast > 500, "only {fast} bindings took the fast path");
    }

    #[test]
    fn string_literal_forms_agree() {
        for literal in [
            r#""a\x41""#,
            r#""\u00e9""#,
            r#""\U0001F600""#,
            r#""\777""#,
            r#""\xff""#,
            r#""a\0b""#,
            r#""a\qb""#,
            r#"r"a\n""#,
            "\"\"\"a\nb\"\"\"",
            "'''x'''",
            r#""\\""#,
        ] {
            let source = format!("prefix_rule(pattern=[{literal}], justification={literal})");
            assert!(assert_agrees(&source), "{literal}");
        }
        for literal in [r#"b"ls""#, r#""a" "b""#, r#""\ud800""#, r#"f"ls""#] {
            let source = format!("prefix_rule(pattern=[{literal}])");
            assert_eq!(both(&source).0, None, "{literal}");
        }
    }

    /// A later statement Starlark would fail on (or that is not a plain call) denies
    /// the fast path for the whole file, however good the calls before it are.
    #[test]
    fn a_later_failing_statement_denies_the_fast_path() {
        for tail in [
            "undefined_name",
            "undefined_fn(1)",
            r#"prefix_rule(pattern=["ls"], decision="bogus")"#,
            "True = False",
            r#"prefix_rule(pattern=["ls"])[0]"#,
        ] {
            let source = format!("prefix_rule(pattern=[\"rm\"], decision=\"forbidden\")\n{tail}");
            assert_eq!(both(&source).0, None, "{tail}");
        }
    }

    /// Every public `.rules` file: the fast path agrees wherever it answers, and it
    /// answers for nearly every file that loads (they are plain calls); files with
    /// errors all go to Starlark, which words the error.
    #[test]
    fn conformance_rules_files_agree() {
        let shared = std::env::var_os("AIRLOCK_SHARED")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
        let (mut loading, mut fast) = (0usize, 0usize);
        for dir in [
            "conformance/execpolicy/rules",
            "conformance/real-world/rules",
        ] {
            let Ok(entries) = std::fs::read_dir(shared.join(dir)) else {
                println!("{dir}: corpus not present, skipped");
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                let Ok(source) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let (answered, starlark) = both(&source);
                if let Some(answer) = &answered {
                    assert_eq!(Ok(answer), starlark.as_ref(), "{}", path.display());
                }
                if starlark.is_ok() {
                    loading += 1;
                    fast += usize::from(answered.is_some());
                }
            }
        }
        println!("{fast} of {loading} loading files on the fast path");
        assert!(
            fast * 10 >= loading * 9,
            "only {fast} of {loading} files were literal"
        );
    }

    fn string_literal() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("allow"),
            Just("prompt"),
            Just("forbidden"),
            Just("deny"),
            Just(""),
            Just(" "),
            Just("git"),
            Just("status"),
            Just("git status"),
            Just("git 'unterminated"),
            Just("/usr/bin/git"),
            Just("/bin/ls"),
            Just("usr/bin/git"),
            Just("example.com"),
            Just("*.example.com"),
            Just("https"),
            Just("http"),
            Just("socks5_tcp"),
            Just("why \"quoted\" \\ back"),
            Just("Ünïcode ß"),
        ]
        .prop_map(|s| format!("{s:?}"))
    }

    fn value(depth: u32) -> BoxedStrategy<String> {
        let leaf = prop_oneof![
            4 => string_literal(),
            1 => Just("True".to_owned()),
            1 => Just("False".to_owned()),
            1 => Just("None".to_owned()),
            1 => Just("1".to_owned()),
            1 => Just("(\"a\",)".to_owned()),
        ];
        if depth == 0 {
            return leaf.boxed();
        }
        prop_oneof![
            2 => leaf,
            3 => prop::collection::vec(value(depth - 1), 0..4)
                .prop_map(|items| format!("[{}]", items.join(", "))),
        ]
        .boxed()
    }

    fn argument() -> impl Strategy<Value = String> {
        let name = prop_oneof![
            Just("pattern"),
            Just("decision"),
            Just("match"),
            Just("not_match"),
            Just("justification"),
            Just("canonical_matching"),
            Just("name"),
            Just("paths"),
            Just("host"),
            Just("protocol"),
            Just("reviewer"),
        ];
        prop_oneof![
            value(2),
            (name, value(2)).prop_map(|(n, v)| format!("{n}={v}")),
        ]
    }

    fn statement() -> impl Strategy<Value = String> {
        let function = prop_oneof![
            4 => Just("prefix_rule"),
            1 => Just("host_executable"),
            1 => Just("network_rule"),
        ];
        prop_oneof![
            20 => (function, prop::collection::vec(argument(), 0..6))
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            1 => Just("x = 1".to_owned()),
        ]
    }

    /// Random literal-ish modules, valid and invalid: whenever the fast path answers,
    /// Starlark succeeds with the same definitions. Also checks that the generator
    /// reaches the fast path often enough for the property to mean something.
    #[test]
    fn fast_path_never_differs_from_starlark() {
        use proptest::test_runner::{Config, TestRunner};
        use std::cell::Cell;

        let mut runner = TestRunner::new(Config {
            cases: 768,
            failure_persistence: None,
            ..Config::default()
        });
        let (fast, total) = (Cell::new(0u32), Cell::new(0u32));
        runner
            .run(&prop::collection::vec(statement(), 0..4), |statements| {
                total.set(total.get() + 1);
                if assert_agrees(&statements.join("\n")) {
                    fast.set(fast.get() + 1);
                }
                Ok(())
            })
            .unwrap();
        println!(
            "{} of {} random modules on the fast path",
            fast.get(),
            total.get()
        );
        assert!(
            fast.get() * 20 >= total.get(),
            "the generator rarely reaches the fast path"
        );
    }
}
