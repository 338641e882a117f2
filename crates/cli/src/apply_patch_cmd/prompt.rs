//! The interactive patch prompt (spec 11 §Approval: "the user prompt shows the diff, paths,
//! and the decisions"): the changes on stderr, the diff coloured when stdout is a terminal,
//! then one key: `y` approve, `a` approve for the session (every file of this patch), `n`
//! deny, `Esc` / `Ctrl-C` abort.

use std::io::IsTerminal as _;
use std::io::Write as _;

use airlock_approval::ApplyPatchApprovalRequestEvent;
use airlock_approval::FileChange;
use airlock_approval::patch_decisions;
use airlock_protocol::ReviewDecision;

use super::keys;

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
        text.push_str(&format!("  retry reason: {reason}\n"));
    }
    for (path, change) in &request.changes {
        match change {
            FileChange::Add { content } => {
                text.push_str(&format!("  add {}\n", path.display()));
                for line in content.lines() {
                    text.push_str(&paint(&format!("+{line}"), colour));
                }
            }
            FileChange::Delete { .. } => text.push_str(&format!("  delete {}\n", path.display())),
            FileChange::Update {
                unified_diff,
                move_path,
            } => {
                match move_path {
                    Some(dest) => text.push_str(&format!(
                        "  update {} -> {}\n",
                        path.display(),
                        dest.display()
                    )),
                    None => text.push_str(&format!("  update {}\n", path.display())),
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

fn paint(line: &str, colour: bool) -> String {
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
}
