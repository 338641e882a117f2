//! Text from the agent (commands, reasons, justifications) made safe to print on a person's
//! terminal (issue 17 item 7). The agent is the adversary: without this, a command could
//! carry ANSI sequences that erase or recolour its own displayed text, bidi controls that
//! show `rm -rf ~` as something else, zero-width characters that hide words, or thousands
//! of spaces that push its tail off the screen.
//!
//! [`safe`] escapes every control character (C0, DEL, C1 — so `ESC` cannot start a
//! sequence), every bidi control, zero-width and other invisible formatting character, and
//! the line and paragraph separators, as `\xNN` / `\u{NNNN}` (`\n`, `\r`, `\t` as
//! themselves, escaped); it collapses runs of more than [`MAX_PADDING`] spaces into a
//! visible marker. The result is one line of visible characters.

use std::fmt::Write as _;

/// Longer runs of spaces are shown as `[N spaces]`.
pub const MAX_PADDING: usize = 8;

/// Invisible formatting characters that are not `char::is_control`: bidi embeddings,
/// overrides and isolates, marks, zero-width characters, joiners, word joiner and invisible
/// operators, byte-order mark, soft hyphen, Mongolian vowel separator, line / paragraph
/// separators, interlinear annotation, tag characters.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// `text` with every control and invisible formatting character escaped and long padding
/// collapsed; safe to print on a terminal as one line.
#[must_use]
pub fn safe(text: &str) -> String {
    escape_with(text, MAX_PADDING)
}

/// [`safe`] without collapsing spaces, for Airlock's own multi-line messages whose layout
/// matters (a TOML error's caret under the column).
#[must_use]
pub fn escape(text: &str) -> String {
    escape_with(text, usize::MAX)
}

/// Longer runs of spaces in a diff line are collapsed (shorter ones are indentation).
pub const MAX_DIFF_PADDING: usize = 64;

/// [`safe`] for one line of a diff or of file content: indentation is kept, only runs of
/// more than [`MAX_DIFF_PADDING`] spaces are collapsed.
#[must_use]
pub fn diff_line(text: &str) -> String {
    escape_with(text, MAX_DIFF_PADDING)
}

/// Each line of Airlock's own multi-line text (a summary, a report) escaped with
/// [`escape`], the line breaks kept; a `\r` inside a line is shown, never obeyed.
#[must_use]
pub fn lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_suffix('\n') {
            Some(body) => {
                out.push_str(&escape(body));
                out.push('\n');
            }
            None => out.push_str(&escape(line)),
        }
    }
    out
}

fn escape_with(text: &str, max_padding: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut spaces = 0_usize;
    let flush = |out: &mut String, spaces: &mut usize| {
        if *spaces > max_padding {
            let _ = write!(out, " [{spaces} spaces] ");
        } else {
            out.extend(std::iter::repeat_n(' ', *spaces));
        }
        *spaces = 0;
    };
    for c in text.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        flush(&mut out, &mut spaces);
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() || is_invisible_format(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    flush(&mut out, &mut spaces);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_could_rewrite_the_screen() {
        assert_eq!(
            safe("echo hi\u{1b}[2K\u{1b}[1Gls"),
            "echo hi\\x1b[2K\\x1b[1Gls"
        );
        assert_eq!(safe("a\u{202e}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        assert_eq!(safe("r\u{200b}m"), "r\\u{200b}m");
        assert_eq!(safe("x\ny\r\u{7f}\u{9b}"), "x\\ny\\r\\x7f\\x9b");
        assert_eq!(safe("tag\u{e0041}"), "tag\\u{e0041}");
        assert_eq!(safe("plain text, ünïcode ok"), "plain text, ünïcode ok");
    }

    #[test]
    fn lines_keeps_line_breaks_and_escapes_the_rest() {
        assert_eq!(
            lines("Success.\nA a\u{1b}[2J.txt\r\nM b\n"),
            "Success.\nA a\\x1b[2J.txt\\r\nM b\n"
        );
        assert_eq!(diff_line("+        indented"), "+        indented");
    }

    #[test]
    fn collapses_long_padding() {
        let padded = format!("ls{}; rm -rf ~", " ".repeat(300));
        assert_eq!(safe(&padded), "ls [300 spaces] ; rm -rf ~");
        assert_eq!(safe("a        b"), "a        b");
    }
}
