//! Red-team finding F3: heredocs are read as bash reads them. Where tree-sitter ends a
//! heredoc elsewhere than bash, the single-command fallback is refused and the deny view
//! counts as incomplete (callers then ask); unquoted bodies with expansions are never
//! inert text.

use airlock_shell::{Note, SegmentSource, parse_command, parse_shell_lc_single_command_prefix};
use pretty_assertions::assert_eq;

use crate::support::{argv, bash};

/// Scripts where bash ends a heredoc elsewhere than tree-sitter, or that this model does
/// not read exactly; bash runs `touch x` in most of them.
const MISREAD: &[&str] = &[
    // Partly quoted delimiters: bash's delimiter is `EOF`.
    "cat <<E\"O\"F\nhi\nEOF\ntouch x\nE\"O\"F",
    "cat <<\"E\"OF\nhi\nEOF\ntouch x\n\"E\"OF",
    "cat <<E'O'F\nhi\nEOF\ntouch x\nE'O'F",
    "cat <<E\\OF\nhi\nEOF\ntouch x\nE\\OF",
    "cat <<\\EOF\nhi\nEOF\ntouch x\n\\EOF",
    // A line continuation in an unquoted body joins `EO` and `F` into the delimiter.
    "cat <<EOF\nEO\\\nF\ntouch x\nEOF",
    // `<<-` strips tabs only; a terminator with spaces or trailing blanks is body text.
    "cat <<-EOF\nhi\n  EOF\ntouch x\nEOF",
    "cat <<EOF\nhi\n EOF\ntouch x\nEOF",
    "cat <<EOF\nhi\nEOF \ntouch x\nEOF",
    "cat <<EOF\nhi\nEOF\r\ntouch x\nEOF",
    // Several heredocs on one line, in one command or in several.
    "cat <<A <<B\na\nA\ntouch x\nB",
    "cat <<A; cat <<B\na\nA\ntouch x\nB",
    "cat <<A && cat <<B\na\nA\nb\nB\ntouch x",
    // A body that never ends, and one on a line a quote keeps open.
    "cat <<EOF\nhi",
    "cat <<EOF 'a\nb'\nhi\nEOF",
    // Inside a command substitution closed on the heredoc's own line.
    "echo $(cat <<EOF)\nhi\nEOF",
    // Delimiters with expansions are not modelled.
    "cat <<$D\nhi\n$D",
];

#[test]
fn misread_heredocs_are_never_the_single_command_form() {
    for script in MISREAD {
        assert_eq!(
            parse_shell_lc_single_command_prefix(&bash(script)),
            None,
            "{script:?}"
        );
        let parsed = parse_command(&bash(script)).unwrap();
        assert_eq!(parsed.source, SegmentSource::WholeArgv, "{script:?}");
        assert!(!parsed.plain, "{script:?}");
    }
}

#[test]
fn misread_heredocs_leave_the_deny_view_incomplete() {
    for script in MISREAD {
        let parsed = parse_command(&bash(script)).unwrap();
        assert!(
            !parsed.deny_view_complete()
                || parsed
                    .inner_argvs()
                    .any(|command| command.starts_with(&argv(&["touch", "x"]))),
            "{script:?}: {:?}",
            parsed.notes
        );
    }
    let parsed = parse_command(&bash(MISREAD[0])).unwrap();
    assert!(
        parsed.notes.contains(&Note::HeredocUnclear),
        "{:?}",
        parsed.notes
    );
}

#[test]
fn heredocs_bash_reads_the_same_way_stay_understood() {
    for (script, words) in [
        ("cat <<EOF\nhi\nEOF", &["cat"][..]),
        ("cat <<'EOF'\n$(touch x)\nEOF", &["cat"]),
        ("cat <<\"EOF\"\nhi\nEOF", &["cat"]),
        ("cat <<\\EOF\nhi\nEOF", &["cat"]),
        ("cat <<'E F'\nhi\nE F", &["cat"]),
        ("cat <<-EOF\n\thi\n\t\tEOF", &["cat"]),
        ("cat << EOF\nhi\nEOF", &["cat"]),
        ("cat <<E-F.G\nhi\nE-F.G", &["cat"]),
        ("cat <<EOF # it's fine\nhi\nEOF", &["cat"]),
        ("python3 -u <<'PY'\nprint(1)\nPY", &["python3", "-u"]),
        ("cat <<EOF\n$HOME ${USER} $1 $@\nEOF", &["cat"]),
    ] {
        assert_eq!(
            parse_shell_lc_single_command_prefix(&bash(script)),
            Some(argv(words)),
            "{script:?}"
        );
        let parsed = parse_command(&bash(script)).unwrap();
        assert!(
            parsed.deny_view_complete(),
            "{script:?}: {:?}",
            parsed.notes
        );
    }
    // Not the fallback (a file redirect, a pipe), but read completely.
    for script in [
        "cat <<'EOF' > \"out file\"\nhi\nEOF",
        "cat > out <<'EOF'\nhi\nEOF\necho done",
        "cat <<EOF | wc -l\nhi\nEOF",
        "x=$(cat <<EOF\nhi\nEOF\n)",
    ] {
        let parsed = parse_command(&bash(script)).unwrap();
        assert!(
            parsed.deny_view_complete(),
            "{script:?}: {:?}",
            parsed.notes
        );
    }
}

#[test]
fn unquoted_bodies_that_expand_are_not_inert() {
    for script in [
        "cat <<EOF\n$(touch x)\nEOF",
        "cat <<EOF\n`touch x`\nEOF",
        "cat <<EOF\n$((1+2))\nEOF",
        "cat <<EOF\n$[X]\nEOF",
        "cat <<EOF\n${a[X]}\nEOF",
        "cat <<EOF\n${x@P}\nEOF",
        "cat <<EOF\n${x:-$(touch x)}\nEOF",
        "cat <<EOF\n${x:=y}\nEOF",
        "cat <<EOF\n$\\\n(touch x)\nEOF",
        "cat <<EOF\n\\\\$(touch x)\nEOF",
    ] {
        assert_eq!(
            parse_shell_lc_single_command_prefix(&bash(script)),
            None,
            "{script:?}"
        );
    }
    // Escaped, or quoted delimiter: literal text.
    for script in [
        "cat <<EOF\nprice: \\$5 \\\\ ok\nEOF",
        "cat <<'EOF'\n$(touch x)\nEOF",
    ] {
        assert_eq!(
            parse_shell_lc_single_command_prefix(&bash(script)),
            Some(argv(&["cat"])),
            "{script:?}"
        );
    }
}
