//! `airlock apply-patch`: one patch through the three layers (spec 11; issue 12). The patch
//! (from FILE, or stdin with `-` or no FILE) is verified against the files, assessed against
//! the permission profile, approved when needed (hooks, the automatic reviewer, or the person
//! at the terminal, who sees the diff), then applied atomically by a sandboxed child
//! `airlock __apply-patch`. `airlock exec apply_patch PATCH` and the `bash -lc` heredoc forms
//! come here too. Every call is appended to the audit log (changed paths, never contents).
//!
//! Exit status: **0** applied; **1** the patch failed (parse, match, verification or write;
//! nothing changed); **125** Airlock refused (forbidden, denied, protected metadata,
//! deny-read, empty patch, cannot confine); 2 for usage errors.

mod front_end;
mod keys;
mod prompt;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::io::Read as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_approval::ApprovalConfig;
use airlock_core::ExecPolicyManager;
use airlock_core::ExecPolicySources;
use airlock_core::OutputMode;
use airlock_core::PatchCall;
use airlock_core::PatchResult;
use airlock_core::SandboxSettings;
use airlock_core::Session;
use airlock_core::SessionConfig;
use airlock_core::SessionOptions;
use airlock_core::ToolEnvironment;
use airlock_core::audit::AUDIT_LOG_RELATIVE_PATH;
use airlock_permissions::ConfigEnv;
use airlock_permissions::load_config;
use airlock_permissions::normalize_lexically;
use airlock_permissions::select_permission_profile;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_sandbox::ShellEnvironmentPolicy;
use clap::Args;
use clap::ValueEnum;

/// Exit status when the patch did not apply.
pub const PATCH_FAILED: u8 = 1;
/// Exit status when Airlock refuses (as `airlock exec`).
pub const REFUSED: u8 = 125;

/// Arguments of `airlock apply-patch`.
#[derive(Debug, Args)]
pub struct ApplyPatchArgs {
    /// Approval policy (default: `approval_policy` from the config, else `on-request`).
    #[arg(short = 'a', long = "ask-for-approval", value_name = "POLICY")]
    pub approval: Option<PolicyArg>,

    /// Permission profile id (`:read-only`, `:workspace`, `:danger-full-access`, ...);
    /// default: the configured one.
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    pub profile: Option<String>,

    /// Working directory (the first workspace root; the patch's paths resolve against it).
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    pub cd: Option<PathBuf>,

    /// A `.rules` file (repeatable); replaces `$AIRLOCK_HOME/rules/*.rules`.
    #[arg(short = 'r', long = "rules", value_name = "PATH")]
    pub rules: Vec<PathBuf>,

    /// Who answers approvals (default: `approvals_reviewer` from the config, else `user`).
    #[arg(long, value_name = "R")]
    pub reviewer: Option<ReviewerArg>,

    /// Send every patch to the automatic reviewer, even one that needs no approval.
    #[arg(long)]
    pub strict_auto_review: bool,

    /// Config override `dotted.key=value`; repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    pub overrides: Vec<String>,

    /// After the patch, print its call id (for `airlock explain --from-log CALL_ID`).
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// The patch file; `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    pub file: Option<OsString>,
}

/// `-a` values (as `airlock exec`); `on-failure` is the legacy alias of `on-request`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PolicyArg {
    Untrusted,
    OnRequest,
    OnFailure,
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

/// `--reviewer` values (as `airlock exec`).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ReviewerArg {
    User,
    #[value(name = "auto_review")]
    AutoReview,
}

/// The session settings of one patch call, shared by `apply-patch` and `exec`'s routing.
#[derive(Debug, Clone, Default)]
pub struct PatchSettings {
    /// `-a`.
    pub approval: Option<AskForApproval>,
    /// `-P`.
    pub profile: Option<String>,
    /// `-C`.
    pub cd: Option<PathBuf>,
    /// `-r`.
    pub rules: Vec<PathBuf>,
    /// `--reviewer`.
    pub reviewer: Option<ApprovalsReviewer>,
    /// `--strict-auto-review`.
    pub strict_auto_review: bool,
    /// `-c`.
    pub overrides: Vec<String>,
    /// The patch came through `airlock exec` (a note says it was applied as a patch).
    pub via_exec: bool,
    /// `-v`: print the call id on stderr.
    pub verbose: bool,
    /// `exec --json`: print nothing on stdout (the caller prints one JSON object).
    pub json: bool,
}

