//! `airlock explain`: the decisions `airlock exec` would make for a command, without
//! running anything (spec 10 §CLI, issue 5 item 4): segments and how each was decided,
//! the deny view, heuristics, the approval requirement and its reason, who would be
//! asked, and whether the first attempt would be sandboxed.
//!
//! Output: a short layered report; with `--json` one object (spec 10, the format of the
//! shell conformance corpus). Exit codes: 0 whatever the decision; 2 for an unusable
//! command (empty argv, empty program, NUL byte, invalid UTF-8; spec 03 edge case 16) or
//! a usage error; 1 when the configuration cannot be used. A rules file that fails to
//! load is not fatal: a warning is printed and every command needs approval (fail
//! closed).

mod from_log;
mod json;
mod report;

use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_approval::ApprovalConfig;
use airlock_core::{
    ExecApprovalRequest, ExecPolicyManager, ExecPolicySources, RequirementOutcome,
    extra_safe_commands_from_config, first_attempt_sandboxed,
};
use airlock_permissions::{
    AirlockConfig, ConfigEnv, PermissionProfile, file_system_sandbox_policy, load_config,
};
use airlock_protocol::{
    ApprovalsReviewer, AskForApproval, ExecApprovalRequirement, FileSystemSandboxPolicy,
    SandboxPermissions,
};
use anyhow::Context;
use clap::{Args, ValueEnum};

/// Exit status for an unusable command (spec 10: `explain` exits 2 for input errors).
const INPUT_ERROR: u8 = 2;

/// Arguments of `airlock explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Approval policy (default: `approval_policy` from the config, else `on-request`). A
    /// granular policy can be given with `-c 'approval_policy={granular={...}}'`.
    #[arg(short = 'a', long = "ask-for-approval", value_name = "POLICY")]
    approval: Option<PolicyArg>,

    /// Profile id instead of the configured one (`:read-only`, `:workspace`,
    /// `:danger-full-access`, `:external-sandbox`, or a `[permissions.<id>]` table).
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    profile: Option<String>,

    /// Working directory (the first workspace root); default: the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,

    /// A `.rules` file (repeatable); replaces the configured rules files.
    #[arg(short = 'r', long = "rules", value_name = "PATH")]
    rules: Vec<PathBuf>,

    /// What the call asks of the sandbox, as for `exec`: `use_default`, or
    /// `require_escalated` (run without the sandbox; needs approval).
    #[arg(
        long = "sandbox-permissions",
        value_name = "X",
        default_value = "use_default"
    )]
    sandbox_permissions: SandboxArg,

    /// As for `exec`: every command goes to the reviewer, even one that needs no approval
    /// (spec 06 "strict auto review"); changes who would be asked.
    #[arg(long)]
    strict_auto_review: bool,

    /// As for `exec`: `never` + `:danger-full-access` (no approval, no sandbox).
    #[arg(
        long = "dangerously-bypass-approvals-and-sandbox",
        visible_alias = "yolo",
        conflicts_with_all = ["approval", "profile", "sandbox_permissions"]
    )]
    yolo: bool,

    /// Accepted so that an `exec` command line can be explained unchanged; it is shown to
    /// reviewers at run time and does not change any decision here.
    #[arg(long, value_name = "TEXT")]
    justification: Option<String>,

    /// Accepted as for `exec`; the report already shows every layer's decision.
    #[arg(short = 'v', long)]
    verbose: bool,

    /// The model's proposed prefix rule, as shell words (`--prefix-rule 'cargo test'`).
    #[arg(long = "prefix-rule", value_name = "WORDS")]
    prefix_rule: Option<String>,

    /// Who answers approvals (default: `approvals_reviewer` from the config, else `user`).
    #[arg(long, value_name = "R")]
    reviewer: Option<ReviewerArg>,

    /// Config override `dotted.key=value` (value parsed as TOML, else a string); repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// Print one JSON object instead of the report.
    #[arg(long)]
    json: bool,

    /// Re-render the audit entry of this call id (from `$AIRLOCK_HOME/log/audit.jsonl`,
    /// printed by `airlock exec -v`) instead of explaining a command.
    #[arg(long = "from-log", value_name = "CALL_ID", conflicts_with = "command")]
    from_log: Option<String>,

    /// The command, after `--`.
    #[arg(value_name = "COMMAND", num_args = 0.., trailing_var_arg = true)]
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

