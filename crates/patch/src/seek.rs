//! Finding a chunk's lines in a file: Codex's `seek_sequence` passes (reference §A3), and the
//! context search with Airlock's prefix pass (spec 11).

/// Codex's four passes, loosest last; each pass scans every position before the next starts,
/// so an exact match anywhere wins over a fuzzy one earlier in the file.
const PASSES: [fn(&str, &str) -> bool; 4] = [
    |a, b| a == b,
    |a, b| a.trim_end() == b.trim_end(),
    |a, b| a.trim() == b.trim(),
    |a, b| normalise(a) == normalise(b),
];

/// The first position `>= start` where `pattern` matches `lines` (reference §A3 "The four
/// matching passes"). With `eof`, only the last possible position is tried. An empty pattern
/// matches at `start`; a pattern longer than the file never matches.
pub(crate) fn seek_sequence(
    lines: &[String],
    pattern: &[String],
    start: usize,
    eof: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    let last = lines.len().checked_sub(pattern.len())?;
    let first = if eof { last.max(start) } else { start };
    PASSES.iter().find_map(|equal| {
        (first..=last).find(|&at| {
            lines
                .get(at..at + pattern.len())
                .is_some_and(|window| window.iter().zip(pattern).all(|(a, b)| equal(a, b)))
        })
    })
}

/// Where the `@@` context line `context` is, searching from `start`: a whole-line match under
/// the four passes first; otherwise (Airlock, spec 11) the first line whose trimmed,
/// normalised text starts with the trimmed, normalised context (never for an empty context).
pub(crate) fn seek_context(lines: &[String], context: &str, start: usize) -> Option<usize> {
    let whole = [context.to_owned()];
    if let Some(at) = seek_sequence(lines, &whole, start, false) {
        return Some(at);
    }
    let wanted = normalise(context);
    if wanted.is_empty() {
        return None;
    }
    (start..lines.len()).find(|&at| {
        lines
            .get(at)
            .is_some_and(|line| normalise(line).starts_with(&wanted))
    })
}

/// Trimmed text with typographic punctuation replaced by ASCII (reference §A3 pass 4).
fn normalise(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}'..='\u{201B}' => '\'',
            '\u{201C}'..='\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}
