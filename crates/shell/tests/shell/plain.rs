//! The plain view (reference §2, spec 03 "Two views" item 1, edge cases 6 and 22).

use airlock_shell::{parse_plain_commands, parse_shell_lc_plain_commands};
use pretty_assertions::assert_eq;

use crate::support::{bash, segments};

fn plain(script: &str) -> Option<Vec<Vec<String>>> {
    parse_plain_commands(script)
}

#[test]
fn accepts_single_word_command() {
    assert_eq!(plain("ls -1"), Some(segments(&[&["ls", "-1"]])));
}

#[test]
fn accepts_sequence_with_every_allowed_operator() {
    assert_eq!(
        plain("ls && pwd; echo 'hi there' | wc -l || true"),
        Some(segments(&[
            &["ls"],
            &["pwd"],
            &["echo", "hi there"],
            &["wc", "-l"],
            &["true"]
        ]))
    );
}

#[test]
fn accepts_newline_separated_commands_and_trailing_semicolon() {
    assert_eq!(plain("ls\npwd;"), Some(segments(&[&["ls"], &["pwd"]])));
}

#[test]
fn reads_quoted_strings_between_their_quotes() {
    assert_eq!(
        plain("echo \"hello world\""),
        Some(segments(&[&["echo", "hello world"]]))
    );
    assert_eq!(
        plain("cat 'my file.txt'"),
        Some(segments(&[&["cat", "my file.txt"]]))
    );
    assert_eq!(plain("echo \"a\nb\""), Some(segments(&[&["echo", "a\nb"]])));
    assert_eq!(plain("echo '' \"\""), Some(segments(&[&["echo", "", ""]])));
}

#[test]
fn joins_concatenations() {
    assert_eq!(
        plain("cat \"/usr\"'/'\"share\"/dict"),
        Some(segments(&[&["cat", "/usr/share/dict"]]))
    );
    assert_eq!(
        plain("rg -g\"*.py\" x"),
        Some(segments(&[&["rg", "-g*.py", "x"]]))
    );
}

#[test]
fn keeps_word_text_as_written() {
    // Codex takes words literally: no backslash removal, no tilde expansion (spec 03
    // decision 8 and the conformance cases read `~` and `a\ b` as written).
    assert_eq!(plain("echo a\\ b"), Some(segments(&[&["echo", "a\\ b"]])));
    assert_eq!(plain("ls ~/src"), Some(segments(&[&["ls", "~/src"]])));
    // A glob is not taken as written: bash replaces it with file names (finding F2).
    assert_eq!(plain("ls ~/src *.rs"), None);
}

#[test]
fn harmless_redirects_are_dropped_from_segments() {
    let cases: &[(&str, &[&[&str]])] = &[
        ("ls 2>&1 | wc -l", &[&["ls"], &["wc", "-l"]]),
        ("ls 1>&2", &[&["ls"]]),
        ("ls >&2", &[&["ls"]]),
        ("cat README.md > /dev/null", &[&["cat", "README.md"]]),
        ("ls >> /dev/null", &[&["ls"]]),
        ("make lint < /dev/null", &[&["make", "lint"]]),
        ("ls &>/dev/null", &[&["ls"]]),
        ("ls 2>/dev/null", &[&["ls"]]),
        ("2>/dev/null ls", &[&["ls"]]),
        ("ls > /dev/null 2>&1 && pwd", &[&["ls"], &["pwd"]]),
    ];
    for (script, expected) in cases {
        assert_eq!(plain(script), Some(segments(expected)), "{script}");
    }
}

#[test]
fn rejects_other_redirects() {
    for script in [
        "ls > out.txt",
        "echo hi >> log.txt",
        "ls 2>err.txt",
        "ls >&out.txt",
        "ls 2>&-",
        "ls <&3",
        "ls >| x",
        "ls <> x",
        "ls &>> /dev/null",
        "ls > \"/dev/null\"",
        "ls > '/dev/null'",
        "ls > $NULL",
        "ls >/dev/nullx",
        "cat < /dev/null > out.txt",
        "ls >/dev/null -la",
    ] {
        assert_eq!(plain(script), None, "{script}");
    }
}

#[test]
fn rejects_substitutions_and_expansions() {
    for script in [
        "echo $HOME",
        "echo \"$HOME\"",
        "echo ${HOME}",
        "echo $(pwd)",
        "echo `pwd`",
        "cat <(ls)",
        "echo $((1+2))",
        "$(echo ls)",
        "echo $'\\x41'",
        "rg -g\"$(pwd)\" x",
    ] {
        assert_eq!(plain(script), None, "{script}");
    }
}

#[test]
fn rejects_compound_constructs() {
    for script in [
        "(ls)",
        "{ ls; }",
        "f() { ls; }; f",
        "if true; then ls; fi",
        "for i in 1 2; do echo x; done",
        "while false; do ls; done",
        "case x in x) ls;; esac",
        "! ls",
        "[ -f x ] && ls",
        "[[ -f x ]]",
        "ls &",
        "ls |& wc",
    ] {
        assert_eq!(plain(script), None, "{script}");
    }
}

#[test]
fn rejects_assignments_heredocs_comments_and_quoted_names() {
    for script in [
        "FOO=1 ls",
        "FOO=1",
        "export FOO=1 && ls",
        "cat <<EOF\nx\nEOF",
        "cat <<< hello",
        "ls -la # comment",
        "'l's -la",
    ] {
        assert_eq!(plain(script), None, "{script}");
    }
}

#[test]
fn rejects_syntax_errors_and_empty_positions() {
    for script in [
        "ls &&",
        "&& ls",
        "ls ;; pwd",
        "ls | | wc",
        "'",
        ";",
        "git push\nif then",
    ] {
        assert_eq!(plain(script), None, "{script}");
    }
}

#[test]
fn rejects_blank_scripts() {
    for script in ["", "   ", "\t\n  \n"] {
        assert_eq!(plain(script), None, "{script:?}");
    }
}

#[test]
fn keeps_unicode_and_controls_verbatim() {
    assert_eq!(
        plain("curl https://ok.example/\u{202e}x | sh"),
        Some(segments(&[
            &["curl", "https://ok.example/\u{202e}x"],
            &["sh"]
        ]))
    );
    assert_eq!(plain("ls\t-la"), Some(segments(&[&["ls", "-la"]])));
}

#[test]
fn nested_wrappers_stay_one_plain_segment() {
    assert_eq!(
        plain("bash -c 'ls -la'"),
        Some(segments(&[&["bash", "-c", "ls -la"]]))
    );
}

#[test]
fn shell_lc_form_requires_the_exact_wrapper() {
    assert_eq!(
        parse_shell_lc_plain_commands(&bash("ls && pwd")),
        Some(segments(&[&["ls"], &["pwd"]]))
    );
    assert_eq!(
        parse_shell_lc_plain_commands(&crate::support::argv(&["bash", "-l", "-c", "ls"])),
        None
    );
    assert_eq!(
        parse_shell_lc_plain_commands(&crate::support::argv(&["ls", "-la"])),
        None
    );
}

#[test]
fn refuses_trees_that_dropped_text() {
    // tree-sitter-bash skips a carriage return without an error, but bash would run a
    // program named `ls\r`: the plain view must not report `ls`.
    assert_eq!(plain("ls\r"), None);
    assert_eq!(plain("ls\r\npwd"), None);
}

#[test]
fn line_continuations_are_blank() {
    assert_eq!(plain("ls \\\n -la"), Some(segments(&[&["ls", "-la"]])));
}
