//! The patch parser: Codex's `Lenient` mode (reference §A2), with nested `@@` lines.

use std::path::PathBuf;

use crate::error::ParseError;
use crate::hunk::Hunk;
use crate::hunk::ParsedPatch;
use crate::hunk::UpdateChunk;

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const EMPTY_CONTEXT: &str = "@@";
const CONTEXT_PREFIX: &str = "@@ ";
const HEREDOC_OPENERS: [&str; 3] = ["<<EOF", "<<'EOF'", "<<\"EOF\""];

/// Parses `text` as a patch (reference §A2).
///
/// The text is trimmed and split into lines (`\n` or `\r\n`); the first and last lines must be
/// `*** Begin Patch` / `*** End Patch` after trimming, or the text must be wrapped in
/// `<<EOF` / `<<'EOF'` / `<<"EOF"` … `EOF`. A patch with no hunks parses (the caller rejects it
/// as an empty patch).
///
/// # Errors
/// [`ParseError`] with Codex's texts, for example `invalid patch: The first line of the patch
/// must be '*** Begin Patch'` or `invalid hunk at line 2, Update file hunk for path 'a.txt' is
/// empty`.
pub fn parse_patch(text: &str) -> Result<ParsedPatch, ParseError> {
    let all: Vec<&str> = text.trim().lines().collect();
    let lines = match check_boundaries(&all) {
        Ok(()) => all.as_slice(),
        Err(original) => unwrap_heredoc(&all, original)?,
    };
    let body = lines
        .get(1..lines.len().saturating_sub(1))
        .unwrap_or_default();
    let mut hunks = Vec::new();
    let mut remaining = body;
    let mut line_number = 2;
    while !remaining.is_empty() {
        let (hunk, consumed) = parse_one_hunk(remaining, line_number)?;
        hunks.push(hunk);
        line_number += consumed;
        remaining = remaining.get(consumed..).unwrap_or_default();
    }
    Ok(ParsedPatch {
        patch: lines.join("\n"),
        hunks,
    })
}

fn check_boundaries(lines: &[&str]) -> Result<(), ParseError> {
    let first = lines.first().map(|line| line.trim());
    let last = lines.last().map(|line| line.trim());
    if first != Some(BEGIN_PATCH) {
        return Err(ParseError::InvalidPatch(format!(
            "The first line of the patch must be '{BEGIN_PATCH}'"
        )));
    }
    if last != Some(END_PATCH) || lines.len() < 2 {
        return Err(ParseError::InvalidPatch(format!(
            "The last line of the patch must be '{END_PATCH}'"
        )));
    }
    Ok(())
}

/// Codex's lenient heredoc unwrapping: only when the strict check failed, only for an exact
/// opener, a last line ending with `EOF` and at least 4 lines; the inner lines are then
/// checked strictly (and their error is the one reported).
fn unwrap_heredoc<'a>(
    lines: &'a [&'a str],
    original: ParseError,
) -> Result<&'a [&'a str], ParseError> {
    match lines {
        [first, .., last]
            if HEREDOC_OPENERS.contains(first) && last.ends_with("EOF") && lines.len() >= 4 =>
        {
            let inner = lines.get(1..lines.len() - 1).unwrap_or_default();
            check_boundaries(inner)?;
            Ok(inner)
        }
        _ => Err(original),
    }
}

/// One hunk from the start of `lines`; returns it and how many lines it used.
fn parse_one_hunk(lines: &[&str], line_number: usize) -> Result<(Hunk, usize), ParseError> {
    let header = lines.first().map_or("", |line| line.trim());
    if let Some(path) = header.strip_prefix(ADD_FILE) {
        let mut contents = String::new();
        let mut used = 1;
        for line in lines.iter().skip(1) {
            let Some(added) = line.strip_prefix('+') else {
                break;
            };
            contents.push_str(added);
            contents.push('\n');
            used += 1;
        }
        return Ok((
            Hunk::AddFile {
                path: PathBuf::from(path),
                contents,
            },
            used,
        ));
    }
    if let Some(path) = header.strip_prefix(DELETE_FILE) {
        return Ok((
            Hunk::DeleteFile {
                path: PathBuf::from(path),
            },
            1,
        ));
    }
    if let Some(path) = header.strip_prefix(UPDATE_FILE) {
        return parse_update(path, lines, line_number);
    }
    Err(ParseError::InvalidHunk {
        message: format!(
            "'{header}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', \
             '*** Delete File: {{path}}', '*** Update File: {{path}}'"
        ),
        line_number,
    })
}

