//! Exec-policy benchmarks (spec 02 §Performance): load 10,000 rules (target ≤ 50 ms)
//! and check a 10-token argv against them (target ≤ 2 µs).
//!
//! Two rule shapes: `spread` (10,000 rules over 1,000 programs, like a large real
//! policy) and `one_program` (10,000 rules all for `git`, the worst case for the
//! first-token grouping). Both are literal calls, read by the literal fast path;
//! `spread_starlark` is `spread` behind one assignment, so Starlark evaluates it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::hint::black_box;

use airlock_execpolicy::{MatchOptions, Policy, PolicyParser};
use criterion::{Criterion, criterion_group, criterion_main};

fn spread_source() -> String {
    let mut source = String::with_capacity(10_000 * 80);
    for i in 0..10_000 {
        let decision = ["allow", "prompt", "forbidden"][i % 3];
        source.push_str(&format!(
            "prefix_rule(pattern=[\"tool{}\", \"sub{}\", [\"a\", \"b\"]], decision=\"{decision}\")\n",
            i % 1_000,
            i / 1_000
        ));
    }
    source
}

fn one_program_source() -> String {
    let mut source = String::with_capacity(10_000 * 80);
    for i in 0..10_000 {
        source.push_str(&format!(
            "prefix_rule(pattern=[\"git\", \"sub{i}\", \"--flag\"], decision=\"prompt\")\n"
        ));
    }
    source
}

fn load(source: &str) -> Policy {
    let mut parser = PolicyParser::new();
    parser
        .parse("bench.rules", source)
        .expect("bench rules load");
    parser.build()
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn bench_load(c: &mut Criterion) {
    let spread = spread_source();
    let one = one_program_source();
    let mut group = c.benchmark_group("load_10k_rules");
    group.sample_size(20);
    group.bench_function("spread", |b| b.iter(|| load(black_box(&spread))));
    group.bench_function("one_program", |b| b.iter(|| load(black_box(&one))));
    // One assignment makes the file non-literal: the whole file goes through Starlark.
    let evaluated = format!("UNUSED = 1\n{spread}");
    group.bench_function("spread_starlark", |b| {
        b.iter(|| load(black_box(&evaluated)))
    });
    group.finish();
}

fn bench_check(c: &mut Criterion) {
    let spread = load(&spread_source());
    let one = load(&one_program_source());
    let options = MatchOptions::default();
    let hit = argv(&[
        "tool7", "sub3", "b", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
    ]);
    let miss = argv(&[
        "unknown", "sub3", "b", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
    ]);
    let git = argv(&[
        "git", "sub4242", "--flag", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
    ]);
    let mut group = c.benchmark_group("check_10_tokens_vs_10k_rules");
    group.bench_function("spread_hit", |b| {
        b.iter(|| spread.check(black_box(&hit), &options))
    });
    group.bench_function("spread_miss", |b| {
        b.iter(|| spread.check(black_box(&miss), &options))
    });
    group.bench_function("one_program_hit", |b| {
        b.iter(|| one.check(black_box(&git), &options))
    });
    let resolving = MatchOptions::resolving();
    let abs = argv(&[
        "/usr/bin/git",
        "sub4242",
        "--flag",
        "x4",
        "x5",
        "x6",
        "x7",
        "x8",
        "x9",
        "x10",
    ]);
    group.bench_function("one_program_resolved", |b| {
        b.iter(|| one.check(black_box(&abs), &resolving))
    });
    group.finish();
}

criterion_group!(benches, bench_load, bench_check);
criterion_main!(benches);