/// `--sandbox-permissions` values (spec 07).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SandboxArg {
    #[value(name = "use_default")]
    UseDefault,
    #[value(name = "require_escalated")]
    RequireEscalated,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ReviewerArg {
    User,
    #[value(name = "auto_review")]
    AutoReview,
}

/// Everything the report shows.
pub(crate) struct Explanation {
    pub command: Vec<String>,
    pub cwd: PathBuf,
    pub approval_policy: AskForApproval,
    pub profile_id: String,
    pub profile: PermissionProfile,
    pub fs_policy: FileSystemSandboxPolicy,
    pub sandbox_permissions: SandboxPermissions,
    pub rules_files: Vec<PathBuf>,
    /// Where an offered prefix rule would be saved.
    pub amendment_file: PathBuf,
    pub warnings: Vec<String>,
    pub outcome: RequirementOutcome,
    pub reviewer: &'static str,
    pub first_attempt_sandboxed: Option<bool>,
    /// The effective managed network rules (spec 12), one line each; empty without one.
    pub network: Vec<String>,
}

/// Runs `airlock explain`.
pub fn run(args: ExplainArgs) -> ExitCode {
    if let Some(call_id) = &args.from_log {
        return run_from_log(call_id, args.json);
    }
    if args.command.is_empty() {
        eprintln!(
            "Error: invalid command: no command given; pass it after `--` (airlock explain -- CMD...), or use --from-log CALL_ID"
        );
        return ExitCode::from(INPUT_ERROR);
    }
    let command = match airlock_shell::argv_from_os(args.command.iter().cloned()) {
        Ok(command) => command,
        Err(error) => {
            eprintln!(
                "Error: invalid command: {}",
                crate::terminal_text::safe(&error.to_string())
            );
            return ExitCode::from(INPUT_ERROR);
        }
    };
    if !matches!(
        airlock_patch::maybe_parse_apply_patch(&command),
        airlock_patch::ApplyPatchInvocation::NotApplyPatch
    ) {
        // `exec` routes this to the patch path (spec 11); what follows is the command path's.
        eprintln!(
            "note: `airlock exec` does not run this as a command: it is an apply_patch call, \
             handled like `airlock apply-patch` (the decisions below are for the command path)"
        );
    }
    let explanation = match explain(&args, command) {
        Ok(Ok(explanation)) => explanation,
        Ok(Err(error)) => {
            eprint!(
                "{}",
                crate::terminal_text::lines(&format!("Error: {error}\n"))
            );
            return ExitCode::from(INPUT_ERROR);
        }
        Err(error) => return crate::report_error(&error),
    };
    let mut stderr = std::io::stderr().lock();
    for warning in &explanation.warnings {
        // A closed stderr must not turn a successful explanation into a failure.
        let _ = writeln!(stderr, "warning: {}", crate::terminal_text::safe(warning));
    }
    let text = if args.json {
        json::render(&explanation)
    } else {
        // The command, cwd and rules paths are the agent's: escaped line by line.
        crate::terminal_text::lines(&report::render(&explanation))
    };
    match crate::common::write_stdout(&text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => crate::report_error(&error),
    }
}