/// How one patch call ended, for the exit status and `exec --json`.
#[derive(Debug)]
pub struct PatchFinished {
    /// The exit status: 0 applied, 1 patch failed, 125 refused.
    pub code: u8,
    /// `applied`, `patch_failed` or `rejected` (`exec --json`'s status word).
    pub status: &'static str,
    /// Why it failed or was refused.
    pub message: Option<String>,
    /// The `Success. Updated the following files:` summary of an applied patch.
    pub stdout: Option<String>,
    /// The call id (absent when the call never started: unusable configuration).
    pub call_id: Option<String>,
    /// The audit record of the call, as JSON.
    pub record: Option<serde_json::Value>,
}

impl PatchFinished {
    fn rejected(reason: String) -> Self {
        Self {
            code: REFUSED,
            status: "rejected",
            message: Some(reason),
            stdout: None,
            call_id: None,
            record: None,
        }
    }
}

/// Runs `airlock apply-patch`.
pub fn run(args: ApplyPatchArgs) -> ExitCode {
    let patch = match read_patch(args.file.as_deref()) {
        Ok(patch) => patch,
        Err(reason) => return refuse(&reason),
    };
    let settings = PatchSettings {
        approval: args.approval.map(PolicyArg::policy),
        profile: args.profile,
        cd: args.cd,
        rules: args.rules,
        reviewer: args.reviewer.map(|reviewer| match reviewer {
            ReviewerArg::User => ApprovalsReviewer::User,
            ReviewerArg::AutoReview => ApprovalsReviewer::AutoReview,
        }),
        strict_auto_review: args.strict_auto_review,
        overrides: args.overrides,
        via_exec: false,
        verbose: args.verbose,
        json: false,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return refuse(&format!("cannot start the async runtime: {error}")),
    };
    ExitCode::from(runtime.block_on(apply(settings, patch, None)).code)
}

/// The patch text of FILE, or of stdin for `-` / no FILE; must be UTF-8.
fn read_patch(file: Option<&std::ffi::OsStr>) -> Result<String, String> {
    let bytes = match file {
        None => read_stdin()?,
        Some(name) if name == "-" => read_stdin()?,
        Some(name) => std::fs::read(name).map_err(|error| {
            format!(
                "cannot read the patch file {}: {error}",
                Path::new(name).display()
            )
        })?,
    };
    String::from_utf8(bytes).map_err(|error| {
        format!(
            "the patch is not UTF-8 text (invalid byte at offset {}); apply_patch edits text files only",
            error.utf8_error().valid_up_to()
        )
    })
}

fn read_stdin() -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read the patch from stdin: {error}"))?;
    Ok(bytes)
}

/// Prints `airlock: <reason>` on one line and returns 125.
fn refuse(reason: &str) -> ExitCode {
    eprintln!("airlock: {}", one_line(reason));
    ExitCode::from(REFUSED)
}

