//! `airlock mcp`: the MCP server on stdio (spec 13). Options as `exec` (`-a`, `-P`, `-C`,
//! `-r`, `-c`, `--reviewer`), so an MCP client's config picks the policy. The session is
//! built as `airlock exec` builds its own, with captured output (stdout is the protocol
//! channel; logs go to stderr). Exit 0 at end of input; 1 when the configuration cannot be
//! used (before any message is read).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_approval::ApprovalConfig;
use airlock_core::ExecPolicyManager;
use airlock_core::ExecPolicySources;
use airlock_core::OutputMode;
use airlock_core::SandboxSettings;
use airlock_core::SessionConfig;
use airlock_core::SessionOptions;
use airlock_core::ToolEnvironment;
use airlock_core::audit::AUDIT_LOG_RELATIVE_PATH;
use airlock_core::extra_safe_commands_from_config;
use airlock_permissions::load_config;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_sandbox::ShellEnvironmentPolicy;
use anyhow::Context as _;
use clap::Args;
use clap::ValueEnum;

/// Arguments of `airlock mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Approval policy (default: `approval_policy` from the config, else `on-request`).
    #[arg(short = 'a', long = "ask-for-approval", value_name = "POLICY")]
    approval: Option<PolicyArg>,

    /// Permission profile id; default: the configured one.
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    profile: Option<String>,

    /// Working directory (the first workspace root); default: the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,

    /// A `.rules` file (repeatable); replaces `$AIRLOCK_HOME/rules/*.rules`.
    #[arg(short = 'r', long = "rules", value_name = "PATH")]
    rules: Vec<PathBuf>,

    /// Who answers approvals the client cannot (default: `approvals_reviewer` from the
    /// config, else `user`, i.e. the MCP client through elicitation).
    #[arg(long, value_name = "R")]
    reviewer: Option<ReviewerArg>,

    /// Config override `dotted.key=value`; repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// Print the `mcpServers` entry that starts this server with these options (the
    /// working directory and rules paths made absolute), then exit.
    #[arg(long)]
    print_config: bool,
}

/// `-a` values (as `airlock exec`).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum PolicyArg {
    Untrusted,
    OnRequest,
    OnFailure,
    Never,
}

/// `--reviewer` values (as `airlock exec`).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ReviewerArg {
    User,
    #[value(name = "auto_review")]
    AutoReview,
}

/// Runs `airlock mcp`.
pub fn run(args: McpArgs) -> ExitCode {
    if args.print_config {
        return match print_config(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => crate::report_error(&error),
        };
    }
    let parts = match session_parts(&args) {
        Ok(parts) => parts,
        Err(error) => return crate::report_error(&error),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            return crate::report_error(&anyhow::anyhow!(
                "cannot start the async runtime: {error}"
            ));
        }
    };
    let served = runtime.block_on(airlock_mcp::serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
        parts,
        airlock_jsonrpc::DEFAULT_MAX_LINE_BYTES,
    ));
    // A client that went away before the last answer is the normal end of a stdio server.
    if let Err(error) = served {
        eprintln!("airlock mcp: {error}");
    }
    ExitCode::SUCCESS
}

/// `--print-config`: `{"mcpServers": {"airlock": {"command", "args"}}}` for this executable.
fn print_config(args: &McpArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("cannot locate the airlock executable")?;
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    let current = std::env::current_dir().context("cannot read the current directory")?;
    let mut argv = vec!["mcp".to_owned(), "-C".to_owned(), cwd.display().to_string()];
    if let Some(policy) = args.approval {
        let name = policy
            .to_possible_value()
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default();
        argv.extend(["-a".to_owned(), name]);
    }
    if let Some(profile) = &args.profile {
        argv.extend(["-P".to_owned(), profile.clone()]);
    }
    for rules in &args.rules {
        let absolute = airlock_permissions::normalize_lexically(&current.join(rules));
        argv.extend(["-r".to_owned(), absolute.display().to_string()]);
    }
    if let Some(reviewer) = args.reviewer {
        let name = reviewer
            .to_possible_value()
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default();
        argv.extend(["--reviewer".to_owned(), name]);
    }
    for overriding in &args.overrides {
        argv.extend(["-c".to_owned(), overriding.clone()]);
    }
    // A template, so `command` comes before `args` as in the clients' documentation.
    println!(
        "{{\n  \"mcpServers\": {{\n    \"airlock\": {{\n      \"command\": {},\n      \"args\": {}\n    }}\n  }}\n}}",
        serde_json::Value::String(exe.display().to_string()),
        serde_json::to_string(&argv)?
    );
    Ok(())
}

