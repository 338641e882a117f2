//! Parsing cost at the 64 KiB scale (spec 03 "Tests": no hang > 100 ms for 64 KiB
//! scripts). Run with `cargo bench -p airlock-shell`.

use std::hint::black_box;

use airlock_shell::{command_might_be_dangerous, parse_command};
use criterion::{Criterion, criterion_group, criterion_main};

const SIZE: usize = 64 * 1024;

fn repeated(unit: &str) -> String {
    unit.repeat(SIZE / unit.len())
}

/// A realistic agent script: mixed plain commands, pipes, substitutions, a heredoc.
fn realistic() -> String {
    let chunk = "cd /work/repo && git status --short | head -n 20\n\
                 if [ -f Cargo.toml ]; then cargo test -p core 2>&1 | tail -n 50; fi\n\
                 for f in $(ls src); do echo \"$f\"; grep -n TODO \"src/$f\" || true; done\n\
                 python3 - <<'PY'\nimport json\nprint(json.dumps({'a': 1}))\nPY\n\
                 timeout 30 npm run build > /tmp/build.log 2>&1; echo done\n";
    repeated(chunk)
}

fn scripts() -> Vec<(&'static str, String)> {
    vec![
        ("realistic", realistic()),
        ("plain-and-chain", repeated("ls -la && ")),
        ("pipeline-trailing-pipe", repeated("a | ")),
        ("nested-subshells", repeated("(")),
        ("nested-substitutions", repeated("$(")),
        ("quotes", repeated("'")),
        ("array-assignments", repeated("a=(")),
        ("parameter-expansions", repeated("${")),
        ("exec-wrapper-chain", repeated("timeout 1 ")),
        ("nested-shells", repeated("bash -c '")),
    ]
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_command_64k");
    group.sample_size(20);
    for (name, script) in scripts() {
        let command = vec!["bash".to_owned(), "-lc".to_owned(), script];
        group.bench_function(name, |b| b.iter(|| parse_command(black_box(&command))));
    }
    group.finish();
    let mut group = c.benchmark_group("command_might_be_dangerous_64k");
    group.sample_size(20);
    let command = vec!["bash".to_owned(), "-lc".to_owned(), realistic()];
    group.bench_function("realistic", |b| {
        b.iter(|| command_might_be_dangerous(black_box(&command)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