/// `policy/explain` of `airlock serve`: what `airlock explain --json ARGV...` prints, as a JSON
/// value (`argv` starts with the program name; warnings are dropped).
///
/// # Errors
/// Unusable flags, configuration or command, as `airlock explain` reports them.
pub(crate) fn explain_json(argv: Vec<OsString>) -> anyhow::Result<serde_json::Value> {
    use clap::{Args as _, FromArgMatches as _};
    let matches =
        ExplainArgs::augment_args(clap::Command::new("explain")).try_get_matches_from(argv)?;
    let args = ExplainArgs::from_arg_matches(&matches)?;
    let command = airlock_shell::argv_from_os(args.command.iter().cloned())
        .map_err(|error| anyhow::anyhow!("invalid command: {error}"))?;
    let explanation = explain(&args, command)?.map_err(anyhow::Error::new)?;
    Ok(serde_json::from_str(&json::render(&explanation))?)
}

/// `--from-log CALL_ID`: the audit entry for a person (or as JSON).
fn run_from_log(call_id: &str, json: bool) -> ExitCode {
    let result = crate::common::config_env().and_then(|env| {
        let log = env
            .airlock_home
            .join(airlock_core::audit::AUDIT_LOG_RELATIVE_PATH);
        from_log::find(&log, call_id)
    });
    let (entry, count) = match result {
        Ok(found) => found,
        Err(error) => return crate::report_error(&error),
    };
    if count > 1 {
        eprintln!("warning: {count} entries have this call id; showing the last");
    }
    let text = if json {
        format!("{entry}\n")
    } else {
        crate::terminal_text::lines(&from_log::render(&entry))
    };
    match crate::common::write_stdout(&text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => crate::report_error(&error),
    }
}

/// The explanation; the inner error is an input error of the command (exit 2), the outer
/// one a configuration problem (exit 1).
fn explain(
    args: &ExplainArgs,
    command: Vec<String>,
) -> anyhow::Result<Result<Explanation, airlock_core::RequirementError>> {
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    let env = crate::common::config_env()?;
    let config = load_config(&env, &args.overrides)?;
    let requested_profile = if args.yolo {
        Some(airlock_permissions::DANGER_FULL_ACCESS)
    } else {
        args.profile.as_deref()
    };
    let selected = crate::common::select_profile(&config, requested_profile, &cwd)?;
    let mut warnings = selected.warnings.clone();
    let approval_policy = match args.approval {
        _ if args.yolo => AskForApproval::Never,
        Some(PolicyArg::Untrusted) => AskForApproval::UnlessTrusted,
        Some(PolicyArg::OnRequest | PolicyArg::OnFailure) => AskForApproval::OnRequest,
        Some(PolicyArg::Never) => AskForApproval::Never,
        None => config.approval_policy()?,
    };
    let sandbox_permissions = match args.sandbox_permissions {
        SandboxArg::UseDefault => SandboxPermissions::UseDefault,
        SandboxArg::RequireEscalated => SandboxPermissions::RequireEscalated,
    };
    let prefix_rule = match &args.prefix_rule {
        Some(words) => Some(
            shlex::split(words)
                .with_context(|| format!("--prefix-rule {words:?} has unbalanced quotes"))?,
        ),
        None => None,
    };
    let extra_safe_commands = extra_safe_commands_from_config(&config)?;
    let manager = ExecPolicyManager::load(&ExecPolicySources::for_config(
        &config,
        &env.airlock_home,
        &cwd,
        args.rules.clone(),
    ));
    warnings.extend(manager.warnings().iter().cloned());
    let profile = selected.materialized();
    let fs_policy = file_system_sandbox_policy(&profile);
    let request = ExecApprovalRequest {
        command: &command,
        approval_policy,
        file_system_sandbox_policy: &fs_policy,
        sandbox_permissions,
        prefix_rule: prefix_rule.as_deref(),
        cwd: &cwd,
        extra_safe_commands: &extra_safe_commands,
    };
    let mut outcome = match manager.create_exec_approval_requirement_for_command(&request) {
        Ok(outcome) => outcome,
        Err(error) => return Ok(Err(error)),
    };
    // As `exec` does: a run that would leave the sandbox is reviewed for planted code.
    let process_env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let review = airlock_core::unsandboxed::review_command(
        &outcome.parsed,
        &airlock_core::unsandboxed::ReviewContext {
            cwd: &cwd,
            env: &process_env,
            fs_policy: &fs_policy,
            pins_git: true,
        },
    );
    outcome.unsandboxed = airlock_core::unsandboxed::apply_review(
        &mut outcome.requirement,
        review,
        airlock_core::unsandboxed::allow_rules_bypass_sandbox(&config)
            .map_err(anyhow::Error::msg)?,
        sandbox_permissions.requests_sandbox_override(),
    );
    // `exec` refuses a filesystem root as the workspace before anything else; so does the
    // explanation (same reason).
    if let Err(refusal) = crate::common::refuse_root_workspace(&cwd, selected.symbolic()) {
        outcome.requirement = ExecApprovalRequirement::Forbidden {
            reason: refusal.to_string(),
        };
    }
    // Strict review sends a command that needs no approval to the reviewer too (not
    // under `never`), as the orchestrator does.
    let reviewed = match &outcome.requirement {
        ExecApprovalRequirement::NeedsApproval { .. } => true,
        ExecApprovalRequirement::Skip { .. } => {
            args.strict_auto_review && approval_policy != AskForApproval::Never
        }
        ExecApprovalRequirement::Forbidden { .. } => false,
    };
    let reviewer = reviewer(args, &config, &env, reviewed, &mut warnings)?;
    let managed =
        crate::managed_network::effective(&config, &env, &selected, &cwd, args.rules.clone());
    let network = match &managed {
        Ok(Some(network)) => network.describe(),
        Ok(None) => Vec::new(),
        Err(error) => vec![format!(
            "network: managed proxy, but it cannot start: {error:#}"
        )],
    };
    let first_attempt_sandboxed = first_attempt_sandboxed(
        sandbox_permissions,
        &outcome.requirement,
        &fs_policy,
        &profile,
        !network.is_empty(),
    );
    Ok(Ok(Explanation {
        command,
        cwd,
        approval_policy,
        profile_id: selected.compiled.active.id.clone(),
        profile,
        fs_policy,
        sandbox_permissions,
        rules_files: manager.files().to_vec(),
        amendment_file: airlock_execpolicy::default_amendment_file(&env.airlock_home),
        warnings,
        outcome,
        reviewer,
        first_attempt_sandboxed,
        network,
    }))
}

