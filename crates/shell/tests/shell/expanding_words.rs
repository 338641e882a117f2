//! Red-team finding F2: a word is plain only when bash passes it through unchanged.
//! Globs, brace expansion, tilde forms other than `~`/`~/`, parameter expansion,
//! substitutions, disguising backslashes and line continuations make a script non-plain
//! (spec 03 "Two views" item 1), so it is never known-safe and never bypasses.

use airlock_shell::{
    SafeCommandOptions, SegmentSource, is_known_safe_command, parse_command, parse_plain_commands,
    parse_shell_lc_single_command_prefix,
};
use pretty_assertions::assert_eq;

use crate::support::{bash, inner_contains, segments};

/// Asserts that each script is not plain: no plain segments, the whole argv as the one
/// segment, not known-safe.
fn assert_not_plain(scripts: &[&str]) {
    for script in scripts {
        assert_eq!(parse_plain_commands(script), None, "{script:?}");
        let parsed = parse_command(&bash(script)).unwrap();
        assert!(!parsed.plain, "{script:?}");
        assert_eq!(parsed.segments, vec![bash(script)], "{script:?}");
        assert!(
            !is_known_safe_command(&bash(script), &SafeCommandOptions::default()),
            "{script:?}"
        );
    }
}

#[test]
fn globs_are_not_plain() {
    assert_not_plain(&[
        "ls *",
        "ls *.rs",
        "cat ?",
        "find . -exe? touch x \\;",
        "find . -name x -exe[c] rm {} \\;",
        "ls [ab]",
        "ls a\"b\"*",
        "ls \"a\"?",
        "ls 'x'[ab]",
        "timeout 5 truncate -? 0 x",
        "rm -r? x",
        "git diff -- *",
        "* -la",
        "l? -la",
        "ls @(a|b)",
        "ls !(a)",
        "ls +(a)",
        "ls *(a)",
        "ls ?(a)",
    ]);
}

#[test]
fn brace_expansion_is_not_plain() {
    assert_not_plain(&[
        "find . -{exec,} sh -c 'touch x' \\;",
        "find . -{e..e}xec touch x \\;",
        "timeout 5 t{o..o}uch x",
        "ls {a,b}",
        "ls x{a,b}y",
        "ls {1..3}",
        "ls {a..c}",
        "ls {a,\"b\"}",
        "ls \"a\"{b,c}",
        "echo a{}b,c}",
        "echo {}x",
        "echo {x}",
        "git pu{sh,}",
        "{git,push}",
    ]);
    // The deny view reads what bash makes of them, sequences included.
    assert!(inner_contains(
        &bash("timeout 5 t{o..o}uch x"),
        &["touch", "x"]
    ));
    assert!(inner_contains(
        &bash("find . -{e..e}xec touch x \\;"),
        &["touch", "x"]
    ));
    assert!(inner_contains(&bash("ls {1..3}"), &["ls", "1", "2", "3"]));
}

#[test]
fn only_a_leading_home_tilde_stays_plain() {
    // Spec 03 decision 8 and the conformance cases read `~` and `~/…` as written.
    assert_eq!(
        parse_plain_commands("ls ~ ~/src HEAD~1 a~b"),
        Some(segments(&[&["ls", "~", "~/src", "HEAD~1", "a~b"]]))
    );
    assert_not_plain(&[
        "echo ~+",
        "echo ~-",
        "echo ~root",
        "echo ~0",
        "echo ~+1",
        "echo x=~",
        "echo x=~/a",
        "echo a=b:~",
        "echo ~\"/x\"",
        "ls \"a\"~/x",
    ]);
}

#[test]
fn parameter_expansion_and_substitutions_are_not_plain() {
    assert_not_plain(&[
        "echo $x",
        "echo ${x}",
        "echo \"$x\"",
        "echo a$",
        "echo \"a$\"",
        "echo $(id)",
        "echo \"$(id)\"",
        "echo `id`",
        "echo \"`id`\"",
        "echo $((1+2))",
        "echo $[1+2]",
        "cat <(ls)",
        "cat >(ls)",
        "echo $'\\x72m'",
        "echo $\"x\"",
        "rm${IFS}-rf x",
    ]);
}

#[test]
fn disguising_backslashes_are_not_plain() {
    assert_not_plain(&[
        "find . -exe\\c touch x \\;",
        "\\rm -rf x",
        "git pu\\sh",
        "dd of\\=x",
        "git push origin \\+main",
        "r\\m -rf x",
        "echo \"fi\\\nnd\"",
    ]);
    // A backslash that only quotes a special character stays, as Codex keeps it.
    assert_eq!(
        parse_plain_commands("echo a\\ b \\; \\* \\{a,b} \\$x \\~ \\\\"),
        Some(segments(&[&[
            "echo", "a\\ b", "\\;", "\\*", "\\{a,b}", "\\$x", "\\~", "\\\\"
        ]]))
    );
}

#[test]
fn words_bash_joins_or_splits_otherwise_are_not_plain() {
    assert_not_plain(&[
        "git pu\\\nsh",
        "ca\\\nt x",
        "ls -l\\\na",
        "echo +\\ \\\nx",
        "git status\n\\\ngit push",
        "ls\n\\\n\\\ngit push",
        "echo }\\*",
        "echo \"\\q\"\\*",
        "ls\n\\git push",
    ]);
    // Continuations between words are blanks.
    assert_eq!(
        parse_plain_commands("ls \\\n-la"),
        Some(segments(&[&["ls", "-la"]]))
    );
    // The deny view reads the script as bash joins it.
    assert!(inner_contains(&bash("git pu\\\nsh"), &["git", "push"]));
    assert!(inner_contains(
        &bash("git status\n\\\ngit push"),
        &["git", "push"]
    ));
    assert!(inner_contains(&bash("ls\n\\git push"), &["git", "push"]));
}

#[test]
fn the_heredoc_fallback_refuses_expanding_words() {
    for script in [
        "cat * <<EOF\nhi\nEOF",
        "python3 -? <<'PY'\nprint(1)\nPY",
        "cat {a,b} <<EOF\nhi\nEOF",
        "cat -\\u <<EOF\nhi\nEOF",
    ] {
        assert_eq!(
            parse_shell_lc_single_command_prefix(&bash(script)),
            None,
            "{script:?}"
        );
        let parsed = parse_command(&bash(script)).unwrap();
        assert_eq!(parsed.source, SegmentSource::WholeArgv, "{script:?}");
    }
}

#[test]
fn safe_commands_with_expanding_words_are_not_known_safe() {
    let options = SafeCommandOptions::default();
    for script in ["ls", "find . -name x", "cat README.md", "git status"] {
        assert!(is_known_safe_command(&bash(script), &options), "{script:?}");
    }
    for script in [
        "find *",
        "find . -{exec,delete}",
        "rg --pre=x *",
        "git diff --outpu?=x",
        "ls *",
    ] {
        assert!(
            !is_known_safe_command(&bash(script), &options),
            "{script:?}"
        );
    }
}
