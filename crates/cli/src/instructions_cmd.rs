//! `airlock instructions`: the `<permissions instructions>` text the model would be given (spec 10
//! §CLI, spec 08), for the configured (or `-P`) profile in a directory, the approval policy,
//! reviewer, features and exec-policy rules.
//!
//! Output: the text; with `--json`, `{"text": ..., "snapshot": ...}` on one line. With
//! `--diff PREV.json` (a snapshot, or a previous `--json` output): only what would be sent given
//! that previous snapshot — the full text, the `Approved command prefix saved:` update, or nothing;
//! with `--json`, `{"update": "full"|"prefixes_saved"|"none", "text": ..., "snapshot": ...}`.
//!
//! Exit codes: 0 printed, 1 config / rules / snapshot could not be used, 2 usage error.

use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_execpolicy::PolicyParser;
use airlock_execpolicy::default_policy_files;
use airlock_instructions::ApprovalPromptContext;
use airlock_instructions::PermissionsInstructions;
use airlock_instructions::PermissionsSnapshot;
use airlock_instructions::PermissionsState;
use airlock_instructions::PreviousSectionState;
use airlock_permissions::AirlockConfig;
use airlock_permissions::ConfigEnv;
use airlock_permissions::load_config;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use anyhow::Context;
use clap::{Args, ValueEnum};
use serde::Serialize;

/// Arguments of `airlock instructions`.
#[derive(Debug, Args)]
pub struct InstructionsArgs {
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

    /// Who answers approvals (default: `approvals_reviewer` from the config, else `user`).
    #[arg(long, value_name = "R")]
    reviewer: Option<ReviewerArg>,

    /// Turn on a feature that changes the text (repeatable).
    #[arg(long = "enable", value_name = "FEATURE")]
    features: Vec<FeatureArg>,

    /// Config override `dotted.key=value` (value parsed as TOML, else a string); repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// Print only what would be sent after this previous snapshot (JSON file: a snapshot, or the
    /// output of an earlier `--json` run).
    #[arg(long, value_name = "PREV_SNAPSHOT.json")]
    diff: Option<PathBuf>,

    /// Print JSON instead of the text.
    #[arg(long)]
    json: bool,
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

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ReviewerArg {
    User,
    #[value(name = "auto_review")]
    AutoReview,
}

/// Features that change the approval text (spec 08 §Sections item 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FeatureArg {
    /// Steer toward `with_additional_permissions` under `on-request`.
    #[value(name = "exec_permission_approvals")]
    ExecPermissionApprovals,
    /// Describe the `request_permissions` tool.
    #[value(name = "request_permissions_tool")]
    RequestPermissionsTool,
}

#[derive(Serialize)]
struct TextJson<'a> {
    text: &'a str,
    snapshot: &'a PermissionsSnapshot,
}

#[derive(Serialize)]
struct DiffJson<'a> {
    update: &'a str,
    text: &'a str,
    snapshot: &'a PermissionsSnapshot,
}

/// Runs `airlock instructions`.
pub fn run(args: InstructionsArgs) -> ExitCode {
    match run_instructions(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => crate::report_error(&error),
    }
}

/// `instructions/render` of `airlock serve`: what `airlock instructions --json ARGV...` prints,
/// as a JSON value (`argv` starts with the program name; warnings go to stderr).
///
/// # Errors
/// Unusable flags or configuration.
pub(crate) fn render_json(argv: Vec<std::ffi::OsString>) -> anyhow::Result<serde_json::Value> {
    use clap::{Args as _, FromArgMatches as _};
    let matches = InstructionsArgs::augment_args(clap::Command::new("instructions"))
        .try_get_matches_from(argv)?;
    let args = InstructionsArgs::from_arg_matches(&matches)?;
    Ok(serde_json::from_str(&instructions_output(&args)?)?)
}

fn run_instructions(args: &InstructionsArgs) -> anyhow::Result<()> {
    let output = instructions_output(args)?;
    if output.is_empty() {
        return Ok(());
    }
    crate::common::write_stdout(&format!("{output}\n"))
}

