//! The interactive approval prompt of `airlock exec` (spec 10 §CLI "Interactive approval"):
//! shows the command, cwd, justification, reason or retry reason, and the proposed prefix
//! rule with the file it would be saved to, on stderr, then reads one key from the terminal
//! on stdin: `y` approve, `a` approve for the session, `p` approve and save the proposed
//! prefix rule, `n` deny with an optional reason, `Esc` / `Ctrl-C` abort.
//!
//! Everything shown comes from the agent or its command and goes through
//! [`crate::terminal_text::safe`] (issue 17 item 7): no control or invisible character
//! reaches the terminal, and long padding is collapsed.

use airlock_protocol::NetworkPolicyRuleAction;
use std::io::BufRead as _;
use std::io::Read as _;
use std::io::Write as _;

use std::path::PathBuf;

use airlock_approval::ExecApprovalRequestEvent;
use airlock_protocol::ReviewDecision;
use rustix::termios::LocalModes;
use rustix::termios::OptionalActions;
use rustix::termios::SpecialCodeIndex;

use rustix::termios::Termios;

/// Byte of the Escape key.
const ESC: u8 = 0x1b;
/// Byte of Ctrl-C when the terminal does not turn it into a signal.
const CTRL_C: u8 = 0x03;
/// Byte of Ctrl-D (end of input).
const CTRL_D: u8 = 0x04;

/// The suffix the orchestrator gives the approval id of a retry.
const RETRY_SUFFIX: &str = ":retry";

/// What the prompt shows besides the request: facts the front end knows.
#[derive(Debug, Clone, Default)]
pub struct PromptContext {
    /// `--justification`, shown as given (escaped).
    pub justification: Option<String>,
    /// Where `p` saves the proposed prefix rule (`$AIRLOCK_HOME/rules/default.rules`).
    pub rules_file: Option<PathBuf>,
    /// `[exec_policy] allow_rules_bypass_sandbox`: whether a saved allow rule also takes
    /// matching commands out of the sandbox (the default), said next to the proposed rule.
    pub allow_rules_bypass_sandbox: bool,
}

/// Shows `request` and returns the person's decision. Only offered decisions are returned,
/// plus `denied` and `abort`, which are always acceptable (they only tighten). A terminal
/// that cannot be read (end of input, an I/O error) aborts.
pub fn ask(request: &ExecApprovalRequestEvent, context: &PromptContext) -> ReviewDecision {
    let offered = request.decisions();
    let mut err = std::io::stderr().lock();
    // Output errors are not decisions: the key read below still decides.
    let _ = err.write_all(render(request, &offered, context).as_bytes());
    let _ = err.flush();
    loop {
        let key = match read_key() {
            Ok(Some(key)) => key,
            Ok(None) | Err(_) => {
                let _ = writeln!(err, "\nairlock: no answer (end of input): aborted");
                return ReviewDecision::Abort;
            }
        };
        if let Some(decision) = decision_for_key(key, &offered) {
            let _ = writeln!(err, "{}", describe(&decision));
            if matches!(decision, ReviewDecision::Denied { .. }) {
                return deny_with_reason(&mut err);
            }
            return decision;
        }
        let _ = write!(
            err,
            "\nairlock: key not offered; {}\n> ",
            key_help(&offered)
        );
        let _ = err.flush();
    }
}

/// The action of a `network_policy_amendment` decision.
fn network_amendment(decision: &ReviewDecision) -> Option<NetworkPolicyRuleAction> {
    match decision {
        ReviewDecision::NetworkPolicyAmendment {
            network_policy_amendment,
        } => Some(network_policy_amendment.action),
        _ => None,
    }
}

