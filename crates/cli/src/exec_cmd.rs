//! `airlock exec`: the main job (spec 10 §CLI, issue 6 item 5). One command through the three
//! layers: exec policy → approval (hooks, automatic reviewer or the person at the terminal) →
//! confined run → on a sandbox denial, re-approval and retry where the spec allows it. Every
//! call is appended to `$AIRLOCK_HOME/log/audit.jsonl` unless `[audit] enabled = false`.
//!
//! Exit status: the command's own (also when the sandbox denied it and it was not retried);
//! **127** when the program is not found and **126** when it is not executable (checked
//! before anything runs, a script's `#!` interpreter included, [`crate::program`]; such a
//! call still gets a call id and an audit line); **125** with a one-line reason on stderr when
//! Airlock refuses (forbidden, denied, timed out, aborted, unusable configuration or
//! command, cannot confine); 2 for usage errors (an unknown option before `--` included).
//! With `--json`, one result object on stdout says which of these happened
//! ([`result_json`]); the command's output is then captured into it instead of streamed.
//!
//! SIGTERM, SIGINT or SIGHUP to `airlock exec` stop the command (relayed into the sandbox)
//! and then `airlock exec` itself by the same signal; when it dies in any other way the
//! command is killed too (see `airlock_core::process::signals`).
//!
//! Without a terminal on stdin and stderr, and without a hook or automatic reviewer that
//! decides, a prompt is denied: "approval required but no reviewer is available".

mod front_end;
pub(crate) use front_end::no_terminal_explanation;
mod hints;
pub(crate) mod prompt;
mod report;
mod result_json;
mod warnings;

use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_core::OutputMode;
use airlock_core::ShellCall;
use airlock_core::ToolError;
use airlock_permissions::DANGER_FULL_ACCESS;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::SandboxPermissions;
use clap::Args;
use clap::ValueEnum;

/// Exit status when Airlock refuses or cannot run the command (spec 10 §CLI).
pub const REFUSED: u8 = 125;

/// The warning printed for `--dangerously-bypass-approvals-and-sandbox` (spec 10 §CLI:
/// "warns loudly").
const YOLO_WARNING: &str = "\
airlock: WARNING: --dangerously-bypass-approvals-and-sandbox is on: approval policy `never` and \
profile `:danger-full-access`. Commands run WITHOUT a sandbox and nobody is asked. Use this only \
on a machine that is isolated some other way (a throwaway VM or container).";

/// Arguments of `airlock exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Approval policy (default: `approval_policy` from the config, else `on-request`). A
    /// granular policy can be given with `-c 'approval_policy={granular={...}}'`.
    #[arg(short = 'a', long = "ask-for-approval", value_name = "POLICY")]
    approval: Option<PolicyArg>,

    /// Permission profile id (`:read-only`, `:workspace`, `:danger-full-access`,
    /// `:external-sandbox`, or a `[permissions.<id>]` table); default: the configured one.
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    profile: Option<String>,

    /// Working directory (the first workspace root); default: the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,

    /// A `.rules` file (repeatable); replaces `$AIRLOCK_HOME/rules/*.rules`. Accepted prefix
    /// rules are still saved to `$AIRLOCK_HOME/rules/default.rules`.
    #[arg(short = 'r', long = "rules", value_name = "PATH")]
    rules: Vec<PathBuf>,

    /// Who answers approvals (default: `approvals_reviewer` from the config, else `user`).
    #[arg(long, value_name = "R")]
    reviewer: Option<ReviewerArg>,

    /// Send every command to the automatic reviewer, even one that needs no approval
    /// (spec 06 "strict auto review"); a retry without the sandbox is reviewed again.
    #[arg(long)]
    strict_auto_review: bool,

    /// What the call asks of the sandbox: `use_default`, or `require_escalated` (run without
    /// the sandbox; needs approval).
    #[arg(
        long = "sandbox-permissions",
        value_name = "X",
        default_value = "use_default"
    )]
    sandbox_permissions: SandboxArg,

    /// Why the command should run, shown to reviewers.
    #[arg(long, value_name = "TEXT")]
    justification: Option<String>,

    /// Config override `dotted.key=value` (value parsed as TOML, else a string); repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// `never` + `:danger-full-access`: no approval, no sandbox. Only for machines isolated
    /// some other way.
    #[arg(
        long = "dangerously-bypass-approvals-and-sandbox",
        visible_alias = "yolo",
        conflicts_with_all = ["approval", "profile", "sandbox_permissions"]
    )]
    yolo: bool,

    /// After the command, print what each layer decided (policy, approval, attempts).
    #[arg(short = 'v', long)]
    verbose: bool,

    /// Print one JSON result object on stdout (decision trace, attempts, final status); the
    /// command's output is captured into it instead of streamed. `status`: `ran`,
    /// `sandbox_denied`, `rejected` (refused: forbidden, denied, aborted, bad config; exit
    /// 125), `error` (could not be confined; 125), `command_not_found`, `not_executable`,
    /// and for an `apply_patch` call `applied`, `patch_failed` or `rejected`; a refusal is
    /// `rejected` in the audit record's outcome (`record.outcome.status`) too.
    #[arg(long)]
    json: bool,

    /// The command, after `--`.
    #[arg(value_name = "COMMAND", required = true, num_args = 1.., trailing_var_arg = true)]
    command: Vec<OsString>,
}