fn instructions_output(args: &InstructionsArgs) -> anyhow::Result<String> {
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    let env = crate::common::config_env()?;
    let config = load_config(&env, &args.overrides)?;
    let selected = crate::common::select_profile(&config, args.profile.as_deref(), &cwd)?;
    let mut stderr = std::io::stderr().lock();
    for warning in &selected.warnings {
        // A closed stderr must not turn a successful run into a failure.
        let _ = writeln!(stderr, "warning: {}", crate::terminal_text::safe(warning));
    }
    if let Err(refusal) = crate::common::refuse_root_workspace(&cwd, selected.symbolic()) {
        // `exec` and `sandbox` refuse to run here; say so instead of looking fine.
        let _ = writeln!(
            stderr,
            "warning: `airlock exec` and `airlock sandbox` refuse to run here: {refusal}"
        );
    }
    let approval_policy = match args.approval {
        Some(PolicyArg::Untrusted) => AskForApproval::UnlessTrusted,
        Some(PolicyArg::OnRequest | PolicyArg::OnFailure) => AskForApproval::OnRequest,
        Some(PolicyArg::Never) => AskForApproval::Never,
        None => config.approval_policy()?,
    };
    let reviewer = match args.reviewer {
        Some(ReviewerArg::User) => ApprovalsReviewer::User,
        Some(ReviewerArg::AutoReview) => ApprovalsReviewer::AutoReview,
        None => configured_reviewer(&config)?,
    };
    let policy = load_rules(args, &config, &env, &cwd)?;
    let instructions = PermissionsInstructions::from_permission_profile(
        &selected.materialized(),
        approval_policy,
        ApprovalPromptContext::new(reviewer, None),
        &policy,
        &cwd,
        args.features.contains(&FeatureArg::ExecPermissionApprovals),
        args.features.contains(&FeatureArg::RequestPermissionsTool),
    );
    let state = PermissionsState::new(instructions);
    let output = match &args.diff {
        None => {
            let text = model_text(&state.instructions().render());
            if args.json {
                serde_json::to_string(&TextJson {
                    text: &text,
                    snapshot: state.snapshot(),
                })?
            } else {
                text
            }
        }
        Some(path) => {
            let previous = read_snapshot(path)?;
            let update = state.render_diff(PreviousSectionState::Known(&previous));
            let text = update
                .as_ref()
                .map(|update| model_text(&update.render()))
                .unwrap_or_default();
            if args.json {
                serde_json::to_string(&DiffJson {
                    update: update.as_ref().map_or("none", |update| update.kind()),
                    text: &text,
                    snapshot: state.snapshot(),
                })?
            } else {
                text
            }
        }
    };
    Ok(output)
}

/// The developer-message text with every control and invisible formatting character
/// replaced by a visible escape (`\x1b`, `\u{202e}`), line breaks kept. The text is meant
/// for a model, but it names the working directory and rules paths, which anyone can
/// choose, and a harness may show it on a terminal: an escape there must stay visible
/// text (issue 17). Tabs are shown as `\t` too. The snapshot (`--json`) keeps the raw
/// values, since it is compared, not shown.
fn model_text(text: &str) -> String {
    crate::terminal_text::lines(text)
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

/// `-r` files, or the rules files in use: `$AIRLOCK_HOME/rules/*.rules`, then the trusted
/// project's `.airlock/rules/*.rules` (spec 02 §Policy files in use).
fn load_rules(
    args: &InstructionsArgs,
    config: &AirlockConfig,
    env: &ConfigEnv,
    cwd: &Path,
) -> anyhow::Result<airlock_execpolicy::Policy> {
    let files = if args.rules.is_empty() {
        let project = trusted_project(config, cwd);
        default_policy_files(&env.airlock_home, project.as_deref())
            .context("cannot list the rules files")?
    } else {
        args.rules.clone()
    };
    let mut parser = PolicyParser::new();
    for file in &files {
        parser.load_file(file)?;
    }
    Ok(parser.build())
}

/// The nearest ancestor of `cwd` (itself included) with `trust_level = "trusted"` under
/// `[projects."<abs path>"]` (spec 10 §Configuration).
fn trusted_project(config: &AirlockConfig, cwd: &Path) -> Option<PathBuf> {
    let projects = config.table.get("projects")?.as_table()?;
    cwd.ancestors()
        .find(|dir| {
            projects
                .get(dir.to_string_lossy().as_ref())
                .and_then(|project| project.get("trust_level"))
                .and_then(|level| level.as_str())
                == Some("trusted")
        })
        .map(Path::to_path_buf)
}

/// The previous snapshot: the file's JSON, or its `snapshot` field when it is an earlier
/// `--json` output.
fn read_snapshot(path: &Path) -> anyhow::Result<PermissionsSnapshot> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the previous snapshot {}", path.display()))?;
    let mut value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    if let Some(snapshot) = value.get_mut("snapshot") {
        value = snapshot.take();
    }
    // serde's own message names Rust types ("untagged enum PermissionsSnapshot"): say what
    // shape is expected instead.
    PermissionsSnapshot::from_value(value).map_err(|_| {
        anyhow::anyhow!(
            "{} is not a permissions snapshot: expected the output of `airlock instructions \
             --json` (or its `snapshot` field): an object {{\"instructions\": \"sha1:…\", \
             \"approved_command_prefixes\": [[\"git\", \"pull\"], …]}}, or a \"sha1:…\" \
             string",
            path.display()
        )
    })
}