/// The session of the connection, as `airlock exec` configures its own.
fn session_parts(args: &McpArgs) -> anyhow::Result<airlock_mcp::SessionParts> {
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    let env = crate::common::config_env()?;
    let config = load_config(&env, &args.overrides)?;
    let session_config = SessionConfig::from_config(&config)?;
    let approval_policy = match args.approval {
        Some(PolicyArg::Untrusted) => AskForApproval::UnlessTrusted,
        Some(PolicyArg::OnRequest | PolicyArg::OnFailure) => AskForApproval::OnRequest,
        Some(PolicyArg::Never) => AskForApproval::Never,
        None => session_config.approval_policy,
    };
    let reviewer = match args.reviewer {
        Some(ReviewerArg::User) => ApprovalsReviewer::User,
        Some(ReviewerArg::AutoReview) => ApprovalsReviewer::AutoReview,
        None => session_config.approvals_reviewer,
    };
    let selected = crate::common::select_profile(&config, args.profile.as_deref(), &cwd)?;
    crate::common::refuse_root_workspace(&cwd, selected.symbolic())?;
    let managed_network =
        crate::managed_network::effective(&config, &env, &selected, &cwd, args.rules.clone())
            .map_err(|error| anyhow::anyhow!("{error:#}"))?;
    for warning in &selected.warnings {
        eprintln!(
            "airlock mcp: warning: {}",
            crate::terminal_text::safe(warning)
        );
    }
    let env_vars: BTreeMap<String, String> = ShellEnvironmentPolicy::from_config(&config.table)?
        .apply(std::env::vars_os())
        .into_iter()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let exec_policy = ExecPolicyManager::load(&ExecPolicySources::for_config(
        &config,
        &env.airlock_home,
        &cwd,
        args.rules.clone(),
    ));
    let approval_config = ApprovalConfig::load(&config.table, &config.origin, &env.airlock_home)?;
    let linux_helper = std::env::current_exe().context("cannot locate the airlock executable")?;
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_millis())
        .unwrap_or_default();
    let options = SessionOptions {
        session_id: format!("mcp-{}-{millis}", std::process::id()),
        approval_policy,
        approvals_reviewer: reviewer,
        strict_auto_review: false,
        environment: ToolEnvironment {
            environment_id: None,
            cwd: cwd.clone(),
            workspace_roots: selected.workspace_roots.clone(),
            permission_profile: selected.symbolic().clone(),
        },
        env: env_vars,
        extra_safe_commands: extra_safe_commands_from_config(&config)
            .map_err(anyhow::Error::msg)?,
        sandbox: SandboxSettings {
            linux_helper: Some(linux_helper),
            manager: airlock_sandbox::SandboxManager {
                bwrap_path: airlock_sandbox::bwrap_path_from_config(&config.table)?,
                ..airlock_sandbox::SandboxManager::default()
            },
            // Host rules run behind a per-launch proxy (unlisted hosts refused), never with
            // the whole network (spec 12).
            managed_network_active: managed_network.is_some(),
            managed_network,
            ..SandboxSettings::default()
        },
        output: OutputMode::Capture,
        amendment_file: Some(airlock_execpolicy::default_amendment_file(
            &env.airlock_home,
        )),
        allow_rules_bypass_sandbox: airlock_core::unsandboxed::allow_rules_bypass_sandbox(&config)
            .map_err(anyhow::Error::msg)?,
        audit_log: session_config
            .audit_enabled
            .then(|| env.airlock_home.join(AUDIT_LOG_RELATIVE_PATH)),
    };
    Ok(airlock_mcp::SessionParts {
        options,
        approval_config,
        exec_policy,
    })
}