/// The decision of `key` when it is offered.
pub fn decision_for_key(key: u8, offered: &[ReviewDecision]) -> Option<ReviewDecision> {
    let find = |wanted: fn(&ReviewDecision) -> bool| offered.iter().find(|d| wanted(d)).cloned();
    match key.to_ascii_lowercase() {
        b'y' => find(|d| matches!(d, ReviewDecision::Approved)),
        b'a' => find(|d| matches!(d, ReviewDecision::ApprovedForSession)),
        b'p' => find(|d| matches!(d, ReviewDecision::ApprovedExecpolicyAmendment { .. })),
        b'w' => find(|d| network_amendment(d) == Some(NetworkPolicyRuleAction::Allow)),
        b'x' => find(|d| network_amendment(d) == Some(NetworkPolicyRuleAction::Deny)),
        b'n' => Some(ReviewDecision::denied()),
        ESC | CTRL_C | CTRL_D => Some(ReviewDecision::Abort),
        _ => None,
    }
}

/// The prompt text: the facts, then the keys (spec 10 §CLI "show the command, cwd, reason,
/// retry reason, proposed amendment and the available decisions"). Every value is escaped.
pub fn render(
    request: &ExecApprovalRequestEvent,
    offered: &[ReviewDecision],
    context: &PromptContext,
) -> String {
    use crate::terminal_text::safe;
    let command = shlex::try_join(request.command.iter().map(String::as_str))
        .unwrap_or_else(|_| request.command.join(" "));
    let mut text = String::from("\nairlock: approval needed\n");
    text.push_str(&format!("  command: {}\n", safe(&command)));
    text.push_str(&format!(
        "  cwd:     {}\n",
        safe(&request.cwd.display().to_string())
    ));
    if let Some(justification) = &context.justification {
        text.push_str(&format!("  justification: {}\n", safe(justification)));
    }
    if let Some(reason) = &request.reason {
        let retry = request.effective_approval_id().ends_with(RETRY_SUFFIX);
        // Without a retry or policy reason the request carries the justification again.
        if retry || context.justification.as_deref() != Some(reason.as_str()) {
            let label = if retry { "retry reason" } else { "reason" };
            text.push_str(&format!("  {label}: {}\n", safe(reason)));
        }
    }
    if let Some(network) = &request.network_approval_context {
        text.push_str(&format!(
            "  network: allow {}? ({:?}; [w]/[x] save a network_rule to {})\n",
            safe(&network.host),
            network.protocol,
            context.rules_file.as_ref().map_or_else(
                || "nowhere (no rules file)".to_owned(),
                |file| safe(&file.display().to_string())
            )
        ));
    }
    if let Some(amendment) = &request.proposed_execpolicy_amendment {
        let pattern: Vec<String> = amendment
            .command
            .iter()
            .map(|word| format!("{word:?}"))
            .collect();
        text.push_str(&format!(
            "  proposed rule: {}\n",
            safe(&format!(
                "prefix_rule(pattern=[{}], decision=\"allow\")",
                pattern.join(", ")
            ))
        ));
        let place = context.rules_file.as_ref().map_or_else(
            || "not saved (no rules file)".to_owned(),
            |file| format!("{} if you press p", crate::common::amendment_scope(file)),
        );
        text.push_str(&format!("                 {}\n", safe(&place)));
        text.push_str(if context.allow_rules_bypass_sandbox {
            "                 effect: commands starting so then run without asking and outside the \
             sandbox\n"
        } else {
            "                 effect: commands starting so then run without asking, still in the \
             sandbox\n"
        });
    }
    text.push_str(&format!("  {}\n> ", key_help(offered)));
    text
}

fn key_help(offered: &[ReviewDecision]) -> String {
    let mut keys = Vec::new();
    for decision in offered {
        match decision {
            ReviewDecision::Approved => keys.push("[y] approve"),
            ReviewDecision::ApprovedForSession => keys.push("[a] approve for this session"),
            ReviewDecision::ApprovedExecpolicyAmendment { .. } => {
                keys.push("[p] approve and save the prefix rule");
            }
            other => match network_amendment(other) {
                Some(NetworkPolicyRuleAction::Allow) => keys.push("[w] always allow this host"),
                Some(NetworkPolicyRuleAction::Deny) => keys.push("[x] never: block this host"),
                None => {}
            },
        }
    }
    keys.push("[n] deny");
    keys.push("[Esc] abort");
    keys.join("  ")
}