/// `-a` values (spec 10 common options); `on-failure` is the legacy alias of `on-request`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum PolicyArg {
    /// Ask for everything except known-safe read-only commands.
    Untrusted,
    /// The command decides: it runs in the sandbox, and asks to leave it.
    OnRequest,
    /// Legacy alias of `on-request` (same behaviour).
    OnFailure,
    /// Never ask; what needs approval is refused.
    Never,
}

impl PolicyArg {
    const fn policy(self) -> AskForApproval {
        match self {
            Self::Untrusted => AskForApproval::UnlessTrusted,
            Self::OnRequest | Self::OnFailure => AskForApproval::OnRequest,
            Self::Never => AskForApproval::Never,
        }
    }
}

/// `--sandbox-permissions` values this command accepts (spec 10).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SandboxArg {
    #[value(name = "use_default")]
    UseDefault,
    #[value(name = "require_escalated")]
    RequireEscalated,
}

/// `--reviewer` values (spec 10).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ReviewerArg {
    User,
    #[value(name = "auto_review")]
    AutoReview,
}

/// Why `airlock exec` did not run the command: printed as one line, exit 125.
#[derive(Debug)]
struct Refusal(String);

impl<E: std::fmt::Display> From<E> for Refusal {
    fn from(error: E) -> Self {
        Self(error.to_string())
    }
}

/// How `airlock exec` ended: the exit status, a status word for `--json`, and what is known
/// about the call.
#[derive(Debug)]
struct Finished {
    code: u8,
    status: &'static str,
    /// The reason printed as `airlock: <message>` (refusals, unrunnable programs).
    message: Option<String>,
    /// Print `message` with its line breaks (a TOML error's snippet) instead of on one line.
    multiline: bool,
    /// `message` was already printed on stderr (the patch path prints its own).
    printed: bool,
    /// The call id (absent when the call never reached the orchestrator).
    call_id: Option<String>,
    /// The audit record of the call (a command's or a patch's), as JSON.
    record: Option<serde_json::Value>,
    output: Option<airlock_sandbox::ExecOutput>,
}

impl Finished {
    /// An `apply_patch` call routed to the patch path, which printed its own messages
    /// on stderr (exit 0 applied, 1 patch failed, 125 rejected); the summary of an applied
    /// patch is the result's `stdout`.
    fn patched(patch: crate::apply_patch_cmd::PatchFinished) -> Self {
        let output = patch.stdout.map(|stdout| airlock_sandbox::ExecOutput {
            exit_code: 0,
            stdout,
            ..airlock_sandbox::ExecOutput::default()
        });
        Self {
            code: patch.code,
            status: patch.status,
            message: patch.message,
            multiline: false,
            printed: true,
            call_id: patch.call_id,
            record: patch.record,
            output,
        }
    }

