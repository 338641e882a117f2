//! The interactive patch prompt (spec 11 §Approval: "the user prompt shows the diff, paths,
//! and the decisions"): the changes on stderr, the diff coloured when stdout is a terminal,
//! then one key: `y` approve, `a` approve for the session (every file of this patch), `n`
//! deny, `Esc` / `Ctrl-C` abort.
//!
//! The patch is the agent's text, and an existing file's content (shown in a diff) may have
//! been written by anyone: every path, diff line and reason goes through
//! [`crate::terminal_text`] so no ANSI sequence can clear the screen, hide the header or
//! rewrite a path (issue 17). Diff lines keep their indentation (only very long runs of
//! spaces are collapsed); the colours are Airlock's own, added after escaping.

use std::io::IsTerminal as _;
use std::io::Write as _;

use airlock_approval::ApplyPatchApprovalRequestEvent;
use airlock_approval::FileChange;
use airlock_approval::patch_decisions;
use airlock_protocol::ReviewDecision;

use super::keys;
use crate::terminal_text::diff_line;
use crate::terminal_text::safe;

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// Shows `request` and returns the decision (end of input aborts).
pub fn ask(request: &ApplyPatchApprovalRequestEvent) -> ReviewDecision {
    let offered = patch_decisions();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(render(request, std::io::stdout().is_terminal()).as_bytes());
    let _ = err.flush();
    keys::ask_key(&mut err, &offered)
}

/// The prompt text: reason, each path with its change, the diff (coloured when `colour`).
pub fn render(request: &ApplyPatchApprovalRequestEvent, colour: bool) -> String {
    let mut text = String::from("\nairlock: approval needed to apply a patch\n");
    if let Some(reason) = &request.reason {
        text.push_str(&format!("  retry reason: {}\n", safe(reason)));
    }
    for (path, change) in &request.changes {
        match change {
            FileChange::Add { content } => {
                text.push_str(&format!("  add {}\n", shown(path)));
                for line in content.lines() {
                    text.push_str(&paint(&format!("+{line}"), colour));
                }
            }
            FileChange::Delete { .. } => text.push_str(&format!("  delete {}\n", shown(path))),
            FileChange::Update {
                unified_diff,
                move_path,
            } => {
                match move_path {
                    Some(dest) => {
                        text.push_str(&format!("  update {} -> {}\n", shown(path), shown(dest)))
                    }
                    None => text.push_str(&format!("  update {}\n", shown(path))),
                }
                for line in unified_diff.lines() {
                    text.push_str(&paint(line, colour));
                }
            }
        }
    }
    text.push_str(
        "  [y] approve  [a] approve these files for this session  [n] deny  [Esc] abort\n> ",
    );
    text
}

/// A path as one line of visible characters.
fn shown(path: &std::path::Path) -> String {
    safe(&path.display().to_string())
}

/// One diff line, escaped, then coloured by its first character.
fn paint(line: &str, colour: bool) -> String {
    let line = diff_line(line);
    let line = line.as_str();
    let code = match line.chars().next() {
        Some('+') => GREEN,
        Some('-') => RED,
        Some('@') => CYAN,
        _ => "",
    };
    if colour && !code.is_empty() {
        format!("    {code}{line}{RESET}\n")
    } else {
        format!("    {line}\n")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;

    fn request() -> ApplyPatchApprovalRequestEvent {
        let mut changes = BTreeMap::new();
        changes.insert(
            PathBuf::from("/home/u/notes.txt"),
            FileChange::Update {
                unified_diff: "@@ -1 +1 @@\n-old\n+new\n".to_owned(),
                move_path: None,
            },
        );
        changes.insert(
            PathBuf::from("/home/u/gone.txt"),
            FileChange::Delete {
                content: "secret\n".to_owned(),
            },
        );
        ApplyPatchApprovalRequestEvent {
            call_id: "call-1".to_owned(),
            turn_id: "turn-1".to_owned(),
            changes,
            reason: None,
            grant_root: None,
        }
    }

    #[test]
    fn shows_paths_and_the_diff_plain_when_not_a_terminal() {
        assert_eq!(
            render(&request(), false),
            "\nairlock: approval needed to apply a patch\n  delete /home/u/gone.txt\n  update /home/u/notes.txt\n    @@ -1 +1 @@\n    -old\n    +new\n  [y] approve  [a] approve these files for this session  [n] deny  [Esc] abort\n> "
        );
    }

    #[test]
    fn colours_the_diff_on_a_terminal() {
        let text = render(&request(), true);
        assert!(
            text.contains("    \x1b[31m-old\x1b[0m\n    \x1b[32m+new\x1b[0m\n"),
            "{text:?}"
        );
        assert!(text.contains("\x1b[36m@@ -1 +1 @@\x1b[0m"));
        // A deleted file's content is not shown, only its path.
        assert!(!text.contains("secret"));
    }

    #[test]
    fn escapes_paths_diff_lines_and_reasons() {
        let mut changes = BTreeMap::new();
        changes.insert(
            PathBuf::from("/tmp/outside-\x1b[31mred.txt"),
            FileChange::Add {
                content: "line with \x1b[2J clear and \x1b]0;title\x07 osc\n".to_owned(),
            },
        );
        changes.insert(
            PathBuf::from("/tmp/old\u{202e}txt.sh"),
            FileChange::Update {
                unified_diff: "@@ -1 +1 @@\n-\x1b[1A\x1b[2Kold\n+new\r x\n".to_owned(),
                move_path: Some(PathBuf::from("/tmp/new\x1b[0m.sh")),
            },
        );
        let request = ApplyPatchApprovalRequestEvent {
            reason: Some("sandbox \x1b[2Jdenied".to_owned()),
            changes,
            ..request()
        };
        for colour in [false, true] {
            let text = render(&request, colour);
            let without_our_colours = [GREEN, RED, CYAN, RESET]
                .iter()
                .fold(text.clone(), |text, code| text.replace(code, ""));
            assert!(!without_our_colours.contains('\x1b'), "{text:?}");
            assert!(!without_our_colours.contains('\x07'), "{text:?}");
            assert!(!without_our_colours.contains('\u{202e}'), "{text:?}");
            assert!(
                text.contains("retry reason: sandbox \\x1b[2Jdenied\n"),
                "{text:?}"
            );
            assert!(
                text.contains("add /tmp/outside-\\x1b[31mred.txt\n"),
                "{text:?}"
            );
            assert!(
                text.contains("+line with \\x1b[2J clear and \\x1b]0;title\\x07 osc"),
                "{text:?}"
            );
            assert!(
                text.contains("update /tmp/old\\u{202e}txt.sh -> /tmp/new\\x1b[0m.sh\n"),
                "{text:?}"
            );
            assert!(text.contains("-\\x1b[1A\\x1b[2Kold"), "{text:?}");
            assert!(text.contains("+new\\r x"), "{text:?}");
        }
    }
}
