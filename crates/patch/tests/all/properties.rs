//! Properties: a random file and a random edit → the generated patch applies and yields the
//! edit; no input makes the parser or verifier panic.

use airlock_patch::parse_patch;
use proptest::prelude::*;

use crate::support::Files;
use crate::support::apply_to;
use crate::support::verify;

fn line() -> impl Strategy<Value = String> {
    // A small alphabet, so lines repeat and the matcher meets ambiguity.
    let pieces = vec!["a", "b", " ", "-", "+", "*", "@", "\u{e9}", "\u{201C}"];
    proptest::collection::vec(proptest::sample::select(pieces), 0..4)
        .prop_map(|parts| parts.concat())
}

/// The `@@` chunk that turns `lines` into the edit `[start, end) → replacement`, with enough
/// context before it that its first exact occurrence is the intended one.
fn chunk_for(lines: &[String], start: usize, end: usize, replacement: &[String]) -> String {
    let after = lines.len().min(end + 3);
    let mut before = start.saturating_sub(3);
    loop {
        let pattern = &lines[before..after];
        let first =
            (0..=lines.len() - pattern.len()).find(|&at| &lines[at..at + pattern.len()] == pattern);
        if first == Some(before) || before == 0 {
            break;
        }
        before -= 1;
    }
    let mut out = String::from("@@\n");
    for line in &lines[before..start] {
        out.push_str(&format!(" {line}\n"));
    }
    for line in &lines[start..end] {
        out.push_str(&format!("-{line}\n"));
    }
    for line in replacement {
        out.push_str(&format!("+{line}\n"));
    }
    for line in &lines[end..after] {
        out.push_str(&format!(" {line}\n"));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_patch_yields_the_edit(
        lines in proptest::collection::vec(line(), 1..12),
        cut in (0_usize..12, 0_usize..4),
        replacement in proptest::collection::vec(line(), 0..4),
        crlf in any::<bool>(),
    ) {
        let start = cut.0 % (lines.len() + 1);
        let end = (start + cut.1).min(lines.len());
        prop_assume!(start != end || !replacement.is_empty());
        let ending = if crlf { "\r\n" } else { "\n" };
        let render = |lines: &[String]| lines.iter().map(|line| format!("{line}{ending}")).collect::<String>();
        let mut expected = lines.clone();
        expected.splice(start..end, replacement.iter().cloned());
        let body = format!("*** Update File: f\n{}", chunk_for(&lines, start, end, &replacement));
        prop_assert_eq!(apply_to("f", &render(&lines), &body), Ok(render(&expected)));
    }

    #[test]
    fn parser_and_verifier_never_panic(text in "(\\*\\*\\* (Begin|End) Patch|\\*\\*\\* (Add|Delete|Update) File: [a-c]|@@ ?[a-c]*|[ +-][a-c]*|\\*\\*\\* End of File|\\*\\*\\* Move to: [a-c]|<<'EOF'|EOF|\t)(\n(\\*\\*\\* (Begin|End) Patch|\\*\\*\\* (Add|Delete|Update) File: [a-c]|@@ ?[a-c]*|[ +-][a-c]*|\\*\\*\\* End of File|\\*\\*\\* Move to: [a-c]|\t)){0,12}") {
        let _ = parse_patch(&text);
        let files = Files::with(&[("a", "a\nb\nc\n"), ("b", "")]);
        let _ = verify(&files, &text);
    }
}
