//! Hints after a failed call that point at the way forward (issue 17 item 8), printed as
//! `airlock: hint: ...`: a command that failed on name resolution or a connection while the
//! profile has no network, and a `git` command that the sandbox stopped from writing the
//! read-only `.git`.
//!
//! The hints read the captured output of the last attempt; they only add words, never
//! change a decision.

use airlock_core::AuditRecord;
use airlock_core::ToolError;
use airlock_protocol::AskForApproval;
use airlock_sandbox::ExecOutput;

/// Output fragments of programs that could not reach the network (matched
/// case-insensitively).
const NETWORK_FAILURES: [&str; 10] = [
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "network is unreachable",
    "failed to connect",
    "connection refused",
    "could not resolve",
    "no address associated with hostname",
    "address family not supported",
    "getaddrinfo",
];

/// The hints for one finished call.
pub(super) fn hints(
    record: &AuditRecord,
    result: &Result<ExecOutput, ToolError>,
    network_enabled: bool,
    managed_network: bool,
    approval_policy: AskForApproval,
) -> Vec<String> {
    let (output, sandbox_denied) = match result {
        Ok(output) => (output, false),
        Err(ToolError::SandboxDenied { output, .. }) => (output, true),
        Err(_) => return Vec::new(),
    };
    if output.exit_code == 0 {
        return Vec::new();
    }
    let sandboxed = record
        .trace
        .attempts
        .last()
        .is_some_and(|attempt| attempt.sandbox != airlock_sandbox::SandboxType::None);
    let text = format!("{}\n{}", output.stdout, output.stderr).to_lowercase();
    let mut hints = Vec::new();
    if sandboxed && !network_enabled && NETWORK_FAILURES.iter().any(|f| text.contains(f)) {
        hints.push(
            "the command seems to have failed reaching the network, and the sandbox has no \
             network under this profile. To allow it: use a profile with network access \
             (`[permissions.<id>] extends = \":workspace\"` with `[permissions.<id>.network] \
             enabled = true` in $AIRLOCK_HOME/config.toml, then -P <id>), or ask to run this \
             command outside the sandbox with --sandbox-permissions require_escalated \
             --justification '...' (a reviewer must agree)"
                .to_owned(),
        );
    }
    if sandboxed && managed_network && NETWORK_FAILURES.iter().any(|f| text.contains(f)) {
        hints.push(
            "the command seems to have failed reaching the network; under this profile the \
             sandbox reaches the network only through Airlock's proxy (HTTP_PROXY, HTTPS_PROXY \
             and ALL_PROXY are set), and a host the proxy refused is reported as \"blocked by \
             the sandbox's network policy\". To allow a host: add \"<host>\" = \"allow\" (or \
             \"<host>:<port>\") under [permissions.<id>.network.domains] in \
             $AIRLOCK_HOME/config.toml, or network_rule(host=\"<host>\", protocol=\"https\", \
             decision=\"allow\") in $AIRLOCK_HOME/rules/default.rules. A program that ignores \
             the proxy variables cannot connect at all"
                .to_owned(),
        );
    }
    let is_git = record
        .command
        .first()
        .is_some_and(|program| program == "git" || program.ends_with("/git"));
    if sandboxed && sandbox_denied && is_git && text.contains(".git") {
        let policy = match approval_policy {
            AskForApproval::OnRequest => "on-request does not retry a sandbox denial",
            _ => "this approval policy did not retry it",
        };
        let pattern = git_rule_pattern(&record.command);
        hints.push(format!(
            "`.git` is read-only inside the sandbox (protected metadata), and {policy}. Ways \
             forward: rerun with --sandbox-permissions require_escalated --justification '...' \
             (a reviewer must agree to run it outside the sandbox); or allow it by a rule, \
             e.g. prefix_rule(pattern={pattern}, decision=\"allow\") in \
             $AIRLOCK_HOME/rules/default.rules; or run git yourself outside Airlock"
        ));
    }
    hints
}

/// The rule pattern for the git command that failed, as a rules file spells it:
/// `["git", SUBCOMMAND]` with the first word after `git` that is not an option (so the
/// hint names `git init` for `git init`, never another command), or `["git"]`.
fn git_rule_pattern(command: &[String]) -> String {
    // git's global options that take the next word as their value.
    const WITH_VALUE: [&str; 5] = ["-C", "-c", "--git-dir", "--work-tree", "--namespace"];
    let mut words = vec!["git".to_owned()];
    let mut rest = command.iter().skip(1);
    while let Some(word) = rest.next() {
        if WITH_VALUE.contains(&word.as_str()) {
            rest.next();
        } else if !word.starts_with('-') {
            words.push(word.clone());
            break;
        }
    }
    serde_json::to_string(&words)
        .unwrap_or_else(|_| "[\"git\"]".to_owned())
        .replace("\",\"", "\", \"")
}

#[cfg(test)]
mod tests {
    use super::git_rule_pattern;

    #[test]
    fn names_the_failed_subcommand() {
        let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            git_rule_pattern(&argv(&["git", "init"])),
            r#"["git", "init"]"#
        );
        assert_eq!(
            git_rule_pattern(&argv(&["/usr/bin/git", "--no-pager", "commit", "-m", "x"])),
            r#"["git", "commit"]"#
        );
        assert_eq!(
            git_rule_pattern(&argv(&["git", "-C", "sub", "init"])),
            r#"["git", "init"]"#
        );
        assert_eq!(git_rule_pattern(&argv(&["git"])), r#"["git"]"#);
    }
}
