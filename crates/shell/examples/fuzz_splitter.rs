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

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

fn main() {
    let mut args = std::env::args().skip(1);
    let mut seconds = 60u64;
    let mut hang_ms = 2000u64;
    let mut seed = 0x5eed_u64;
    let mut artifacts = PathBuf::from("target/fuzz-artifacts/splitter");
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
    eprintln!("fuzz_splitter: {} seeds, {seconds} s", corpus.len());
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
    while Instant::now() < deadline {
        let input = next_input(&mut rng, &corpus);
        max_len = max_len.max(input.len());
        if let Ok(mut slot) = current.lock() {
            slot.clone_from(&input);
        }
        let began = Instant::now();
        started_at.store(clock.elapsed().as_millis().max(1) as u64, Ordering::SeqCst);
        let outcome = catch_unwind(AssertUnwindSafe(|| exercise(&input)));
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
        "{{\"target\":\"shell-splitter\",\"seconds\":{seconds},\"execs\":{execs},\"crashes\":{crashes},\"hangs\":{hangs},\"slowest_ms\":{},\"max_input_bytes\":{max_len},\"seeds\":{}}}",
        slowest.as_millis(),
        corpus.len()
    );
    if crashes > 0 || hangs > 0 {
        std::process::exit(1);
    }
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

/// A random script from a small grammar of commands, operators and constructs.
fn generate(rng: &mut fastrand::Rng, depth: usize) -> String {
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

fn save(dir: &Path, kind: &str, input: &str) {
    let name = format!("{kind}-{:016x}", fxhash(input));
    let _ = std::fs::write(dir.join(name), input);
}

fn fxhash(input: &str) -> u64 {
    input.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
