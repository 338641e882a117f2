//! Codex's heredoc single-command fallback (reference §2, spec 03 edge case 5).

use airlock_shell::parse_shell_lc_single_command_prefix;
use pretty_assertions::assert_eq;

use crate::support::{argv, bash, inner, inner_contains};

fn heredoc(script: &str) -> Option<Vec<String>> {
    parse_shell_lc_single_command_prefix(&bash(script))
}

#[test]
fn returns_the_literal_words_of_the_fed_command() {
    assert_eq!(
        heredoc("python3 <<'PY'\nprint(1)\nPY"),
        Some(argv(&["python3"]))
    );
    assert_eq!(
        heredoc("python3 -u <<PY\nprint(1)\nPY"),
        Some(argv(&["python3", "-u"]))
    );
    // tree-sitter-bash drops a lone `-` before `<<`; Codex's fallback (same grammar)
    // yields the same words.
    assert_eq!(
        heredoc("python3 - <<PY\nprint(1)\nPY"),
        Some(argv(&["python3"]))
    );
    assert_eq!(heredoc("cat <<EOF\nhello $HOME\nEOF"), Some(argv(&["cat"])));
}

#[test]
fn requires_a_heredoc() {
    assert_eq!(heredoc("cat <<< hello"), None);
    assert_eq!(heredoc("ls"), None);
}

#[test]
fn refuses_file_redirects() {
    assert_eq!(heredoc("cat <<EOF > out.txt\nhi\nEOF"), None);
    assert_eq!(heredoc("cat <<EOF 2>/dev/null\nhi\nEOF"), None);
}

#[test]
fn refuses_variable_assignments_anywhere() {
    assert_eq!(heredoc("FOO=1 cat <<EOF\nx\nEOF"), None);
    assert_eq!(heredoc("FOO=1; cat <<EOF\nx\nEOF"), None);
    assert_eq!(heredoc("export FOO=1; cat <<EOF\nx\nEOF"), None);
}

#[test]
fn refuses_a_second_command_anywhere() {
    assert_eq!(heredoc("cat <<EOF\n$(git push)\nEOF"), None);
    assert_eq!(
        heredoc("python3 - <<'PY'\nprint(1)\nPY\nrm -rf /ws/x"),
        None
    );
}

#[test]
fn refuses_non_literal_words() {
    assert_eq!(heredoc("cat \"$X\" <<EOF\nx\nEOF"), None);
    assert_eq!(heredoc("$PY <<EOF\nx\nEOF"), None);
}

#[test]
fn refuses_syntax_errors_and_extended_wrappers() {
    assert_eq!(heredoc("cat <<EOF\nx\nEOF\n)"), None);
    assert_eq!(
        parse_shell_lc_single_command_prefix(&argv(&["bash", "-l", "-c", "cat <<EOF\nx\nEOF"])),
        None
    );
}

// ------------------------------------------- issue 18 item 1 (field log BL-08)

#[test]
fn an_unquoted_body_with_a_substitution_is_never_the_single_command_form() {
    assert_eq!(heredoc("python3 <<PY\n`rm -rf /ws/x`\nPY"), None);
    assert_eq!(heredoc("python3 - <<PY\n`rm -rf /ws/x`\nPY"), None);
    assert_eq!(heredoc("python3 - <<PY\n$(rm -rf /ws/x)\nPY"), None);
    // A line continuation between `$` and `(` still makes a substitution.
    assert_eq!(heredoc("cat <<EOF\n$\\\n(id)\nEOF"), None);
    // Quoted delimiters keep the body literal; escaped substitutions are text.
    assert_eq!(
        heredoc("python3 <<'PY'\n`rm -rf /ws/x`\nPY"),
        Some(argv(&["python3"]))
    );
    assert_eq!(
        heredoc("python3 <<\"PY\"\n$(rm -rf /ws/x)\nPY"),
        Some(argv(&["python3"]))
    );
    assert_eq!(
        heredoc("python3 <<PY\nprint('\\`x\\` \\$(y)')\nPY"),
        Some(argv(&["python3"]))
    );
}

#[test]
fn the_substitutions_of_an_unquoted_body_are_inner_commands() {
    for script in [
        "python3 <<PY\n`rm -rf /ws/x`\nPY",
        "python3 - <<PY\nprint(\"`rm -rf /ws/x`\")\nPY",
        "python3 - <<PY\n$(rm -rf /ws/x)\nPY",
        "cat <<EOF\nx $\\\n(rm -rf /ws/x)\nEOF",
        "cat <<-EOF\n\tx `rm -rf /ws/x` y\n\tEOF",
    ] {
        assert!(
            inner_contains(&bash(script), &["rm", "-rf", "/ws/x"]),
            "{script:?}: {:?}",
            inner(&bash(script))
        );
    }
    for literal in [
        "python3 <<'PY'\n`rm -rf /ws/x`\nPY",
        "python3 <<\\PY\n$(rm -rf /ws/x)\nPY",
        "cat <<EOF\n\\`rm -rf /ws/x\\`\nEOF",
    ] {
        assert!(
            !inner_contains(&bash(literal), &["rm", "-rf", "/ws/x"]),
            "{literal:?}: {:?}",
            inner(&bash(literal))
        );
    }
}

#[test]
fn a_command_after_the_heredoc_operator_is_a_command() {
    for script in [
        "python3 <<PY ; rm -rf x\nprint(1)\nPY",
        "python3 <<'PY' ; rm -rf x\nprint(1)\nPY",
        "python3 <<PY && rm -rf x\nprint(1)\nPY",
        "python3 <<PY || rm -rf x\nprint(1)\nPY",
    ] {
        assert!(
            inner_contains(&bash(script), &["rm", "-rf", "x"]),
            "{script:?}: {:?}",
            inner(&bash(script))
        );
        assert_eq!(heredoc(script), None, "{script:?}");
    }
    // Words after the delimiter without a separator are arguments of the fed command.
    assert!(inner_contains(
        &bash("cat <<EOF -n\nhi\nEOF"),
        &["cat", "-n"]
    ));
}
