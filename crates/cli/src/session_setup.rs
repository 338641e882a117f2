//! Building a core session from the configuration, shared by `airlock exec` (one call) and
//! `airlock serve` (one session per thread): config, profile, environment, exec policy,
//! approval config and sandbox settings, resolved the same way for both.

use std::collections::BTreeMap;
use std::path::PathBuf;

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
use airlock_permissions::AirlockConfig;
use airlock_permissions::SelectedPermissions;
use airlock_permissions::load_config;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_sandbox::ShellEnvironmentPolicy;

/// What the caller chose (flags of `exec`, params of `thread/start`); `None` = configured.
pub(crate) struct SessionRequest<'a> {
    /// The session id (audit log).
    pub session_id: String,
    /// The absolute, existing working directory.
    pub cwd: PathBuf,
    /// `-c key=value` overrides.
    pub overrides: &'a [String],
    /// The approval policy.
    pub approval: Option<AskForApproval>,
    /// The reviewer.
    pub reviewer: Option<ApprovalsReviewer>,
    /// The permission profile id.
    pub profile: Option<&'a str>,
    /// `.rules` files replacing the configured ones.
    pub rules: Vec<PathBuf>,
    /// Strict automatic review.
    pub strict_auto_review: bool,
    /// Output streaming.
    pub output: OutputMode,
}

/// Everything needed for `Session::new`, plus what callers report.
pub(crate) struct SessionParts {
    /// The options.
    pub options: SessionOptions,
    /// The approval configuration.
    pub approval_config: ApprovalConfig,
    /// The exec policy.
    pub exec_policy: ExecPolicyManager,
    /// The selected profile (id, warnings).
    pub selected: SelectedPermissions,
    /// Whether the profile lets the network out.
    pub network_enabled: bool,
    /// The remote environment `[environment]` selects (spec 09), `None` for this host.
    pub remote: Option<airlock_core::remote::RemoteEnvironment>,
}

impl SessionParts {
    /// The session, running its commands on the exec-server when the environment is remote.
    pub(crate) fn session(
        options: SessionOptions,
        approval_config: ApprovalConfig,
        exec_policy: ExecPolicyManager,
        remote: Option<airlock_core::remote::RemoteEnvironment>,
        events: Option<tokio::sync::mpsc::UnboundedSender<airlock_approval::ApprovalEvent>>,
    ) -> airlock_core::Session {
        let session = airlock_core::Session::new(options, approval_config, exec_policy, events);
        match remote {
            Some(remote) => session.with_remote_environment(std::sync::Arc::new(
                airlock_core::remote::ExecServerClient::new(remote),
            )),
            None => session,
        }
    }
}

/// Resolves a session as `airlock exec` does.
///
/// # Errors
/// Any configuration, profile, environment or rules problem, naming it.
pub(crate) fn prepare_session(request: SessionRequest<'_>) -> anyhow::Result<SessionParts> {
    let cwd = request.cwd;
    let env = crate::common::config_env()?;
    let config = load_config(&env, request.overrides)?;
    let session_config = SessionConfig::from_config(&config)?;
    let approval_policy = request.approval.unwrap_or(session_config.approval_policy);
    let reviewer = request
        .reviewer
        .unwrap_or(session_config.approvals_reviewer);
    let selected = crate::common::select_profile(&config, request.profile, &cwd)?;
    crate::common::refuse_root_workspace(&cwd, selected.symbolic())?;
    let env_vars = command_environment(&config)?;
    let network_enabled = selected.materialized().network().is_enabled();
    let extra_safe_commands = extra_safe_commands_from_config(&config)?;
    let exec_policy = ExecPolicyManager::load(&ExecPolicySources::for_config(
        &config,
        &env.airlock_home,
        &cwd,
        request.rules.clone(),
    ));
    let approval_config = ApprovalConfig::load(&config.table, &config.origin, &env.airlock_home)?;
    let remote = airlock_core::remote::remote_environment_from_config(&config)?;
    let linux_helper = std::env::current_exe()
        .map_err(|error| anyhow::anyhow!("cannot locate the airlock executable: {error}"))?;
    // A profile with host rules (spec 12) runs behind the managed proxy: never with the
    // whole network. Without a session proxy (`exec` starts one that can ask), each launch
    // starts its own, which refuses unlisted hosts.
    let managed_network =
        crate::managed_network::effective(&config, &env, &selected, &cwd, request.rules.clone())
            .map_err(|error| anyhow::anyhow!("{error:#}"))?;
    // An executor gets the profile, not host rules: running there would mean the whole
    // network, so a managed network and a remote environment are refused together.
    anyhow::ensure!(
        !(remote.is_some() && managed_network.is_some()),
        "the profile limits the network to listed hosts ([permissions.<id>.network] domains), \
         which a remote environment cannot enforce yet; use a profile without `domains` or a \
         local environment"
    );
    let options = SessionOptions {
        session_id: request.session_id,
        approval_policy,
        approvals_reviewer: reviewer,
        strict_auto_review: request.strict_auto_review,
        environment: ToolEnvironment {
            environment_id: remote.as_ref().map(|_| "remote".to_owned()),
            cwd: cwd.clone(),
            workspace_roots: selected.workspace_roots.clone(),
            permission_profile: selected.symbolic().clone(),
        },
        env: env_vars,
        extra_safe_commands,
        sandbox: SandboxSettings {
            linux_helper: Some(linux_helper),
            manager: airlock_sandbox::SandboxManager {
                bwrap_path: airlock_sandbox::bwrap_path_from_config(&config.table)?,
                ..airlock_sandbox::SandboxManager::default()
            },
            managed_network_active: managed_network.is_some(),
            managed_network,
            ..SandboxSettings::default()
        },
        output: request.output,
        amendment_file: Some(airlock_execpolicy::default_amendment_file(
            &env.airlock_home,
        )),
        allow_rules_bypass_sandbox: airlock_core::unsandboxed::allow_rules_bypass_sandbox(&config)
            .map_err(anyhow::Error::msg)?,
        audit_log: session_config
            .audit_enabled
            .then(|| env.airlock_home.join(AUDIT_LOG_RELATIVE_PATH)),
    };
    Ok(SessionParts {
        options,
        approval_config,
        exec_policy,
        selected,
        network_enabled,
        remote,
    })
}

/// The command's environment after `[shell_environment_policy]`; variables whose name or
/// value is not UTF-8 are left out.
///
/// # Errors
/// An invalid `[shell_environment_policy]`.
pub(crate) fn command_environment(
    config: &AirlockConfig,
) -> anyhow::Result<BTreeMap<String, String>> {
    let policy = ShellEnvironmentPolicy::from_config(&config.table)?;
    Ok(policy
        .apply(std::env::vars_os())
        .into_iter()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect())
}
