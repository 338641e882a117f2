//! Structure-aware mutation fuzzer for the rules loader (issue 18 item 11), run by
//! `scripts/fuzz`. Stable toolchain, no instrumentation: `.rules` seeds from the
//! conformance corpus are mutated (byte edits, Starlark-token insertion, splicing) and
//! generated from a small grammar of builtin calls; every input is loaded with
//! `PolicyParser` and, when it loads, checked against a few commands. A panic is a
//! crash; an input slower than `--hang-ms` is a hang (the loader's own evaluation bound
//! is 3 s, so the default hang limit is above it). Findings are written to
//! `--artifacts`; the last line of output is a JSON summary.
//!
//! Usage: `fuzz_rules --seconds N --artifacts DIR [--hang-ms MS] [--seed S] RULES_FILES...`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)] // a test tool: a panic is a report

use std::path::PathBuf;

use airlock_fuzz_driver::{Rng, Target};

/// Tokens that reach the loader's interesting corners.
const TOKENS: &[&str] = &[
    "prefix_rule(",
    "pattern=",
    "decision=",
    "\"forbidden\"",
    "\"prompt\"",
    "\"allow\"",
    "match=",
    "not_match=",
    "justification=",
    "canonical_matching=True",
    "host_executable(",
    "name=",
    "paths=",
    "network_rule(",
    "host=",
    "protocol=",
    "\"https\"",
    "[",
    "]",
    "(",
    ")",
    ",",
    "\"git\"",
    "[\"a\", \"b\"]",
    "\"\"",
    "'x'",
    "f\"{x}\"",
    "def f():\n    ",
    "for x in range(3):\n    ",
    "if True:\n    ",
    "load(\"x\", \"y\")\n",
    "x = ",
    "lambda: 1",
    "None",
    "True",
    "1 + ",
    "* 3",
    "[i for i in range(5)]",
    "{\"k\": 1}",
    "# c\n",
    "\\",
    "\"/usr/bin/git\"",
    "\"rm -rf x\"",
    "\u{202e}",
    "é",
    "\n",
    "    ",
    "\t",
    "\u{0}",
];

const TARGET: Target = Target {
    name: "rules-loader",
    default_hang_ms: 5000,
    default_artifacts: "target/fuzz-artifacts/rules",
    tokens: TOKENS,
    load_corpus,
    generate,
};

fn main() {
    let loaded = std::cell::Cell::new(0u64);
    airlock_fuzz_driver::run(
        &TARGET,
        |input| {
            if exercise(input) {
                loaded.set(loaded.get() + 1);
            }
        },
        || format!(",\"loaded\":{}", loaded.get()),
    );
}

/// Loads one source (`true` when it loads); when it loads, evaluates a few commands against it (the result
/// must be consistent: the decision is the strictest of the matches).
fn exercise(source: &str) -> bool {
    let mut parser = airlock_execpolicy::PolicyParser::new();
    if parser.parse("fuzz.rules", source).is_err() {
        return false;
    }
    let policy = parser.build();
    let options = airlock_execpolicy::MatchOptions::resolving();
    for argv in [
        &["git", "push"][..],
        &["ls"],
        &["/usr/bin/git", "status"],
        &["rm", "-rf", "x"],
    ] {
        let argv: Vec<String> = argv.iter().map(|word| (*word).to_owned()).collect();
        let evaluation = policy.check(&argv, &options);
        let strictest = evaluation
            .matched_rules
            .iter()
            .map(|found| found.decision())
            .max();
        assert_eq!(
            evaluation.decision, strictest,
            "decision is not the strictest match"
        );
    }
    let _ = policy.get_allowed_prefixes();
    true
}

/// A random rules file from a small grammar of builtin calls and statements.
fn generate(rng: &mut Rng, depth: usize) -> String {
    let words = ["\"git\"", "\"ls\"", "[\"a\", \"b\"]", "\"rm\"", "\"x y\""];
    let word = words[rng.usize(..words.len())];
    let decisions = ["allow", "prompt", "forbidden", "deny", ""];
    let decision = decisions[rng.usize(..decisions.len())];
    let call = match rng.u8(..4) {
        0 => format!("prefix_rule(pattern=[{word}, {word}], decision=\"{decision}\")\n"),
        1 => format!("prefix_rule([{word}], match=[[{word}]], not_match=[\"z\"])\n"),
        2 => format!("host_executable(name={word}, paths=[\"/usr/bin/git\"])\n"),
        _ => format!(
            "network_rule(host=\"example.com\", protocol=\"https\", decision=\"{decision}\")\n"
        ),
    };
    if depth > 4 {
        return call;
    }
    match rng.u8(..6) {
        0 => format!("{call}{}", generate(rng, depth + 1)),
        1 => format!("def f():\n    {call}f()\n"),
        2 => format!("for x in [{word}]:\n    {call}"),
        3 => format!(
            "{}{}",
            TOKENS[rng.usize(..TOKENS.len())],
            generate(rng, depth + 1)
        ),
        _ => call,
    }
}

fn load_corpus(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|file| match std::fs::read_to_string(file) {
            Ok(text) => Some(text),
            Err(_) => {
                eprintln!("fuzz_rules: cannot read {}", file.display());
                None
            }
        })
        .collect()
}