    fn refused(reason: String) -> Self {
        Self {
            code: REFUSED,
            status: "rejected",
            message: Some(reason),
            multiline: true,
            printed: false,
            call_id: None,
            record: None,
            output: None,
        }
    }
}

/// Prints the approval layer's warnings on stderr (also for `airlock serve`).
pub(crate) fn install_warning_printer() {
    warnings::install();
}

/// Runs `airlock exec`.
pub fn run(args: ExecArgs) -> ExitCode {
    let json = args.json;
    let finished = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime
            .block_on(run_exec(args))
            .unwrap_or_else(|Refusal(reason)| Finished::refused(reason)),
        Err(error) => Finished::refused(format!("cannot start the async runtime: {error}")),
    };
    if let Some(message) = finished.message.as_ref().filter(|_| !finished.printed) {
        if finished.multiline {
            for (n, line) in message.lines().enumerate() {
                let lead = if n == 0 { "airlock: " } else { "" };
                eprintln!("{lead}{}", crate::terminal_text::escape(line));
            }
        } else {
            let one_line: Vec<&str> = message.split_whitespace().collect();
            eprintln!(
                "airlock: {}",
                crate::terminal_text::safe(&one_line.join(" "))
            );
        }
    }
    if json {
        println!("{}", result_json::render(&finished));
    }
    ExitCode::from(finished.code)
}