/// `text` on one line, escaped for the terminal (paths and reasons name the agent's files).
fn one_line(text: &str) -> String {
    crate::terminal_text::safe(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Applies `patch` with `settings` (`workdir`: the `cd DIR` of a shell-wrapped call) and
/// says how it ended; prints the summary on stdout (not with `settings.json`), errors on
/// stderr.
pub async fn apply(
    settings: PatchSettings,
    patch: String,
    workdir: Option<PathBuf>,
) -> PatchFinished {
    match apply_inner(settings, patch, workdir).await {
        Ok(finished) => finished,
        Err(reason) => {
            eprintln!("airlock: {}", one_line(&reason));
            PatchFinished::rejected(reason)
        }
    }
}

async fn apply_inner(
    settings: PatchSettings,
    patch: String,
    workdir: Option<PathBuf>,
) -> Result<PatchFinished, String> {
    if settings.via_exec {
        // Codex tells the model the same (reference §A5).
        eprintln!(
            "airlock: note: apply_patch was requested via exec; it is applied as a patch \
             (airlock apply-patch), not run as a command"
        );
    }
    let current = std::env::current_dir()
        .map_err(|error| format!("cannot read the current directory: {error}"))?;
    let cwd = match &settings.cd {
        Some(dir) => normalize_lexically(&current.join(dir)),
        None => current,
    };
    if !cwd.is_dir() {
        return Err(format!(
            "working directory {} does not exist or is not a directory; pass an existing -C DIR",
            cwd.display()
        ));
    }
    let env = ConfigEnv::from_process();
    let config = load_config(&env, &settings.overrides).map_err(|error| error.to_string())?;
    let session_config = SessionConfig::from_config(&config).map_err(|error| error.to_string())?;
    let approval_policy = settings.approval.unwrap_or(session_config.approval_policy);
    let reviewer = settings
        .reviewer
        .unwrap_or(session_config.approvals_reviewer);
    let selected = select_permission_profile(&config, settings.profile.as_deref(), &cwd)
        .map_err(|error| error.to_string())?;
    let shell_env: BTreeMap<String, String> = ShellEnvironmentPolicy::from_config(&config.table)
        .map_err(|error| error.to_string())?
        .apply(std::env::vars_os())
        .into_iter()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let exec_policy = ExecPolicyManager::load(&ExecPolicySources::for_config(
        &config,
        &env.airlock_home,
        &cwd,
        settings.rules.clone(),
    ));
    let approval_config = ApprovalConfig::load(&config.table, &config.origin, &env.airlock_home)
        .map_err(|error| error.to_string())?;
    let helper = std::env::current_exe()
        .map_err(|error| format!("cannot locate the airlock executable: {error}"))?;
    let options = SessionOptions {
        session_id: session_id(),
        approval_policy,
        approvals_reviewer: reviewer,
        strict_auto_review: settings.strict_auto_review,
        environment: ToolEnvironment {
            environment_id: None,
            cwd: cwd.clone(),
            workspace_roots: selected.workspace_roots.clone(),
            permission_profile: selected.symbolic().clone(),
        },
        env: shell_env,
        extra_safe_commands: Vec::new(),
        sandbox: SandboxSettings {
            linux_helper: Some(helper),
            manager: airlock_sandbox::SandboxManager {
                bwrap_path: airlock_sandbox::bwrap_path_from_config(&config.table)
                    .map_err(|error| error.to_string())?,
                ..airlock_sandbox::SandboxManager::default()
            },
            ..SandboxSettings::default()
        },
        output: OutputMode::Capture,
        amendment_file: None,
        allow_rules_bypass_sandbox: airlock_core::unsandboxed::allow_rules_bypass_sandbox(&config)
            .map_err(|error| error.to_string())?,
        audit_log: session_config
            .audit_enabled
            .then(|| env.airlock_home.join(AUDIT_LOG_RELATIVE_PATH)),
    };
    // A person can answer only on a terminal (the patch itself may have come on stdin).
    let interactive = reviewer == ApprovalsReviewer::User
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
    let session = Session::new(
        options,
        approval_config,
        exec_policy,
        interactive.then_some(events_tx),
    );
    for warning in selected.warnings.iter().chain(session.warnings()) {
        eprintln!(
            "airlock: warning: {}",
            crate::terminal_text::safe(&warning.to_string())
        );
    }
    let answering = tokio::spawn(front_end::serve(
        std::sync::Arc::downgrade(session.approvals()),
        events_rx,
    ));
    let turn = session.start_turn("turn-1");
    let outcome = session
        .apply_patch(
            &turn,
            PatchCall {
                // Unique like `exec`'s, so `explain --from-log` finds exactly this call.
                call_id: airlock_core::new_call_id(),
                patch,
                workdir,
            },
        )
        .await;
    session.approvals().end_turn();
    drop(session);
    let _ = answering.await;
    if let Some(error) = &outcome.audit_error {
        eprintln!("airlock: warning: {}", one_line(&error.to_string()));
    }
    let call_id = outcome.record.call_id.clone();
    if settings.verbose {
        eprintln!(
            "airlock: call {} (airlock explain --from-log {})",
            crate::terminal_text::safe(&call_id),
            crate::terminal_text::safe(&call_id)
        );
    }
    let record = serde_json::to_value(&outcome.record).ok();
    let (code, status, message, stdout) = match outcome.result {
        PatchResult::Applied {
            output,
            retried_without_sandbox,
        } => {
            if !settings.json {
                // The summary names the patch's paths: escaped, one path a line.
                print!("{}", crate::terminal_text::lines(&output.stdout));
            }
            if retried_without_sandbox {
                eprintln!(
                    "airlock: note: the sandbox blocked the first attempt; it was retried without the sandbox"
                );
            }
            (0, "applied", None, Some(output.stdout))
        }
        PatchResult::Failed { message } => {
            eprint!("{}", crate::terminal_text::lines(&format!("{message}\n")));
            (PATCH_FAILED, "patch_failed", Some(message), None)
        }
        PatchResult::Refused { message, .. } => {
            eprintln!("airlock: {}", one_line(&message));
            // As for `exec`: a missing reviewer names the missing terminal and the ways out.
            if reviewer == ApprovalsReviewer::User
                && !interactive
                && message.starts_with(airlock_approval::NO_REVIEWER_AVAILABLE)
                && let Some(why) = crate::exec_cmd::no_terminal_explanation(false)
            {
                eprintln!("{why}");
            }
            (REFUSED, "rejected", Some(message), None)
        }
    };
    Ok(PatchFinished {
        code,
        status,
        message,
        stdout,
        call_id: Some(call_id),
        record,
    })
}

/// A session id unique enough for the audit log: process id and start time (as `exec`'s).
fn session_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_millis())
        .unwrap_or_default();
    format!("apply-patch-{}-{millis}", std::process::id())
}