fn parse_update(
    path: &str,
    lines: &[&str],
    line_number: usize,
) -> Result<(Hunk, usize), ParseError> {
    let mut remaining = lines.get(1..).unwrap_or_default();
    let mut used = 1;
    // Not trimmed (Codex): an indented Move line is a context line.
    let move_path = remaining
        .first()
        .and_then(|line| line.strip_prefix(MOVE_TO));
    if move_path.is_some() {
        remaining = remaining.get(1..).unwrap_or_default();
        used += 1;
    }
    let mut chunks = Vec::new();
    while let Some(line) = remaining.first() {
        if line.trim().is_empty() {
            used += 1;
            remaining = remaining.get(1..).unwrap_or_default();
            continue;
        }
        if line.starts_with('*') {
            break;
        }
        let (chunk, chunk_lines) = parse_chunk(remaining, line_number + used, chunks.is_empty())?;
        chunks.push(chunk);
        used += chunk_lines;
        remaining = remaining.get(chunk_lines..).unwrap_or_default();
    }
    if chunks.is_empty() {
        return Err(ParseError::InvalidHunk {
            message: format!("Update file hunk for path '{path}' is empty"),
            line_number,
        });
    }
    Ok((
        Hunk::UpdateFile {
            path: PathBuf::from(path),
            move_path: move_path.map(PathBuf::from),
            chunks,
        },
        used,
    ))
}

/// The `@@` context lines at the start of a chunk: one, or several in a row (Airlock: nested
/// context); a bare `@@` adds none. Returns the contexts and how many lines they used.
fn context_lines(lines: &[&str]) -> (Vec<String>, usize) {
    let mut contexts = Vec::new();
    let mut used = 0;
    for line in lines {
        if *line == EMPTY_CONTEXT {
            used += 1;
        } else if let Some(context) = line.strip_prefix(CONTEXT_PREFIX) {
            contexts.push(context.to_owned());
            used += 1;
        } else {
            break;
        }
    }
    (contexts, used)
}

fn parse_chunk(
    lines: &[&str],
    line_number: usize,
    allow_missing_context: bool,
) -> Result<(UpdateChunk, usize), ParseError> {
    let (change_context, start) = context_lines(lines);
    if start == 0 && !allow_missing_context {
        return Err(ParseError::InvalidHunk {
            message: format!(
                "Expected update hunk to start with a @@ context marker, got: '{}'",
                lines.first().copied().unwrap_or_default()
            ),
            line_number,
        });
    }
    let no_lines = |at: usize| ParseError::InvalidHunk {
        message: "Update hunk does not contain any lines".to_owned(),
        line_number: at,
    };
    if start >= lines.len() {
        return Err(no_lines(line_number + start));
    }
    let mut chunk = UpdateChunk {
        change_context,
        ..UpdateChunk::default()
    };
    let mut parsed = 0;
    for line in lines.iter().skip(start) {
        if *line == END_OF_FILE {
            if parsed == 0 {
                return Err(no_lines(line_number + start));
            }
            chunk.is_end_of_file = true;
            parsed += 1;
            break;
        }
        let mut chars = line.chars();
        match chars.next() {
            None => {
                chunk.old_lines.push(String::new());
                chunk.new_lines.push(String::new());
            }
            Some(' ') => {
                chunk.old_lines.push(chars.as_str().to_owned());
                chunk.new_lines.push(chars.as_str().to_owned());
            }
            Some('+') => chunk.new_lines.push(chars.as_str().to_owned()),
            Some('-') => chunk.old_lines.push(chars.as_str().to_owned()),
            Some(_) => {
                if parsed == 0 {
                    return Err(ParseError::InvalidHunk {
                        message: format!(
                            "Unexpected line found in update hunk: '{line}'. Every line should start \
                             with ' ' (context line), '+' (added line), or '-' (removed line)"
                        ),
                        // Airlock: the line's own number (Codex adds 1 even without `@@`).
                        line_number: line_number + start,
                    });
                }
                break;
            }
        }
        parsed += 1;
    }
    Ok((chunk, parsed + start))
}
