//! Degenerate input: clear errors or conservative results (spec 03 edge case 16).

use std::ffi::OsString;

use airlock_shell::{
    SafeCommandOptions, ShellError, argv_from_os, command_might_be_dangerous, deny_view,
    is_known_safe_command, parse_command, parse_plain_commands,
};
use pretty_assertions::assert_eq;

use crate::support::{argv, bash};

#[test]
fn empty_argv_is_an_input_error() {
    assert_eq!(parse_command(&[]), Err(ShellError::EmptyArgv));
    assert_eq!(
        ShellError::EmptyArgv.to_string(),
        "empty command: no program to run"
    );
}

#[test]
fn empty_program_is_an_input_error() {
    assert_eq!(parse_command(&argv(&[""])), Err(ShellError::EmptyProgram));
    assert_eq!(
        parse_command(&argv(&["", "-lc", "ls"])),
        Err(ShellError::EmptyProgram)
    );
}

#[test]
fn nul_bytes_are_input_errors() {
    assert_eq!(
        parse_command(&argv(&["ls", "a\0b"])),
        Err(ShellError::NulByte { index: 1 })
    );
    assert_eq!(
        parse_command(&bash("ls\0; rm -rf /")),
        Err(ShellError::NulByte { index: 2 })
    );
    assert_eq!(
        ShellError::NulByte { index: 2 }.to_string(),
        "argument 2 contains a NUL byte"
    );
}

#[cfg(unix)]
#[test]
fn invalid_utf8_is_an_input_error() {
    use std::os::unix::ffi::OsStringExt;
    let args = vec![
        OsString::from("ls"),
        OsString::from_vec(vec![0x66, 0xff, 0x6f]),
    ];
    assert_eq!(
        argv_from_os(args),
        Err(ShellError::InvalidUtf8 { index: 1 })
    );
    assert_eq!(argv_from_os(vec![OsString::from("ls")]), Ok(argv(&["ls"])));
    assert_eq!(
        argv_from_os(Vec::<OsString>::new()),
        Err(ShellError::EmptyArgv)
    );
}

#[test]
fn empty_and_odd_scripts_are_never_plain_or_safe() {
    for script in ["", " ", "\n", ";", "'", "&&", "\0"] {
        assert_eq!(parse_plain_commands(script), None, "{script:?}");
        assert!(
            !is_known_safe_command(&bash(script), &SafeCommandOptions::default()),
            "{script:?}"
        );
    }
}

#[test]
fn heuristics_on_empty_input_are_conservative() {
    assert!(!is_known_safe_command(&[], &SafeCommandOptions::default()));
    assert!(!command_might_be_dangerous(&[]));
    assert!(deny_view(&[]).commands.is_empty());
}

#[test]
fn whitespace_only_program_is_an_ordinary_argv() {
    let parsed = parse_command(&argv(&[" "])).expect("not empty");
    assert!(parsed.plain);
    assert!(!is_known_safe_command(
        &argv(&[" "]),
        &SafeCommandOptions::default()
    ));
}

#[test]
fn nul_in_a_script_given_directly_is_not_plain() {
    assert_eq!(parse_plain_commands("ls\0"), None);
}