async fn run_exec(args: ExecArgs) -> Result<Finished, Refusal> {
    warnings::install();
    let command = airlock_shell::argv_from_os(args.command.iter().cloned())
        .map_err(|error| Refusal(format!("invalid command: {error}")))?;
    // An `apply_patch` call goes through the patch path, never runs as a command (spec 11).
    match airlock_patch::maybe_parse_apply_patch(&command) {
        airlock_patch::ApplyPatchInvocation::Patch { patch, workdir } => {
            let patched =
                crate::apply_patch_cmd::apply(patch_settings(&args), patch, workdir).await;
            return Ok(Finished::patched(patched));
        }
        airlock_patch::ApplyPatchInvocation::Implicit => {
            return Err(Refusal(
                airlock_patch::IMPLICIT_INVOCATION_MESSAGE.to_owned(),
            ));
        }
        airlock_patch::ApplyPatchInvocation::NotApplyPatch => {}
    }
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    if args.yolo {
        eprintln!("{YOLO_WARNING}");
    }
    let parts = crate::session_setup::prepare_session(crate::session_setup::SessionRequest {
        session_id: session_id(),
        cwd: cwd.clone(),
        overrides: &args.overrides,
        approval: if args.yolo {
            Some(AskForApproval::Never)
        } else {
            args.approval.map(PolicyArg::policy)
        },
        reviewer: args.reviewer.map(|reviewer| match reviewer {
            ReviewerArg::User => ApprovalsReviewer::User,
            ReviewerArg::AutoReview => ApprovalsReviewer::AutoReview,
        }),
        profile: if args.yolo {
            Some(DANGER_FULL_ACCESS)
        } else {
            args.profile.as_deref()
        },
        rules: args.rules.clone(),
        strict_auto_review: args.strict_auto_review,
        output: if args.json {
            OutputMode::Capture
        } else {
            OutputMode::Tee
        },
    })?;
    let crate::session_setup::SessionParts {
        mut options,
        approval_config,
        exec_policy,
        selected,
        network_enabled,
        remote,
    } = parts;
    // The managed network (spec 12): the session's proxy, asking about unlisted hosts
    // through the session's reviewers once the session exists.
    let managed_network = options.sandbox.managed_network.clone();
    let managed_network_active = managed_network.is_some();
    let session_slot = crate::network_approval::SessionSlot::default();
    let proxy = match managed_network.clone() {
        Some(network) => Some(
            crate::managed_network::RunningProxy::start_with(
                airlock_network_proxy::NetworkPolicy::new(network).with_decider(
                    std::sync::Arc::new(crate::network_approval::SessionDecider {
                        session: std::sync::Arc::clone(&session_slot),
                        cwd: cwd.clone(),
                        profile: selected.materialized(),
                    }),
                ),
            )
            .map_err(|error| Refusal(format!("{error:#}")))?,
        ),
        None => None,
    };
    options.sandbox.network_proxy_dir = proxy.as_ref().map(|proxy| proxy.dir().to_path_buf());
    let approval_policy = options.approval_policy;
    let reviewer = options.approvals_reviewer;
    // Checked before anything runs; the call is still recorded below (id, audit line). The
    // program lives on the executor's host for a remote environment: not checked here.
    let unrunnable = command
        .first()
        .filter(|_| remote.is_none())
        .and_then(|program| {
            crate::program::check_program(
                program.as_ref(),
                options.env.get("PATH").map(std::ffi::OsStr::new),
                &cwd,
            )
            .err()
        });
    // A person can answer only on a terminal; otherwise the session gets no event channel and
    // every prompt routed to the user is denied (spec 10: fail closed).
    let interactive = reviewer == ApprovalsReviewer::User
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
    let session = crate::session_setup::SessionParts::session(
        options,
        approval_config,
        exec_policy,
        remote,
        interactive.then_some(events_tx),
    );
    if let Ok(mut slot) = session_slot.lock() {
        *slot = Some(std::sync::Arc::downgrade(session.approvals()));
    }
    for warning in selected.warnings.iter().chain(session.warnings()) {
        eprintln!(
            "airlock: warning: {}",
            crate::terminal_text::safe(&warning.to_string())
        );
    }
    if let Some(warning) =
        crate::common::executable_inside_writable_root(&selected.materialized(), &cwd)
    {
        eprintln!("airlock: warning: {warning}");
    }
    let answering = tokio::spawn(front_end::serve(
        std::sync::Arc::downgrade(session.approvals()),
        events_rx,
        prompt::PromptContext {
            justification: args.justification.clone(),
            rules_file: session.options().amendment_file.clone(),
            allow_rules_bypass_sandbox: session.options().allow_rules_bypass_sandbox,
        },
    ));
    let turn = session.start_turn("turn-1");
    let call = ShellCall {
        call_id: airlock_core::new_call_id(),
        command,
        cwd: None,
        sandbox_permissions: match args.sandbox_permissions {
            SandboxArg::UseDefault => SandboxPermissions::UseDefault,
            SandboxArg::RequireEscalated => SandboxPermissions::RequireEscalated,
        },
        justification: args.justification.clone(),
        prefix_rule: None,
    };
    if let Some(unrunnable) = unrunnable {
        let (record, audit_error) = session.record_unrunnable(
            &turn,
            call,
            i32::from(unrunnable.exit_code()),
            unrunnable.message(),
        );
        session.approvals().end_turn();
        drop(session);
        let _ = answering.await;
        if let Some(error) = &audit_error {
            eprintln!("airlock: warning: {error}");
        }
        if args.verbose {
            eprint!("{}", report::render(&record));
        }
        return Ok(Finished {
            code: unrunnable.exit_code(),
            status: unrunnable.status(),
            message: Some(unrunnable.message()),
            multiline: false,
            printed: false,
            call_id: Some(record.call_id.clone()),
            record: serde_json::to_value(&record).ok(),
            output: None,
        });
    }
    let outcome = session.exec(&turn, call).await;
    session.approvals().end_turn();
    if let Some(proxy) = proxy {
        let audit = session
            .options()
            .audit_log
            .as_ref()
            .map(airlock_core::AuditLog::new);
        proxy.finish_with_audit(audit.as_ref(), &session.options().session_id);
    }
    drop(session);
    let _ = answering.await;
    if let Some(error) = &outcome.audit_error {
        eprintln!(
            "airlock: warning: {}",
            crate::terminal_text::safe(&error.to_string())
        );
    }
    if args.verbose {
        eprint!(
            "{}",
            crate::terminal_text::lines(&report::render(&outcome.record))
        );
    }
    let hints = hints::hints(
        &outcome.record,
        &outcome.result,
        network_enabled,
        managed_network_active,
        approval_policy,
    );
    let mut finished = finish(outcome.result, outcome.record);
    if reviewer == ApprovalsReviewer::User
        && !interactive
        && let Some(message) = &mut finished.message
        && message.starts_with(airlock_approval::NO_REVIEWER_AVAILABLE)
        && let Some(why) = front_end::no_terminal_explanation(true)
    {
        message.push('\n');
        message.push_str(&why);
        finished.multiline = true;
    }
    for hint in hints {
        eprintln!("airlock: hint: {}", crate::terminal_text::escape(&hint));
    }
    Ok(finished)
}

