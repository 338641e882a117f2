//! Applying an update's chunks to a file's text (reference §A3; spec 11 improvements).

use crate::error::VerifyError;
use crate::hunk::UpdateChunk;
use crate::seek::seek_context;
use crate::seek::seek_sequence;
use crate::text::TextLines;

/// One region to replace: start line, how many old lines, the new lines (`None` ending =
/// the file's style).
struct Replacement {
    start: usize,
    old_len: usize,
    new_lines: Vec<String>,
}

/// The new text of `original` after `chunks` (spec 11; reference §A3). `path` is only used in
/// error messages.
///
/// Chunks are found in file order. Matched regions are replaced with the patch's new lines as
/// written; lines outside them keep their text and ending; new lines take the file's line
/// ending style; the result always ends with a line ending (unless it is empty).
///
/// # Errors
/// [`VerifyError::ContextNotFound`], [`VerifyError::LinesNotFound`],
/// [`VerifyError::NotAtEndOfFile`].
pub(crate) fn apply_chunks(
    original: &str,
    chunks: &[UpdateChunk],
    path: &str,
) -> Result<String, VerifyError> {
    let file = TextLines::split(original);
    let lines = &file.lines;
    let mut replacements = Vec::new();
    let mut line_index = 0;
    for chunk in chunks {
        for context in &chunk.change_context {
            let at = seek_context(lines, context, line_index).ok_or_else(|| {
                VerifyError::ContextNotFound {
                    context: context.clone(),
                    path: path.to_owned(),
                }
            })?;
            line_index = at + 1;
        }
        if chunk.old_lines.is_empty() {
            // Codex appends a pure addition at the end of the file; Airlock inserts it after
            // its context line when it has one (spec 11), unless it is marked for the end.
            let start = if chunk.change_context.is_empty() || chunk.is_end_of_file {
                lines.len()
            } else {
                line_index
            };
            replacements.push(Replacement {
                start,
                old_len: 0,
                new_lines: chunk.new_lines.clone(),
            });
            continue;
        }
        let (start, old_len, new_lines) = find_chunk(lines, chunk, line_index, path)?;
        line_index = start + old_len;
        replacements.push(Replacement {
            start,
            old_len,
            new_lines,
        });
    }
    Ok(render(&file, replacements))
}

/// Where a chunk's old lines are, with Codex's retry without a trailing empty line.
fn find_chunk(
    lines: &[String],
    chunk: &UpdateChunk,
    from: usize,
    path: &str,
) -> Result<(usize, usize, Vec<String>), VerifyError> {
    let eof = chunk.is_end_of_file;
    let mut old: &[String] = &chunk.old_lines;
    let mut new: &[String] = &chunk.new_lines;
    let mut found = seek_sequence(lines, old, from, eof);
    if found.is_none() && old.last().is_some_and(String::is_empty) {
        old = old.get(..old.len() - 1).unwrap_or_default();
        if new.last().is_some_and(String::is_empty) {
            new = new.get(..new.len() - 1).unwrap_or_default();
        }
        found = seek_sequence(lines, old, from, eof);
    }
    if let Some(start) = found {
        return Ok((start, old.len(), new.to_vec()));
    }
    let joined = chunk.old_lines.join("\n");
    if eof && seek_sequence(lines, &chunk.old_lines, from, false).is_some() {
        return Err(VerifyError::NotAtEndOfFile {
            path: path.to_owned(),
            lines: joined,
        });
    }
    Err(VerifyError::LinesNotFound {
        path: path.to_owned(),
        lines: joined,
    })
}

/// The file with `replacements` applied (last first, so earlier positions stay valid).
fn render(file: &TextLines, mut replacements: Vec<Replacement>) -> String {
    let style = file.style();
    let mut lines: Vec<(String, &'static str)> = file
        .lines
        .iter()
        .cloned()
        .zip(file.endings.iter().copied())
        .collect();
    replacements.sort_by_key(|replacement| replacement.start);
    for replacement in replacements.into_iter().rev() {
        let start = replacement.start.min(lines.len());
        let end = (start + replacement.old_len).min(lines.len());
        let new = replacement.new_lines.into_iter().map(|line| (line, style));
        lines.splice(start..end, new);
    }
    let mut out = String::new();
    for (line, ending) in &lines {
        out.push_str(line);
        // Every line ends with a line ending, including the last (Codex fixture 014).
        out.push_str(if ending.is_empty() { style } else { ending });
    }
    out
}
