//! Red-team finding F4: a script bash refuses or reads otherwise is never plain. Any
//! `ERROR` or `MISSING` node, and reserved words that tree-sitter accepts as a command
//! name, make the whole script one non-plain segment (spec 03 decision 15).

use airlock_shell::{NotPlainReason, SegmentSource, parse_command, parse_plain_commands};
use pretty_assertions::assert_eq;

use crate::support::{bash, segments};

fn assert_whole_argv(script: &str) {
    assert_eq!(parse_plain_commands(script), None, "{script:?}");
    let parsed = parse_command(&bash(script)).unwrap();
    assert!(!parsed.plain, "{script:?}");
    assert_eq!(parsed.source, SegmentSource::WholeArgv, "{script:?}");
    assert_eq!(parsed.segments, vec![bash(script)], "{script:?}");
}

#[test]
fn error_and_missing_nodes_are_not_plain() {
    for script in [
        "ls &&",
        "ls |",
        "ls ||",
        "&& ls",
        "| ls",
        "ls; ; ls",
        "ls && && ls",
        "ls )",
        "ls (",
        "cat \"a",
        "cat 'a",
        "ls `",
        "echo $(ls",
        "echo ${x",
        "[[ -f x",
        "ls \\",
        "ls >",
        "ls &&& ls",
        "if true; then ls",
        "f() { ls",
    ] {
        assert_whole_argv(script);
    }
}

#[test]
fn reserved_words_as_command_names_are_not_plain() {
    for script in [
        "then ls",
        "fi",
        "done; ls",
        "do ls",
        "esac",
        "elif ls",
        "else ls",
        "in ls",
        "echo a; }",
        "} ls",
        "ls; }; ls",
        "ls && fi",
        "coproc ls",
        "ls\nthen",
    ] {
        assert_whole_argv(script);
    }
    let parsed = parse_command(&bash("echo a; }")).unwrap();
    assert_eq!(
        parsed.not_plain_reason(),
        Some(&NotPlainReason::ReservedWord("}".to_owned()))
    );
}

#[test]
fn reserved_words_as_arguments_and_time_stay_plain() {
    assert_eq!(
        parse_plain_commands("ls then fi done } in"),
        Some(segments(&[&["ls", "then", "fi", "done", "}", "in"]]))
    );
    assert_eq!(
        parse_plain_commands("time git status"),
        Some(segments(&[&["time", "git", "status"]]))
    );
}
