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
