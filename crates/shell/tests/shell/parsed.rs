//! The segmentation result (spec 03 "Segmentation result", edge cases 1, 2, 3, 5, 15,
//! 16, 20, 23).

use airlock_shell::{NotPlainReason, Note, ParsedCommand, SegmentSource, parse_command};
use pretty_assertions::assert_eq;

use crate::support::{argv, bash, segments};

fn parse(command: &[String]) -> ParsedCommand {
    parse_command(command).expect("valid argv")
}

/// Checks the invariants every result keeps, then returns it.
fn parse_checked(command: &[String]) -> ParsedCommand {
    let parsed = parse(command);
    assert!(!parsed.segments.is_empty());
    assert!(parsed.segments.iter().all(|segment| !segment.is_empty()));
    assert_eq!(
        parsed.plain,
        matches!(
            parsed.source,
            SegmentSource::Direct | SegmentSource::PlainScript
        )
    );
    for segment in &parsed.segments {
        assert!(
            parsed
                .inner_argvs()
                .any(|inner| inner == segment.as_slice()),
            "{segment:?} not in inner"
        );
    }
    assert_eq!(parsed.inner[0].argv, command);
    parsed
}

#[test]
fn a_direct_argv_is_one_plain_segment() {
    let command = argv(&["git", "pull"]);
    let parsed = parse_checked(&command);
    assert_eq!(parsed.segments, vec![command.clone()]);
    assert!(parsed.plain);
    assert_eq!(parsed.source, SegmentSource::Direct);
    assert!(parsed.notes.is_empty());
}

#[test]
fn non_shell_wrappers_are_direct() {
    for command in [
        argv(&["bash"]),
        argv(&["bash", "script.sh"]),
        argv(&["powershell.exe", "-NoProfile", "-Command", "ssh -V"]),
        argv(&["pwsh", "-Command", "npm test"]),
    ] {
        let parsed = parse_checked(&command);
        assert_eq!(parsed.source, SegmentSource::Direct, "{command:?}");
        assert_eq!(parsed.segments, vec![command]);
    }
}

#[test]
fn an_exact_wrapper_with_a_plain_script_yields_its_segments() {
    let parsed = parse_checked(&bash("git pull && git status"));
    assert_eq!(
        parsed.segments,
        segments(&[&["git", "pull"], &["git", "status"]])
    );
    assert!(parsed.plain);
    assert_eq!(parsed.source, SegmentSource::PlainScript);
    let parsed = parse_checked(&argv(&[
        "/bin/zsh",
        "-lc",
        "make lint 2>&1 | tee /tmp/lint.log",
    ]));
    assert_eq!(
        parsed.segments,
        segments(&[&["make", "lint"], &["tee", "/tmp/lint.log"]])
    );
}

#[test]
fn dash_and_ksh_exact_wrappers_can_be_plain() {
    for shell in ["dash", "ksh"] {
        let parsed = parse_checked(&argv(&[shell, "-c", "ls"]));
        assert_eq!(parsed.segments, segments(&[&["ls"]]), "{shell}");
        assert!(parsed.plain);
    }
}

#[test]
fn extended_wrappers_are_whole_and_not_plain() {
    for command in [
        argv(&["bash", "-l", "-c", "ls"]),
        argv(&["bash", "-lc", "ls", "extra"]),
        argv(&["bash", "-e", "-c", "curl https://x.invalid"]),
        argv(&["bash", "-ic", "ls"]),
        argv(&["bash", "-cl", "ls"]),
    ] {
        let parsed = parse_checked(&command);
        assert_eq!(parsed.segments, vec![command.clone()]);
        assert!(!parsed.plain);
        assert_eq!(
            parsed.not_plain_reason(),
            Some(&NotPlainReason::ExtendedWrapper)
        );
    }
}

#[test]
fn non_plain_scripts_are_whole_with_a_reason() {
    let cases: &[(&str, NotPlainReason)] = &[
        (
            "(cargo build)",
            NotPlainReason::Construct("subshell".into()),
        ),
        (
            "cargo build > log.txt",
            NotPlainReason::Redirect("> log.txt".into()),
        ),
        ("ls &", NotPlainReason::Operator("&".into())),
        (
            "echo $HOME",
            NotPlainReason::Construct("simple_expansion".into()),
        ),
        ("'l's -la", NotPlainReason::Word("'l's".into())),
        ("ls &&", NotPlainReason::SyntaxError),
    ];
    for (script, reason) in cases {
        let command = bash(script);
        let parsed = parse_checked(&command);
        assert_eq!(parsed.segments, vec![command.clone()], "{script}");
        assert!(!parsed.plain);
        assert_eq!(parsed.source, SegmentSource::WholeArgv);
        assert_eq!(parsed.not_plain_reason(), Some(reason), "{script}");
    }
}

