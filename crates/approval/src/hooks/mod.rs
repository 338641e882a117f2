//! Permission-request hooks: configured programs asked first, before any reviewer (spec 06 step
//! 1, spec README invariant 6; reference `orchestrator-and-approvals.md` §8).

mod config;
mod output;

use std::path::PathBuf;

use serde::Serialize;
use tokio::task::JoinSet;

pub use config::DEFAULT_HOOK_TIMEOUT;
pub use config::HookMatcher;
pub use config::PermissionRequestHook;
pub(crate) use config::hooks_from_json_file;
pub(crate) use config::hooks_from_toml;
pub use output::DEFAULT_HOOK_DENY_MESSAGE;
pub use output::DEFAULT_PRE_TOOL_USE_DENY_MESSAGE;
pub use output::HookRunResult;
pub use output::HookVerdict;
pub use output::parse_hook_output;
pub use output::parse_pre_tool_use_output;

use crate::hook_payload::PermissionRequestPayload;
use crate::process::ProcessOutcome;
use crate::process::ProcessRequest;
use crate::process::run_process;

/// The JSON a hook reads on stdin (reference §8).
///
/// `{"session_id","turn_id","transcript_path":null,"cwd","hook_event_name":"PermissionRequest",
/// "model","permission_mode":"default"|"bypassPermissions","tool_name","tool_input",
/// "approval_context"?:{"sandbox_permissions","additional_permissions"?,"justification"?}}`.
#[derive(Debug, Clone, Serialize)]
pub struct HookInput {
    /// The session.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// Always `null`: Airlock keeps no transcript.
    pub transcript_path: Option<String>,
    /// The working directory of the action (also the hook's cwd).
    pub cwd: PathBuf,
    /// `PermissionRequest`, or `PreToolUse` for the hooks run before every call.
    pub hook_event_name: &'static str,
    /// The model name the turn runs with (empty when unknown).
    pub model: String,
    /// `bypassPermissions` under approval policy `never`, else `default`.
    pub permission_mode: &'static str,
    /// [`PermissionRequestPayload::tool_name`].
    pub tool_name: String,
    /// [`PermissionRequestPayload::tool_input`].
    pub tool_input: serde_json::Value,
    /// The sandbox facts of a command request; absent for patches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_context: Option<serde_json::Value>,
}

impl HookInput {
    /// The names the hook matchers are tried against.
    fn payload(&self) -> PermissionRequestPayload {
        PermissionRequestPayload {
            tool_name: self.tool_name.clone(),
            tool_input: self.tool_input.clone(),
        }
    }
}

/// The aggregate answer of all matching hooks (spec 06 step 1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookReport {
    /// Any deny wins (the first deny in configuration order, with its message); otherwise allow
    /// if any hook allowed; otherwise `None` (continue with the reviewer).
    pub verdict: Option<HookVerdict>,
    /// How many hooks matched and ran.
    pub ran: usize,
    /// Warnings for the user: failures, timeouts, `systemMessage`s.
    pub warnings: Vec<String>,
}

/// Runs every hook whose matcher accepts the tool, concurrently, and aggregates their answers in
/// configuration order. Failures and timeouts are warnings and count as "no decision".
/// Dropping the returned future kills every hook still running.
pub async fn run_permission_request_hooks(
    hooks: &[PermissionRequestHook],
    input: &HookInput,
) -> HookReport {
    run_hooks(hooks, input, parse_hook_output).await
}

/// Runs every `PreToolUse` hook whose matcher accepts the tool (issue 18 item 7), as
/// [`run_permission_request_hooks`] does, reading each run with
/// [`parse_pre_tool_use_output`]: the report's verdict is a deny or nothing, never an allow.
pub async fn run_pre_tool_use_hooks(
    hooks: &[PermissionRequestHook],
    input: &HookInput,
) -> HookReport {
    let mut report = run_hooks(hooks, input, parse_pre_tool_use_output).await;
    if report.verdict == Some(HookVerdict::Allow) {
        report.verdict = None;
    }
    report
}

