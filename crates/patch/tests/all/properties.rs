//! Properties: a random file and a random edit → the generated patch applies and yields the
//! edit; no input makes the parser or verifier panic.

use airlock_patch::parse_patch;
use proptest::prelude::*;

use crate::support::Files;
use crate::support::apply_to;
use crate::support::verify;

fn line() -> impl Strategy<Value = String> {
    // Small alphabets, so lines and whole windows repeat and the matcher meets ambiguity.
    let pieces = vec!["a", "b", " ", "-", "+", "*", "@", "\u{e9}", "\u{201C}"];
    prop_oneof![
        proptest::sample::select(vec!["a", "b", ""]).prop_map(str::to_owned),
        proptest::collection::vec(proptest::sample::select(pieces), 0..4)
            .prop_map(|parts| parts.concat()),
    ]
}

/// The `@@` chunk that turns `lines` into the edit `[start, end) → replacement`, with about
/// `context` lines around it, widened before the edit until its first exact occurrence is the
/// intended one (as a careful model would).
fn chunk_for(
    lines: &[String],
    start: usize,
    end: usize,
    replacement: &[String],
    context: (usize, usize),
) -> String {
    chunk_after(lines, 0, start, end, replacement, context).0
}

/// [`chunk_for`] for a chunk searched from line `from` (after an earlier chunk); also returns
/// the line after the chunk's text.
fn chunk_after(
    lines: &[String],
    from: usize,
    start: usize,
    end: usize,
    replacement: &[String],
    context: (usize, usize),
) -> (String, usize) {
    let mut after = lines.len().min(end + context.1);
    let mut before = start - (start - from).min(context.0);
    if start == end && before == start && after == end && !lines.is_empty() {
        // A pure insertion needs one line to anchor it.
        if end < lines.len() {
            after = end + 1;
        } else if start > from {
            before = start - 1;
        }
    }
    loop {
        let pattern = &lines[before..after];
        let first = (from..=lines.len() - pattern.len())
            .find(|&at| &lines[at..at + pattern.len()] == pattern);
        if first == Some(before) || before == from {
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
    (out, after)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_patch_yields_the_edit(
        lines in proptest::collection::vec(line(), 1..12),
        cut in (0_usize..12, 0_usize..4),
        replacement in proptest::collection::vec(line(), 0..4),
        crlf in any::<bool>(),
        context in (0_usize..=3, 0_usize..=3),
    ) {
        let start = cut.0 % (lines.len() + 1);
        let end = (start + cut.1).min(lines.len());
        prop_assume!(start != end || !replacement.is_empty());
        let ending = if crlf { "\r\n" } else { "\n" };
        let render = |lines: &[String]| lines.iter().map(|line| format!("{line}{ending}")).collect::<String>();
        let mut expected = lines.clone();
        expected.splice(start..end, replacement.iter().cloned());
        let body = format!("*** Update File: f\n{}", chunk_for(&lines, start, end, &replacement, context));
        prop_assert_eq!(apply_to("f", &render(&lines), &body), Ok(render(&expected)));
    }

    #[test]
    fn parser_and_verifier_never_panic(text in "(\\*\\*\\* (Begin|End) Patch|\\*\\*\\* (Add|Delete|Update) File: [a-c]|@@ ?[a-c]*|[ +-][a-c]*|\\*\\*\\* End of File|\\*\\*\\* Move to: [a-c]|<<'EOF'|EOF|\t)(\n(\\*\\*\\* (Begin|End) Patch|\\*\\*\\* (Add|Delete|Update) File: [a-c]|@@ ?[a-c]*|[ +-][a-c]*|\\*\\*\\* End of File|\\*\\*\\* Move to: [a-c]|\t)){0,12}") {
        let _ = parse_patch(&text);
        let files = Files::with(&[("a", "a\nb\nc\n"), ("b", "")]);
        let _ = verify(&files, &text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn two_chunk_patch_yields_both_edits(
        lines in proptest::collection::vec(line(), 2..14),
        first in (0_usize..14, 0_usize..3, proptest::collection::vec(line(), 0..3)),
        second in (0_usize..14, 0_usize..3, proptest::collection::vec(line(), 0..3)),
        context in (0_usize..=2, 0_usize..=2),
    ) {
        let len = lines.len();
        let start1 = first.0 % len;
        let end1 = (start1 + first.1).min(len);
        prop_assume!(start1 != end1 || !first.2.is_empty());
        let (chunk1, from) = chunk_after(&lines, 0, start1, end1, &first.2, context);
        prop_assume!(from < len);
        let start2 = from + second.0 % (len - from);
        let end2 = (start2 + second.1).min(len);
        // The second edit needs text of its own to anchor it.
        prop_assume!(start2 != end2 || start2 < len);
        let (chunk2, _) = chunk_after(&lines, from, start2, end2, &second.2, context);
        let render = |lines: &[String]| lines.iter().map(|line| format!("{line}\n")).collect::<String>();
        let mut expected = lines.clone();
        expected.splice(start2..end2, second.2.iter().cloned());
        expected.splice(start1..end1, first.2.iter().cloned());
        let body = format!("*** Update File: f\n{chunk1}{chunk2}");
        prop_assert_eq!(apply_to("f", &render(&lines), &body), Ok(render(&expected)));
    }
}