/// Who would be asked first (spec 06 routing: hooks, then the automatic reviewer, then
/// the user); `none` when nobody is asked.
fn reviewer(
    args: &ExplainArgs,
    config: &AirlockConfig,
    env: &ConfigEnv,
    reviewed: bool,
    warnings: &mut Vec<String>,
) -> anyhow::Result<&'static str> {
    if !reviewed {
        return Ok("none");
    }
    let approval = ApprovalConfig::load(&config.table, &config.origin, &env.airlock_home)?;
    warnings.extend(approval.warnings.iter().cloned());
    if approval
        .hooks
        .iter()
        .any(|hook| hook.matcher.matches(&["Bash"]))
    {
        return Ok("hook");
    }
    let configured = match args.reviewer {
        Some(ReviewerArg::User) => ApprovalsReviewer::User,
        Some(ReviewerArg::AutoReview) => ApprovalsReviewer::AutoReview,
        None => configured_reviewer(config)?,
    };
    Ok(match configured {
        ApprovalsReviewer::AutoReview => "auto_review",
        ApprovalsReviewer::User => "user",
    })
}

/// `approvals_reviewer` from the config (`user` when absent).
fn configured_reviewer(config: &AirlockConfig) -> anyhow::Result<ApprovalsReviewer> {
    let Some(value) = config.table.get("approvals_reviewer") else {
        return Ok(ApprovalsReviewer::default());
    };
    value.clone().try_into().map_err(|_| {
        anyhow::anyhow!(
            "{}: approvals_reviewer = {value} is not valid; use \"user\" or \"auto_review\"",
            config.origin
        )
    })
}