fn describe(decision: &ReviewDecision) -> &'static str {
    match decision {
        ReviewDecision::Approved => "approved",
        ReviewDecision::ApprovedForSession => "approved for this session",
        ReviewDecision::ApprovedExecpolicyAmendment { .. } => "approved; saving the prefix rule",
        ReviewDecision::Denied { .. } => "denied",
        ReviewDecision::Abort => "aborted",
        other => match network_amendment(other) {
            Some(NetworkPolicyRuleAction::Allow) => "allowed; saving the network rule",
            Some(NetworkPolicyRuleAction::Deny) => "blocked; saving the network rule",
            None => "answered",
        },
    }
}

/// After `n`: one line of optional reason, read with the terminal in its normal mode.
fn deny_with_reason(err: &mut std::io::StderrLock<'_>) -> ReviewDecision {
    let _ = write!(err, "reason (optional, Enter to skip): ");
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return ReviewDecision::denied();
    }
    let reason = line.trim();
    if reason.is_empty() {
        ReviewDecision::denied()
    } else {
        ReviewDecision::denied_with_reason(format!("rejected by user: {reason}"))
    }
}

/// Reads one byte from stdin with the terminal in non-canonical mode without echo or
/// signals (so `Ctrl-C` arrives as a byte); the previous mode is restored afterwards.
/// `Ok(None)` at end of input. Shared by every terminal prompt (`exec`, `apply-patch`).
pub(crate) fn read_key() -> std::io::Result<Option<u8>> {
    let stdin = std::io::stdin();
    let _raw = RawMode::enter(&stdin)?;
    let mut byte = [0_u8; 1];
    let read = stdin.lock().read(&mut byte)?;
    Ok((read == 1).then_some(byte[0]))
}

/// Restores the saved terminal mode on drop.
struct RawMode<'a> {
    stdin: &'a std::io::Stdin,
    saved: Termios,
}

impl<'a> RawMode<'a> {
    fn enter(stdin: &'a std::io::Stdin) -> std::io::Result<Self> {
        let saved = rustix::termios::tcgetattr(stdin)?;
        let mut raw = saved.clone();
        raw.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        rustix::termios::tcsetattr(stdin, OptionalActions::Now, &raw)?;
        Ok(Self { stdin, saved })
    }
}

impl Drop for RawMode<'_> {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(self.stdin, OptionalActions::Now, &self.saved);
    }
}

#[cfg(test)]
mod tests {
    use airlock_protocol::ExecPolicyAmendment;

    use super::*;

    fn offered(with_amendment: bool) -> Vec<ReviewDecision> {
        airlock_approval::available_decisions(
            None,
            with_amendment
                .then(|| ExecPolicyAmendment {
                    command: vec!["touch".to_owned()],
                })
                .as_ref(),
            None,
        )
    }

    #[test]
    fn keys_map_to_offered_decisions() {
        let with = offered(true);
        assert_eq!(
            decision_for_key(b'y', &with),
            Some(ReviewDecision::Approved)
        );
        assert_eq!(
            decision_for_key(b'A', &with),
            Some(ReviewDecision::ApprovedForSession)
        );
        assert!(matches!(
            decision_for_key(b'p', &with),
            Some(ReviewDecision::ApprovedExecpolicyAmendment { .. })
        ));
        assert_eq!(decision_for_key(ESC, &with), Some(ReviewDecision::Abort));
        assert_eq!(decision_for_key(CTRL_C, &with), Some(ReviewDecision::Abort));
        assert_eq!(decision_for_key(b'x', &with), None);
        // Without a proposal, `p` is not offered.
        assert_eq!(decision_for_key(b'p', &offered(false)), None);
    }
}
