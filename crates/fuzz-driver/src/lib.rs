//! The shared loop of Airlock's structure-aware mutation fuzzers (`scripts/fuzz`, issue 18
//! item 11): argument parsing, seed mutation, a watchdog that flags hangs, crash capture
//! and the one-line JSON summary. Each target (an example of the crate it fuzzes) brings
//! its seeds, its token list, a small input grammar and the function that exercises one
//! input and asserts its invariants.
//!
//! Owns nothing of Airlock's behaviour and must never be a normal dependency: it is a test
//! tool, in which a panic is a report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use fastrand::Rng;

/// Inputs longer than this many bytes are cut (at a character boundary).
pub const MAX_INPUT_BYTES: usize = 64 * 1024;

/// One fuzz target.
pub struct Target {
    /// The name in the summary line (`"target":…`), e.g. `rules-loader`.
    pub name: &'static str,
    /// Hang limit in milliseconds unless `--hang-ms` gives one.
    pub default_hang_ms: u64,
    /// Where findings go unless `--artifacts` gives a folder.
    pub default_artifacts: &'static str,
    /// Tokens inserted by mutation: the input language's interesting corners.
    pub tokens: &'static [&'static str],
    /// Reads the seed files named on the command line into seed inputs.
    pub load_corpus: fn(&[PathBuf]) -> Vec<String>,
    /// A random input from the target's grammar; the second argument is the nesting depth.
    pub generate: fn(&mut Rng, usize) -> String,
}

/// Runs `target` for `--seconds N` (default 60): `exercise` gets every input and panics
/// on a broken invariant. `extra_summary` returns more `,"key":value` JSON members for the
/// summary line. Findings (`crash-<hash>`, `hang-<hash>`) are written to the artifacts
/// folder. Exits with status 1 when any crash or hang was found.
///
/// Arguments: `--seconds N --artifacts DIR [--hang-ms MS] [--seed S] SEED_FILES...`.
pub fn run(target: &Target, mut exercise: impl FnMut(&str), extra_summary: impl Fn() -> String) {
    let mut args = std::env::args().skip(1);
    let mut seconds = 60u64;
    let mut hang_ms = target.default_hang_ms;
    let mut seed = 0x5eed_u64;
    let mut artifacts = PathBuf::from(target.default_artifacts);
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
    let corpus = (target.load_corpus)(&seed_files);
    eprintln!("{}: {} seeds, {seconds} s", target.name, corpus.len());
    std::panic::set_hook(Box::new(|_| {}));

    let watchdog = Watchdog::start(hang_ms, artifacts.clone());
    let mut rng = Rng::with_seed(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut execs, mut crashes, mut hangs, mut slowest) = (0u64, 0u64, 0u64, Duration::ZERO);
    let mut max_len = 0usize;
    while Instant::now() < deadline {
        let input = next_input(target, &mut rng, &corpus);
        max_len = max_len.max(input.len());
        let began = Instant::now();
        watchdog.begin(&input);
        let outcome = catch_unwind(AssertUnwindSafe(|| exercise(&input)));
        let flagged = watchdog.end();
        let took = began.elapsed();
        slowest = slowest.max(took);
        execs += 1;
        if flagged || took > Duration::from_millis(hang_ms) {
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
        "{{\"target\":\"{}\",\"seconds\":{seconds},\"execs\":{execs},\"crashes\":{crashes},\"hangs\":{hangs},\"slowest_ms\":{},\"max_input_bytes\":{max_len}{},\"seeds\":{}}}",
        target.name,
        slowest.as_millis(),
        extra_summary(),
        corpus.len()
    );
    if crashes > 0 || hangs > 0 {
        std::process::exit(1);
    }
}

/// Flags an input that runs past the hang limit: it keeps running, its text is saved as a
/// `hang-` finding and the run counts as a hang.
struct Watchdog {
    clock: Instant,
    /// Milliseconds since `clock` when the current input began; 0 when none runs.
    started_at: Arc<AtomicU64>,
    current: Arc<Mutex<String>>,
    hung: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(hang_ms: u64, artifacts: PathBuf) -> Self {
        let watchdog = Self {
            clock: Instant::now(),
            started_at: Arc::new(AtomicU64::new(0)),
            current: Arc::new(Mutex::new(String::new())),
            hung: Arc::new(AtomicBool::new(false)),
        };
        let (clock, started_at, current, hung) = (
            watchdog.clock,
            watchdog.started_at.clone(),
            watchdog.current.clone(),
            watchdog.hung.clone(),
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
        watchdog
    }

    fn begin(&self, input: &str) {
        if let Ok(mut slot) = self.current.lock() {
            slot.clone_from(&input.to_owned());
        }
        let now = self.clock.elapsed().as_millis().max(1) as u64;
        self.started_at.store(now, Ordering::SeqCst);
    }

    /// Whether the input that just ended was flagged as a hang.
    fn end(&self) -> bool {
        self.started_at.store(0, Ordering::SeqCst);
        self.hung.swap(false, Ordering::SeqCst)
    }
}

/// A generated or seed input with 1–7 mutations, cut to [`MAX_INPUT_BYTES`].
fn next_input(target: &Target, rng: &mut Rng, corpus: &[String]) -> String {
    let mut input = if corpus.is_empty() || rng.u8(..) < 40 {
        (target.generate)(rng, 0)
    } else {
        corpus[rng.usize(..corpus.len())].clone()
    };
    for _ in 0..rng.usize(1..8) {
        input = mutate(rng, input, corpus, target.tokens);
    }
    if input.len() > MAX_INPUT_BYTES {
        let mut end = MAX_INPUT_BYTES;
        while !input.is_char_boundary(end) {
            end -= 1;
        }
        input.truncate(end);
    }
    input
}

/// One mutation: delete, insert a token, replace a character, splice from another seed,
/// repeat a chunk (long and deep inputs), wrap in `$(…)`, truncate, or append a token.
pub fn mutate(rng: &mut Rng, input: String, corpus: &[String], tokens: &[&str]) -> String {
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
            let token = tokens[rng.usize(..tokens.len())];
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
            let token = tokens[rng.usize(..tokens.len())];
            chars.extend(token.chars());
        }
    }
    chars.into_iter().collect()
}

/// Writes a finding as `DIR/KIND-<hash of the input>`.
fn save(dir: &Path, kind: &str, input: &str) {
    let name = format!("{kind}-{:016x}", fnv1a(input));
    let _ = std::fs::write(dir.join(name), input);
}

/// FNV-1a, 64 bits: a stable name for a finding.
fn fnv1a(input: &str) -> u64 {
    input.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