async fn run_hooks(
    hooks: &[PermissionRequestHook],
    input: &HookInput,
    parse: fn(Option<i32>, &str, &str) -> HookRunResult,
) -> HookReport {
    let payload = input.payload();
    let names = payload.matcher_names();
    let stdin = match serde_json::to_vec(input) {
        Ok(bytes) => bytes,
        Err(error) => {
            return HookReport {
                verdict: None,
                ran: 0,
                warnings: vec![format!(
                    "{} hooks skipped: cannot encode the request: {error}",
                    input.hook_event_name
                )],
            };
        }
    };
    let mut tasks = JoinSet::new();
    let mut ran = 0;
    for (index, hook) in hooks.iter().enumerate() {
        if !hook.matcher.matches(&names) {
            continue;
        }
        ran += 1;
        let request = shell_request(
            &hook.command,
            stdin.clone(),
            input.cwd.clone(),
            hook.timeout,
        );
        let hook = hook.clone();
        let event = input.hook_event_name;
        tasks.spawn(async move { (index, run_one(&hook, request, event, parse).await) });
    }
    let mut results = Vec::with_capacity(ran);
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(result) => results.push(result),
            Err(error) => results.push((
                usize::MAX,
                HookRunResult::Failed {
                    reason: format!("hook task ended abnormally: {error}"),
                },
            )),
        }
    }
    results.sort_by_key(|(index, _)| *index);
    aggregate(ran, results.into_iter().map(|(_, result)| result))
}

/// Any deny wins; else allow; else nothing (reference §8 "Aggregation").
fn aggregate(ran: usize, results: impl Iterator<Item = HookRunResult>) -> HookReport {
    let mut report = HookReport {
        verdict: None,
        ran,
        warnings: Vec::new(),
    };
    let mut allowed = false;
    let mut denied: Option<String> = None;
    for result in results {
        match result {
            HookRunResult::Decided { verdict, warnings } => {
                report.warnings.extend(warnings);
                match verdict {
                    HookVerdict::Allow => allowed = true,
                    HookVerdict::Deny { message } => {
                        denied.get_or_insert(message);
                    }
                }
            }
            HookRunResult::NoDecision { warnings } => report.warnings.extend(warnings),
            HookRunResult::Failed { reason } => report.warnings.push(reason),
        }
    }
    report.verdict = match denied {
        Some(message) => Some(HookVerdict::Deny { message }),
        None if allowed => Some(HookVerdict::Allow),
        None => None,
    };
    report
}

/// `/bin/sh -c <command>` (Windows: `%COMSPEC% /C <command>`). Airlock decision: not a login
/// shell, so profile files neither slow the hook down nor print into its JSON output.
fn shell_request(
    command: &str,
    stdin: Vec<u8>,
    cwd: PathBuf,
    timeout: std::time::Duration,
) -> ProcessRequest {
    #[cfg(windows)]
    let (program, flag) = (
        std::env::var_os("COMSPEC").map_or_else(|| PathBuf::from("cmd.exe"), PathBuf::from),
        "/C",
    );
    #[cfg(not(windows))]
    let (program, flag) = (PathBuf::from("/bin/sh"), "-c");
    ProcessRequest {
        program,
        args: vec![flag.to_owned(), command.to_owned()],
        stdin,
        cwd: Some(cwd),
        timeout,
    }
}

async fn run_one(
    hook: &PermissionRequestHook,
    request: ProcessRequest,
    event: &str,
    parse: fn(Option<i32>, &str, &str) -> HookRunResult,
) -> HookRunResult {
    let label = format!("{event} hook `{}`", hook.command);
    match run_process(request).await {
        ProcessOutcome::Exited {
            code,
            stdout,
            stderr,
        } => match parse(code, &stdout, &stderr) {
            HookRunResult::Failed { reason } => HookRunResult::Failed {
                reason: format!("{label} failed: {reason}; no decision"),
            },
            other => other,
        },
        ProcessOutcome::TimedOut => HookRunResult::Failed {
            reason: format!(
                "{label} timed out after {} s; no decision",
                hook.timeout.as_secs()
            ),
        },
        ProcessOutcome::SpawnFailed(reason) => HookRunResult::Failed {
            reason: format!("{label} failed: {reason}; no decision"),
        },
    }
}
