//! Codex's heredoc single-command fallback (reference §2, spec 03 edge case 5).

use airlock_shell::parse_shell_lc_single_command_prefix;
use pretty_assertions::assert_eq;

use crate::support::{argv, bash};

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
