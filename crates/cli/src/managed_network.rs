//! The managed network of a launch (spec 12): the profile's lists plus the `network_rule`s
//! of the loaded `.rules`, and the proxy that serves them for the lifetime of one
//! sandboxed command (`airlock sandbox`, and the `airlock linux-sandbox` helper that
//! `airlock exec` launches).

use std::path::Path;
use std::path::PathBuf;

use airlock_core::ExecPolicyManager;
use airlock_core::ExecPolicySources;
use airlock_execpolicy::Decision;
use airlock_linux_sandbox::ProxyMount;
use airlock_network_proxy::NetworkPolicy;
use airlock_network_proxy::ProxyHandle;
use airlock_permissions::AirlockConfig;
use airlock_permissions::ConfigEnv;
use airlock_permissions::SelectedPermissions;
use airlock_permissions::network::ManagedNetwork;
use anyhow::Context;

/// The effective managed network of `selected`: `None` when the profile has none.
/// `network_rule(...)` lines of the rules files in use are applied in load order; when
/// those files cannot be loaded the launch is refused (a lost deny rule must not widen
/// anything).
///
/// # Errors
/// The rules cannot be loaded, or a rule's host is no valid pattern.
pub(crate) fn effective(
    config: &AirlockConfig,
    env: &ConfigEnv,
    selected: &SelectedPermissions,
    cwd: &Path,
    explicit_rules: Vec<PathBuf>,
) -> anyhow::Result<Option<ManagedNetwork>> {
    let Some(mut network) = selected.compiled.managed_network.clone() else {
        return Ok(None);
    };
    let manager = ExecPolicyManager::load(&ExecPolicySources::for_config(
        config,
        &env.airlock_home,
        cwd,
        explicit_rules,
    ));
    let Some(policy) = manager.policy() else {
        anyhow::bail!(
            "the managed network needs the network_rule lines of the rules files, which could not be loaded: {}; fix the rules file",
            manager.warnings().join("; ")
        );
    };
    for rule in policy.network_rules() {
        let allow = match rule.decision {
            Decision::Allow => true,
            Decision::Forbidden => false,
            // `prompt` is parsed and ignored (spec 12 §Config).
            Decision::Prompt => continue,
        };
        network
            .apply_network_rule(&rule.host, allow)
            .with_context(|| format!("network_rule(host={:?}) is not a valid host", rule.host))?;
    }
    Ok(Some(network))
}

/// A proxy serving one launch, with its private socket directory.
pub(crate) struct RunningProxy {
    dir: tempfile::TempDir,
    handle: ProxyHandle,
}

impl RunningProxy {
    /// Starts the proxy for `network` on a Unix socket in a new private directory (under
    /// `$XDG_RUNTIME_DIR` when set, else the temporary directory). No TCP listener.
    ///
    /// # Errors
    /// The directory or socket cannot be created.
    pub(crate) fn start(network: ManagedNetwork) -> anyhow::Result<Self> {
        Self::start_with(NetworkPolicy::new(network))
    }

    /// [`Self::start`] with a policy of the caller's (e.g. one with a decider).
    ///
    /// # Errors
    /// The directory or socket cannot be created.
    pub(crate) fn start_with(policy: NetworkPolicy) -> anyhow::Result<Self> {
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute() && dir.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("airlock-net-")
            .tempdir_in(&base)
            .with_context(|| {
                format!(
                    "cannot create the network proxy directory in {}",
                    base.display()
                )
            })?;
        let socket = dir
            .path()
            .join(airlock_linux_sandbox::bridge::PROXY_SOCKET_NAME);
        let handle = airlock_network_proxy::start(policy, &socket)
            .with_context(|| format!("cannot start the network proxy on {}", socket.display()))?;
        Ok(Self { dir, handle })
    }

    /// The private directory holding the proxy socket.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What the launch binds into the sandbox.
    ///
    /// # Errors
    /// The `airlock` executable cannot be located.
    pub(crate) fn mount(&self) -> anyhow::Result<ProxyMount> {
        Ok(ProxyMount {
            socket_dir: self.dir.path().to_path_buf(),
            bridge_exe: std::env::current_exe().context("cannot locate the airlock executable")?,
        })
    }

    /// [`Self::finish`], and appends one audit line per blocked request and per network
    /// approval decision to `audit` (host, port, protocol, decision, reason; never URLs,
    /// paths or bodies: the proxy never records them).
    pub(crate) fn finish_with_audit(
        self,
        audit: Option<&airlock_core::AuditLog>,
        session_id: &str,
    ) {
        if let Some(audit) = audit {
            let time = airlock_core::rfc3339_utc(std::time::SystemTime::now());
            let entry = |protocol: &str, host: &str, port: u16, decision: &str, reason: &str| {
                serde_json::json!({
                    "time": time,
                    "session_id": session_id,
                    "call_id": format!("network#{protocol}#{host}#{port}"),
                    "type": "network_request",
                    "host": host,
                    "port": port,
                    "protocol": protocol,
                    "decision": decision,
                    "reason": reason,
                    "source": "proxy",
                })
            };
            for blocked in self.handle.blocked() {
                let refusal = &blocked.refusal;
                let line = entry(
                    blocked.protocol,
                    &refusal.host,
                    refusal.port,
                    "blocked",
                    refusal.reason.code(),
                );
                if let Err(error) = audit.append(&line) {
                    eprintln!("airlock: warning: {error}");
                }
            }
            for (request, decision) in self.handle.policy().approval_log() {
                let line = entry(
                    request.protocol.label(),
                    &request.host,
                    request.port,
                    &format!("{decision:?}"),
                    "not_allowed",
                );
                if let Err(error) = audit.append(&line) {
                    eprintln!("airlock: warning: {error}");
                }
            }
        }
        self.finish();
    }

    /// Prints each refused destination once (the command's failure hint), then stops.
    pub(crate) fn finish(self) {
        let mut seen = Vec::new();
        for blocked in self.handle.blocked() {
            let key = (blocked.refusal.host.clone(), blocked.refusal.port);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            eprintln!(
                "airlock: blocked by the sandbox's network policy ({}): {}",
                blocked.protocol,
                blocked.refusal.message()
            );
        }
        self.handle.stop();
    }
}
