//! Structure-aware mutation fuzzer for the shell splitter (issue 18 item 11), run by
//! `scripts/fuzz`. Stable toolchain, no instrumentation: seeds from the conformance
//! corpus are mutated (byte edits, shell-token insertion, splicing, nesting in
//! constructs) and generated from a small grammar; every input goes through
//! `parse_command`, the deny view and the heuristics, and the result's invariants are
//! checked. A panic is a crash; an input slower than `--hang-ms` is a hang. Findings
//! are written to `--artifacts`; the last line of output is a JSON summary.
//!
//! Usage: `fuzz_splitter --seconds N --artifacts DIR [--hang-ms MS] [--seed S] SEED_FILES...`
//! (seed files: JSON lines whose `script` string or `command` array is taken, or plain
//! text, one script per line).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)] // a test tool: a panic is a report

use std::path::PathBuf;

use airlock_fuzz_driver::{Rng, Target};

/// Tokens that reach the parser's interesting corners.
const TOKENS: &[&str] = &[
    " ",
    "\n",
    ";",
    "&&",
    "||",
    "|",
    "&",
    "(",
    ")",
    "{ ",
    " }",
    "$(",
    "`",
    "<(",
    ">(",
    "<<EOF\n",
    "\nEOF\n",
    "<<'EOF'\n",
    "<<-X\n",
    "<<<",
    ">",
    ">>",
    "2>&1",
    "</dev/null",
    "'",
    "\"",
    "\\",
    "$'\\x72m'",
    "${IFS}",
    "$IFS",
    "{a,b}",
    "{r,}m",
    "$((1+2))",
    "${x:-y}",
    "$@",
    "*",
    "?",
    "[[",
    "]]",
    "if true; then ",
    "; fi",
    "while :; do ",
    "; done",
    "case x in x) ",
    ";; esac",
    "f() { ",
    "coproc ",
    "trap 'x' EXIT ",
    "eval ",
    "exec ",
    "env -S ",
    "sudo -u r ",
    "timeout 5 ",
    "xargs ",
    "find . -exec ",
    " \\; ",
    " -delete",
    "bash -c ",
    "sh -lc ",
    "| sh",
    "watch ",
    "flock /l -c ",
    "busybox ",
    "rm -rf ",
    "git -C . push ",
    "git -c alias.x=push x ",
    "FOO=1 ",
    "LD_PRELOAD=x ",
    "export A=1; ",
    "#",
    "\u{202e}",
    "é",
    "\u{0}",
    "\t",
];

const TARGET: Target = Target {
    name: "shell-splitter",
    default_hang_ms: 2000,
    default_artifacts: "target/fuzz-artifacts/splitter",
    tokens: TOKENS,
    load_corpus,
    generate,
};

fn main() {
    airlock_fuzz_driver::run(&TARGET, exercise, String::new);
}

/// Runs every public entry point on one script and checks the invariants of spec 03
/// "Segmentation result".
fn exercise(script: &str) {
    let wrapped = vec!["bash".to_owned(), "-lc".to_owned(), script.to_owned()];
    let direct: Vec<String> = script.split(' ').map(str::to_owned).collect();
    for argv in [&wrapped, &direct] {
        let Ok(parsed) = airlock_shell::parse_command(argv) else {
            continue;
        };
        assert!(!parsed.segments.is_empty(), "no segments");
        assert!(
            parsed.segments.iter().all(|segment| !segment.is_empty()),
            "empty segment"
        );
        for segment in &parsed.segments {
            assert!(
                parsed.inner.iter().any(|inner| &inner.argv == segment),
                "segment {segment:?} missing from the deny view"
            );
        }
        assert!(
            parsed
                .inner
                .iter()
                .all(|inner| inner.argv.first().is_some_and(|p| !p.is_empty())),
            "deny-view command with an empty program"
        );
        let _ = parsed.find_dangerous();
        let _ = airlock_shell::is_known_safe_command(argv, &Default::default());
        let _ = airlock_shell::parse_shell_lc_single_command_prefix(argv);
        let _ = airlock_shell::command_might_be_dangerous(argv);
    }
}

/// A random script from a small grammar of commands, operators and constructs.
fn generate(rng: &mut Rng, depth: usize) -> String {
    let words = [
        "ls",
        "git push",
        "rm -rf x",
        "echo hi",
        "cat f",
        "python3 -",
        "curl u",
        "x",
    ];
    let simple = words[rng.usize(..words.len())].to_owned();
    if depth > 6 {
        return simple;
    }
    match rng.u8(..12) {
        0 => format!(
            "{} && {}",
            generate(rng, depth + 1),
            generate(rng, depth + 1)
        ),
        1 => format!(
            "{} | {}",
            generate(rng, depth + 1),
            generate(rng, depth + 1)
        ),
        2 => format!("( {} )", generate(rng, depth + 1)),
        3 => format!("{{ {}; }}", generate(rng, depth + 1)),
        4 => format!("echo $({})", generate(rng, depth + 1)),
        5 => format!("bash -c '{}'", generate(rng, depth + 1).replace('\'', "")),
        6 => format!(
            "if {}; then {}; fi",
            generate(rng, depth + 1),
            generate(rng, depth + 1)
        ),
        7 => format!("cat <<EOF\n`{}`\nEOF", generate(rng, depth + 1)),
        8 => format!("timeout 5 {}", generate(rng, depth + 1)),
        9 => format!("f() {{ {}; }}; f", generate(rng, depth + 1)),
        10 => format!(
            "{}{}",
            TOKENS[rng.usize(..TOKENS.len())],
            generate(rng, depth + 1)
        ),
        _ => simple,
    }
}

fn load_corpus(files: &[PathBuf]) -> Vec<String> {
    let mut corpus = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            eprintln!("fuzz_splitter: cannot read {}", file.display());
            continue;
        };
        for line in text.lines() {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(line) {
                if let Some(script) = value.get("script").and_then(|s| s.as_str()) {
                    corpus.push(script.to_owned());
                } else if let Some(command) = value.get("command").and_then(|c| c.as_array()) {
                    let words: Vec<&str> = command.iter().filter_map(|w| w.as_str()).collect();
                    match words.as_slice() {
                        [_, flag, script] if flag.starts_with('-') => {
                            corpus.push((*script).to_owned())
                        }
                        _ => corpus.push(words.join(" ")),
                    }
                }
            } else if !line.trim().is_empty() {
                corpus.push(line.to_owned());
            }
        }
    }
    corpus
}
