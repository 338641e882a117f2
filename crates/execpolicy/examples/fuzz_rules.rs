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

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

fn main() {
    let mut args = std::env::args().skip(1);
    let mut seconds = 60u64;
    let mut hang_ms = 5000u64;
    let mut seed = 0x5eed_u64;
    let mut artifacts = PathBuf::from("target/fuzz-artifacts/rules");
    let mut seed_files = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => seconds = args.next().unwrap().parse().unwrap(),
            "--hang-ms" => hang_ms = args.next().unwrap().parse().unwrap(),
            "--seed" => seed = args.next().unwrap().parse().unwrap(),
            "--artifacts" => artifacts = PathBuf::from(args.next().unwrap()),
            _ => seed_files.push(PathBuf::from(arg)),
        }
    }
    std::fs::create_dir_all(&artifacts).unwrap();
    let corpus = load_corpus(&seed_files);
    eprintln!("fuzz_rules: {} seeds, {seconds} s", corpus.len());
    std::panic::set_hook(Box::new(|_| {}));

    // The watchdog flags an input that runs past `hang_ms` (it keeps running; the
    // report names it and the run is counted as a hang).
    let started_at = Arc::new(AtomicU64::new(0));
    let current: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
    let hung = Arc::new(AtomicBool::new(false));
    let clock = Instant::now();
    {
        let (started_at, current, hung, artifacts) = (
            started_at.clone(),
            current.clone(),
            hung.clone(),
            artifacts.clone(),
        );
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(50));
                let start = started_at.load(Ordering::SeqCst);
                let now = clock.elapsed().as_millis() as u64;
                if start != 0
                    && now.saturating_sub(start) > hang_ms
                    && !hung.swap(true, Ordering::SeqCst)
                {
                    let input = current
                        .lock()
                        .map(|input| input.clone())
                        .unwrap_or_default();
                    save(&artifacts, "hang", &input);
                }
            }
        });
    }

    let mut rng = fastrand::Rng::with_seed(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut execs, mut crashes, mut hangs, mut slowest) = (0u64, 0u64, 0u64, Duration::ZERO);
    let mut max_len = 0usize;
    let mut loaded = 0u64;
    while Instant::now() < deadline {
        let input = next_input(&mut rng, &corpus);
        max_len = max_len.max(input.len());
        if let Ok(mut slot) = current.lock() {
            slot.clone_from(&input);
        }
        let began = Instant::now();
        started_at.store(clock.elapsed().as_millis().max(1) as u64, Ordering::SeqCst);
        let outcome = catch_unwind(AssertUnwindSafe(|| exercise(&input, &mut loaded)));
        started_at.store(0, Ordering::SeqCst);
        let took = began.elapsed();
        slowest = slowest.max(took);
        execs += 1;
        if hung.swap(false, Ordering::SeqCst) || took > Duration::from_millis(hang_ms) {
            hangs += 1;
        }
        if let Err(panic) = outcome {
            crashes += 1;
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            save(&artifacts, "crash", &format!("{message}\n---\n{input}"));
        }
    }
    println!(
        "{{\"target\":\"rules-loader\",\"seconds\":{seconds},\"execs\":{execs},\"crashes\":{crashes},\"hangs\":{hangs},\"slowest_ms\":{},\"max_input_bytes\":{max_len},\"loaded\":{loaded},\"seeds\":{}}}",
        slowest.as_millis(),
        corpus.len()
    );
    if crashes > 0 || hangs > 0 {
        std::process::exit(1);
    }
}

/// Loads one source; when it loads, evaluates a few commands against it (the result
/// must be consistent: the decision is the strictest of the matches).
fn exercise(source: &str, loaded: &mut u64) {
    let mut parser = airlock_execpolicy::PolicyParser::new();
    if parser.parse("fuzz.rules", source).is_err() {
        return;
    }
    *loaded += 1;
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
}

fn next_input(rng: &mut fastrand::Rng, corpus: &[String]) -> String {
    let base = if corpus.is_empty() || rng.u8(..) < 40 {
        generate(rng, 0)
    } else {
        corpus[rng.usize(..corpus.len())].clone()
    };
    let mut input = base;
    for _ in 0..rng.usize(1..8) {
        input = mutate(rng, input, corpus);
    }
    if input.len() > 64 * 1024 {
        let mut end = 64 * 1024;
        while !input.is_char_boundary(end) {
            end -= 1;
        }
        input.truncate(end);
    }
    input
}

/// A random rules file from a small grammar of builtin calls and statements.
fn generate(rng: &mut fastrand::Rng, depth: usize) -> String {
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

fn mutate(rng: &mut fastrand::Rng, input: String, corpus: &[String]) -> String {
    let mut chars: Vec<char> = input.chars().collect();
    let at = if chars.is_empty() {
        0
    } else {
        rng.usize(..=chars.len())
    };
    match rng.u8(..8) {
        0 if !chars.is_empty() => {
            chars.remove(at.min(chars.len() - 1));
        }
        1 => {
            let token = TOKENS[rng.usize(..TOKENS.len())];
            chars.splice(at..at, token.chars());
        }
        2 if !chars.is_empty() => {
            let index = at.min(chars.len() - 1);
            chars[index] = char::from(rng.u8(1..128));
        }
        3 if !corpus.is_empty() => {
            let other: Vec<char> = corpus[rng.usize(..corpus.len())].chars().collect();
            let from = rng.usize(..=other.len());
            chars.splice(at..at, other[from..].iter().copied());
        }
        4 if !chars.is_empty() => {
            // Duplicate a chunk many times: long and deep inputs.
            let start = rng.usize(..chars.len());
            let end = (start + rng.usize(1..16)).min(chars.len());
            let chunk: Vec<char> = chars[start..end].to_vec();
            for _ in 0..rng.usize(1..200) {
                chars.splice(at..at, chunk.iter().copied());
            }
        }
        5 => {
            let wrapped = format!("$({})", chars.iter().collect::<String>());
            chars = wrapped.chars().collect();
        }
        6 => chars.truncate(at),
        _ => {
            let token = TOKENS[rng.usize(..TOKENS.len())];
            chars.extend(token.chars());
        }
    }
    chars.into_iter().collect()
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

fn save(dir: &Path, kind: &str, input: &str) {
    let name = format!("{kind}-{:016x}", fxhash(input));
    let _ = std::fs::write(dir.join(name), input);
}

fn fxhash(input: &str) -> u64 {
    input.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
