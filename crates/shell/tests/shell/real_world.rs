//! Every real-world command (tldr-pages examples and commands AI agents ran, in
//! `$AIRLOCK_SHARED/conformance/real-world/commands/`) is processed without panic; the run
//! prints how many were plain. Skipped (with a message) when the corpus is absent.

use std::path::PathBuf;

use airlock_shell::{
    SafeCommandOptions, SegmentSource, command_might_be_dangerous, is_known_safe_command,
    parse_command,
};

/// `$AIRLOCK_SHARED` (as `scripts/test` uses it), else `shared/` beside the work tree.
fn corpus_dir() -> PathBuf {
    let shared = std::env::var_os("AIRLOCK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    shared.join("conformance/real-world/commands")
}

/// Processes every script of one JSON-lines file; returns (total, plain, heredoc, safe,
/// dangerous) or `None` when the file is absent.
fn run(file: &str) -> Option<[usize; 5]> {
    let text = std::fs::read_to_string(corpus_dir().join(file)).ok()?;
    let mut counts = [0usize; 5];
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(line).expect("valid JSON line");
        let script = record["script"].as_str().expect("script field");
        let command = vec!["bash".to_owned(), "-lc".to_owned(), script.to_owned()];
        counts[0] += 1;
        match parse_command(&command) {
            Ok(parsed) => {
                counts[1] += usize::from(parsed.plain);
                counts[2] += usize::from(parsed.source == SegmentSource::Heredoc);
            }
            Err(error) => assert!(script.contains('\0'), "{script:?}: {error}"),
        }
        counts[3] += usize::from(is_known_safe_command(
            &command,
            &SafeCommandOptions::default(),
        ));
        counts[4] += usize::from(command_might_be_dangerous(&command));
    }
    Some(counts)
}

#[test]
fn real_world_commands_are_processed_without_panic() {
    for file in ["tldr-commands.jsonl", "agent-commands.jsonl"] {
        match run(file) {
            Some([total, plain, heredoc, safe, dangerous]) => {
                println!(
                    "{file}: {total} commands, {plain} plain ({:.1}%), {heredoc} heredoc form, {safe} known-safe, {dangerous} dangerous",
                    100.0 * plain as f64 / total.max(1) as f64
                );
                assert!(total > 0);
            }
            None => println!("{file}: corpus not present, skipped"),
        }
    }
}
