//! One key from the terminal for the patch prompt: `y` approve, `a` approve for the session,
//! `n` deny, `Esc` / `Ctrl-C` / end of input abort (the keys of `airlock exec`'s prompt).

use std::io::Write as _;

use airlock_protocol::ReviewDecision;

const ESC: u8 = 0x1b;
const CTRL_C: u8 = 0x03;
const CTRL_D: u8 = 0x04;

/// Reads keys until one maps to an offered decision (`n` and abort keys always do).
pub fn ask_key(err: &mut std::io::StderrLock<'_>, offered: &[ReviewDecision]) -> ReviewDecision {
    loop {
        let key = match crate::exec_cmd::prompt::read_key() {
            Ok(Some(key)) => key,
            Ok(None) | Err(_) => {
                let _ = writeln!(err, "\nairlock: no answer (end of input): aborted");
                return ReviewDecision::Abort;
            }
        };
        if let Some(decision) = decision_for_key(key, offered) {
            let _ = writeln!(err, "{}", describe(&decision));
            return decision;
        }
        let _ = write!(err, "\nairlock: key not offered; [y] [a] [n] [Esc]\n> ");
        let _ = err.flush();
    }
}

/// The decision of `key` when it is offered.
pub fn decision_for_key(key: u8, offered: &[ReviewDecision]) -> Option<ReviewDecision> {
    let find = |wanted: fn(&ReviewDecision) -> bool| offered.iter().find(|d| wanted(d)).cloned();
    match key.to_ascii_lowercase() {
        b'y' => find(|d| matches!(d, ReviewDecision::Approved)),
        b'a' => find(|d| matches!(d, ReviewDecision::ApprovedForSession)),
        b'n' => Some(ReviewDecision::denied()),
        ESC | CTRL_C | CTRL_D => Some(ReviewDecision::Abort),
        _ => None,
    }
}

fn describe(decision: &ReviewDecision) -> &'static str {
    match decision {
        ReviewDecision::Approved => "approved",
        ReviewDecision::ApprovedForSession => "approved for this session",
        ReviewDecision::Denied { .. } => "denied",
        ReviewDecision::Abort => "aborted",
        _ => "answered",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_patch_decisions() {
        let offered = airlock_approval::patch_decisions();
        assert_eq!(
            decision_for_key(b'y', &offered),
            Some(ReviewDecision::Approved)
        );
        assert_eq!(
            decision_for_key(b'A', &offered),
            Some(ReviewDecision::ApprovedForSession)
        );
        assert_eq!(
            decision_for_key(b'n', &offered),
            Some(ReviewDecision::denied())
        );
        assert_eq!(decision_for_key(ESC, &offered), Some(ReviewDecision::Abort));
        assert_eq!(decision_for_key(b'p', &offered), None);
    }
}
