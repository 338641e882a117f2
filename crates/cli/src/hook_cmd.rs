//! `airlock hook claude-code|gemini`: Airlock as the policy engine behind a harness's own
//! pre-tool hook (spec 13). Reads one hook event on stdin, decides with the requirement
//! computation of `explain`, writes the harness's answer on stdout and exits 0; never runs
//! the command. A payload or configuration Airlock cannot use gives no decision (empty
//! stdout for Claude Code, `{}` for Gemini CLI; exit 0) and one line on stderr: never block
//! the harness on Airlock's own error, never allow on it either. `--print-config` prints the
//! settings snippet instead.

use std::io::Read as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_hooks::Harness;
use airlock_hooks::HookEvent;
use airlock_protocol::AskForApproval;
use clap::Args;
use clap::Subcommand;
use clap::ValueEnum;

/// Largest hook payload read (a Bash command plus the harness's metadata is far smaller).
const MAX_PAYLOAD_BYTES: u64 = 4 << 20;

/// Arguments of `airlock hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    harness: HarnessCommand,
}

#[derive(Debug, Subcommand)]
enum HarnessCommand {
    /// Claude Code `PreToolUse` / `PermissionRequest` hook for `Bash`.
    ClaudeCode {
        /// Answer `allow` in `PreToolUse` when Airlock needs no approval (default: no
        /// decision, so Claude Code's own permission rules still apply).
        #[arg(long)]
        allow_skip: bool,
        #[command(flatten)]
        common: CommonHookArgs,
    },
    /// Gemini CLI `BeforeTool` hook for `run_shell_command` (denies forbidden commands).
    Gemini {
        #[command(flatten)]
        common: CommonHookArgs,
    },
}

#[derive(Debug, Args)]
struct CommonHookArgs {
    /// Approval policy to judge by (default: `untrusted`, since the harness runs the
    /// command outside Airlock's sandbox; the config's `approval_policy` is not used).
    #[arg(short = 'a', long = "ask-for-approval", value_name = "POLICY")]
    approval: Option<PolicyArg>,

    /// Permission profile id; default: the configured one.
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    profile: Option<String>,

    /// A `.rules` file (repeatable); replaces the configured rules files.
    #[arg(short = 'r', long = "rules", value_name = "PATH")]
    rules: Vec<PathBuf>,

    /// Config override `dotted.key=value`; repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// Print the settings snippet that installs this hook (with these options), then exit.
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

impl PolicyArg {
    const fn policy(self) -> AskForApproval {
        match self {
            Self::Untrusted => AskForApproval::UnlessTrusted,
            Self::OnRequest | Self::OnFailure => AskForApproval::OnRequest,
            Self::Never => AskForApproval::Never,
        }
    }

    const fn name(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnRequest => "on-request",
            Self::OnFailure => "on-failure",
            Self::Never => "never",
        }
    }
}

/// Runs `airlock hook ...`; exit 0 except for `--print-config` failures.
pub fn run(args: HookArgs) -> ExitCode {
    let (harness, allow_skip, common) = match args.harness {
        HarnessCommand::ClaudeCode { allow_skip, common } => {
            (Harness::ClaudeCode, allow_skip, common)
        }
        HarnessCommand::Gemini { common } => (Harness::Gemini, false, common),
    };
    if common.print_config {
        return print_config(harness, allow_skip, &common);
    }
    let stdout = match answer(harness, allow_skip, &common) {
        Ok(stdout) => stdout,
        Err(message) => {
            eprintln!(
                "airlock hook: {message}; no decision (the harness decides as without this hook)"
            );
            airlock_hooks::no_decision(harness).to_owned()
        }
    };
    // A harness that closed stdout cannot read an answer anyway; exit 0 all the same.
    let _ = std::io::stdout().lock().write_all(stdout.as_bytes());
    ExitCode::SUCCESS
}

/// The exact stdout for the event on stdin, or the reason there is no decision.
fn answer(harness: Harness, allow_skip: bool, common: &CommonHookArgs) -> Result<String, String> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut input)
        .map_err(|error| format!("cannot read the hook payload on stdin: {error}"))?;
    if input.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(format!(
            "the hook payload is larger than {MAX_PAYLOAD_BYTES} bytes"
        ));
    }
    let event = airlock_hooks::parse_event(harness, &input).map_err(|error| error.to_string())?;
    let HookEvent::Shell { kind, command, cwd } = event else {
        return Ok(airlock_hooks::no_decision(harness).to_owned());
    };
    let env = crate::common::config_env().map_err(|error| error.to_string())?;
    let settings = airlock_hooks::DecideSettings {
        approval_policy: common.approval.map(PolicyArg::policy),
        profile: common.profile.clone(),
        rules: common.rules.clone(),
        overrides: common.overrides.clone(),
    };
    let verdict = airlock_hooks::decide(&settings, &env, &command, &cwd)
        .map_err(|error| error.to_string())?;
    for warning in &verdict.warnings {
        eprintln!(
            "airlock hook: warning: {}",
            crate::terminal_text::safe(warning)
        );
    }
    Ok(airlock_hooks::answer_for(kind, &verdict, allow_skip).stdout(harness))
}

/// `--print-config`: the snippet whose command is this executable with the same options
/// (rules paths made absolute: the harness runs the hook in the project's directory).
fn print_config(harness: Harness, allow_skip: bool, common: &CommonHookArgs) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => {
            eprintln!("airlock hook: cannot locate the airlock executable: {error}");
            return ExitCode::from(1);
        }
    };
    let current = std::env::current_dir().unwrap_or_default();
    let mut command = vec![
        exe.display().to_string(),
        "hook".to_owned(),
        match harness {
            Harness::ClaudeCode => "claude-code",
            Harness::Gemini => "gemini",
        }
        .to_owned(),
    ];
    if allow_skip {
        command.push("--allow-skip".to_owned());
    }
    if let Some(policy) = common.approval {
        command.extend(["-a".to_owned(), policy.name().to_owned()]);
    }
    if let Some(profile) = &common.profile {
        command.extend(["-P".to_owned(), profile.clone()]);
    }
    for rules in &common.rules {
        let absolute = airlock_permissions::normalize_lexically(&current.join(rules));
        command.extend(["-r".to_owned(), absolute.display().to_string()]);
    }
    for overriding in &common.overrides {
        command.extend(["-c".to_owned(), overriding.clone()]);
    }
    print!("{}", airlock_hooks::print_config(harness, &command));
    ExitCode::SUCCESS
}