/// The `apply-patch` settings of an `exec` call routed to the patch path.
fn patch_settings(args: &ExecArgs) -> crate::apply_patch_cmd::PatchSettings {
    crate::apply_patch_cmd::PatchSettings {
        approval: if args.yolo {
            Some(AskForApproval::Never)
        } else {
            args.approval.map(PolicyArg::policy)
        },
        profile: if args.yolo {
            Some(DANGER_FULL_ACCESS.to_owned())
        } else {
            args.profile.clone()
        },
        cd: args.cd.clone(),
        rules: args.rules.clone(),
        reviewer: args.reviewer.map(|reviewer| match reviewer {
            ReviewerArg::User => ApprovalsReviewer::User,
            ReviewerArg::AutoReview => ApprovalsReviewer::AutoReview,
        }),
        strict_auto_review: args.strict_auto_review,
        overrides: args.overrides.clone(),
        via_exec: true,
        verbose: args.verbose,
        json: args.json,
    }
}

/// The exit status of a finished call (spec 10 §CLI) and its notes on stderr.
fn finish(
    result: Result<airlock_sandbox::ExecOutput, ToolError>,
    record: airlock_core::AuditRecord,
) -> Finished {
    let (code, status, message, output) = match result {
        Ok(output) => {
            if let Some(first) = record.trace.attempts.first()
                && first.sandbox_denied
                && record.trace.attempts.len() > 1
            {
                eprintln!(
                    "airlock: note: the sandbox blocked the first attempt; it was retried without the sandbox"
                );
            }
            (status_byte(output.exit_code), "ran", None, Some(output))
        }
        Err(ToolError::SandboxDenied { output, .. }) => {
            let why = record
                .trace
                .no_retry
                .map_or("", airlock_core::orchestrator::NoRetryReason::describe);
            eprintln!("airlock: the sandbox blocked this command; not retried: {why}");
            (
                status_byte(output.exit_code),
                "sandbox_denied",
                None,
                Some(output),
            )
        }
        Err(ToolError::Rejected { message, .. }) => (REFUSED, "rejected", Some(message), None),
        Err(error @ ToolError::Execution(_)) => (REFUSED, "error", Some(error.to_string()), None),
    };
    Finished {
        code,
        status,
        message,
        multiline: false,
        printed: false,
        call_id: Some(record.call_id.clone()),
        record: serde_json::to_value(&record).ok(),
        output,
    }
}

/// An exit code as a process status byte (out-of-range codes become 1).
fn status_byte(code: i32) -> u8 {
    u8::try_from(code).unwrap_or(1)
}

/// A session id unique enough for the audit log: process id and start time.
fn session_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_millis())
        .unwrap_or_default();
    format!("exec-{}-{millis}", std::process::id())
}