#[test]
fn heredoc_scripts_use_the_command_words_but_are_not_plain() {
    let parsed = parse_checked(&bash("python3 <<'PY'\nprint(1)\nPY"));
    assert_eq!(parsed.segments, segments(&[&["python3"]]));
    assert!(!parsed.plain);
    assert_eq!(parsed.source, SegmentSource::Heredoc);
    assert!(parsed.notes.contains(&Note::HeredocFallback));
    let redirected = bash("cat <<EOF > out.txt\nhi\nEOF");
    assert_eq!(parse_checked(&redirected).segments, vec![redirected]);
}

#[test]
fn blank_scripts_are_whole_and_not_plain() {
    for script in ["", "   ", "\t\n  \n"] {
        let command = bash(script);
        let parsed = parse_checked(&command);
        assert_eq!(parsed.segments, vec![command.clone()]);
        assert_eq!(
            parsed.not_plain_reason(),
            Some(&NotPlainReason::EmptyScript)
        );
    }
}

#[test]
fn env_split_string_makes_the_command_not_plain() {
    let direct = argv(&["env", "-S", "git push"]);
    let parsed = parse_checked(&direct);
    assert!(!parsed.plain);
    assert_eq!(parsed.segments, vec![direct]);
    assert_eq!(
        parsed.not_plain_reason(),
        Some(&NotPlainReason::EnvSplitString)
    );
    let wrapped = bash("ls && timeout 5 env -S 'git push'");
    let parsed = parse_checked(&wrapped);
    assert!(!parsed.plain);
    assert_eq!(parsed.segments, vec![wrapped.clone()]);
    assert!(
        parsed
            .inner_argvs()
            .any(|inner| inner == argv(&["git", "push"]).as_slice())
    );
}

#[test]
fn inner_covers_segments_read_strictly() {
    // The plain view keeps `a\ b`; the deny view reads `a b`; both are present.
    let parsed = parse_checked(&bash("echo a\\ b"));
    assert_eq!(parsed.segments, segments(&[&["echo", "a\\ b"]]));
    assert!(
        parsed
            .inner_argvs()
            .any(|inner| inner == argv(&["echo", "a b"]).as_slice())
    );
}

#[test]
fn deny_view_completeness_is_reported() {
    assert!(parse(&bash("ls")).deny_view_complete());
    let mut script = "git push".to_owned();
    for _ in 0..20 {
        script = format!("timeout 1 {script}");
    }
    let parsed = parse(&bash(&script));
    assert!(!parsed.deny_view_complete());
    assert!(
        parsed
            .notes
            .iter()
            .any(|note| matches!(note, Note::DepthLimitReached { .. }))
    );
}

#[test]
fn notes_render_for_people() {
    let parsed = parse(&bash("(ls)"));
    let rendered: Vec<String> = parsed.notes.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        vec!["not plain: script uses a `subshell` construct".to_owned()]
    );
}

#[test]
fn serializes_for_reports_and_the_audit_log() {
    let parsed = parse(&bash("timeout 5 git push; (ls)"));
    let json = serde_json::to_value(&parsed).unwrap();
    assert_eq!(json["plain"], serde_json::json!(false));
    assert_eq!(json["source"], serde_json::json!("whole_argv"));
    assert_eq!(
        json["notes"][0],
        serde_json::json!({"kind": "not_plain", "detail": {"kind": "construct", "detail": "subshell"}})
    );
    let pushed = json["inner"]
        .as_array()
        .unwrap()
        .iter()
        .find(|inner| inner["argv"] == serde_json::json!(["git", "push"]))
        .unwrap();
    assert_eq!(
        pushed["via"],
        serde_json::json!([{"kind": "shell_script", "program": "bash"}, {"kind": "exec_wrapper", "wrapper": "timeout"}])
    );
}
