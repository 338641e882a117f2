//! Property tests over random scripts: parsing never panics, results keep their
//! invariants, and hostile shapes stay fast. The 64 KiB timing target itself is measured
//! by the criterion benchmark (`cargo bench -p airlock-shell`).

use airlock_shell::{
    SafeCommandOptions, SegmentSource, command_might_be_dangerous, is_known_safe_command,
    parse_command, parse_plain_commands,
};
use proptest::prelude::*;

/// Fragments that exercise most of the grammar, including broken pieces.
const FRAGMENTS: &[&str] = &[
    "ls",
    "git",
    "push",
    "rm",
    "-rf",
    "/",
    "echo",
    "bash",
    "-c",
    "sh",
    "-lc",
    "sudo",
    "timeout",
    "5",
    "env",
    "LD_PRELOAD=x",
    "FOO=1",
    "export",
    "&&",
    "||",
    ";",
    "|",
    "&",
    "|&",
    ";;",
    "(",
    ")",
    "{",
    "}",
    "$(",
    "`",
    "<(",
    ">(",
    "$",
    "${",
    "$((",
    "))",
    "[[",
    "]]",
    "if",
    "then",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "case",
    "esac",
    "while",
    "f()",
    ">",
    ">>",
    "<",
    "2>&1",
    ">/dev/null",
    "<<EOF",
    "<<'EOF'",
    "EOF",
    "<<<",
    "'",
    "\"",
    "\\",
    "#",
    "\n",
    " ",
    "\t",
    "!",
    "*",
    "~",
    "=",
    "xargs",
    "nice",
    "-n",
    "eval",
    "\u{202e}",
    "é",
    "\u{ff52}",
];

fn script_strategy() -> impl Strategy<Value = String> {
    let fragment = prop::sample::select(FRAGMENTS);
    let piece = prop_oneof![
        4 => fragment.prop_map(str::to_owned),
        1 => "[ -~]{0,12}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_scripts_never_panic_and_keep_invariants(script in script_strategy()) {
        for shell in ["bash", "sh"] {
            let command = vec![shell.to_owned(), "-lc".to_owned(), script.clone()];
            match parse_command(&command) {
                Ok(parsed) => {
                    prop_assert!(!parsed.segments.is_empty());
                    prop_assert!(parsed.segments.iter().all(|segment| !segment.is_empty()));
                    prop_assert_eq!(&parsed.inner[0].argv, &command);
                    for segment in &parsed.segments {
                        prop_assert!(parsed.inner_argvs().any(|inner| inner == segment.as_slice()));
                    }
                    if parsed.source == SegmentSource::PlainScript {
                        prop_assert_eq!(Some(parsed.segments.clone()), parse_plain_commands(&script));
                    }
                }
                Err(_) => prop_assert!(script.contains('\0')),
            }
            let _ = is_known_safe_command(&command, &SafeCommandOptions::default());
            let _ = command_might_be_dangerous(&command);
        }
    }

    #[test]
    fn random_argvs_never_panic(tokens in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..12)) {
        let command: Vec<String> = tokens.iter().map(|token| (*token).to_owned()).collect();
        let _ = parse_command(&command);
        let _ = is_known_safe_command(&command, &SafeCommandOptions::default());
        let _ = command_might_be_dangerous(&command);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random 64 KiB scripts (a random fragment sequence repeated to size).
    #[test]
    fn random_64k_scripts_never_panic(unit in script_strategy().prop_filter("non-empty", |unit| !unit.is_empty())) {
        let script = unit.repeat((64 * 1024 / unit.len()).max(1));
        let command = vec!["bash".to_owned(), "-lc".to_owned(), script];
        if let Ok(parsed) = parse_command(&command) {
            prop_assert!(!parsed.segments.is_empty());
        }
    }
}

/// Adversarial shapes at the 64 KiB scale: must parse without stack overflow or panic.
#[test]
fn hostile_64k_scripts_complete() {
    const SIZE: usize = 64 * 1024;
    let repeat = |unit: &str| unit.repeat(SIZE / unit.len());
    let scripts = [
        repeat("("),
        repeat("$("),
        repeat("{ "),
        repeat("ls && "),
        repeat("a | "),
        repeat("\"$(echo "),
        repeat("if true; then "),
        repeat("timeout 1 "),
        repeat("bash -c '"),
        repeat("echo x > /dev/null; "),
        repeat("'"),
        repeat("\\"),
    ];
    for script in &scripts {
        let command = vec!["bash".to_owned(), "-lc".to_owned(), script.clone()];
        let parsed = parse_command(&command).expect("valid argv");
        assert!(!parsed.segments.is_empty());
        let _ = command_might_be_dangerous(&command);
    }
}
