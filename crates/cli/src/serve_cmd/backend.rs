//! The CLI side of `airlock serve`: sessions built as `airlock exec` builds them
//! ([`crate::session_setup`]), `policy/explain` as `airlock explain --json`,
//! `instructions/render` as `airlock instructions --json`, `command/exec` as `airlock sandbox`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use airlock_app_server::Backend;
use airlock_app_server::BoxFuture;
use airlock_app_server::ThreadContext;
use airlock_app_server::ThreadSetup;
use airlock_app_server_protocol::CommandExecParams;
use airlock_app_server_protocol::CommandExecResponse;
use airlock_app_server_protocol::InstructionsRenderResponse;
use airlock_app_server_protocol::PolicyExplainParams;
use airlock_app_server_protocol::ThreadStartParams;
use airlock_approval::ApprovalEvent;
use airlock_core::OutputMode;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::SandboxPermissions;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

/// The backend; holds what does not change while the server runs.
pub(crate) struct CliBackend {
    airlock_home: PathBuf,
}

impl CliBackend {
    /// # Errors
    /// Neither `AIRLOCK_HOME` nor `HOME` says where Airlock's home is.
    pub(crate) fn new() -> anyhow::Result<Self> {
        Ok(Self {
            airlock_home: crate::common::config_env()?.airlock_home,
        })
    }
}

/// `thread/start.config` as `-c key=value` overrides (values written as TOML).
fn overrides(params: &ThreadStartParams) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    if let Some(policy) = &params.approval_policy {
        let value = serde_json::to_value(policy).map_err(|e| e.to_string())?;
        out.push(format!(
            "approval_policy={}",
            toml_value("approvalPolicy", value)?
        ));
    }
    for (key, value) in params.config.iter().flatten() {
        out.push(format!(
            "{key}={}",
            toml_value(&format!("config.{key}"), value.clone())?
        ));
    }
    Ok(out)
}

fn toml_value(field: &str, value: Value) -> Result<String, String> {
    toml::Value::try_from(value)
        .map(|v| v.to_string())
        .map_err(|e| format!("{field}: not a TOML value ({e})"))
}

/// The flags a thread's start params mean for `explain` / `instructions`.
fn thread_flags(params: &ThreadStartParams) -> Result<Vec<OsString>, String> {
    let mut argv: Vec<OsString> = Vec::new();
    if let Some(cwd) = &params.cwd {
        argv.extend(["-C".into(), cwd.clone().into_os_string()]);
    }
    if let Some(profile) = &params.permission_profile {
        argv.extend(["-P".into(), profile.into()]);
    }
    for rule in params.rules.iter().flatten() {
        argv.extend(["-r".into(), rule.clone().into_os_string()]);
    }
    if let Some(reviewer) = params.approvals_reviewer {
        let name = match reviewer {
            ApprovalsReviewer::User => "user",
            ApprovalsReviewer::AutoReview => "auto_review",
        };
        argv.extend(["--reviewer".into(), name.into()]);
    }
    for value in overrides(params)? {
        argv.extend(["-c".into(), value.into()]);
    }
    Ok(argv)
}

impl Backend for CliBackend {
    fn airlock_home(&self) -> PathBuf {
        self.airlock_home.clone()
    }

    fn start_thread(
        &self,
        thread_id: &str,
        params: &ThreadStartParams,
        events: UnboundedSender<ApprovalEvent>,
    ) -> Result<ThreadSetup, String> {
        let cwd = crate::common::working_directory(params.cwd.as_deref())
            .map_err(|e| format!("cwd: {e}"))?;
        let overrides = overrides(params)?;
        let parts = crate::session_setup::prepare_session(crate::session_setup::SessionRequest {
            session_id: thread_id.to_owned(),
            cwd: cwd.clone(),
            overrides: &overrides,
            approval: params.approval_policy,
            reviewer: params.approvals_reviewer,
            profile: params.permission_profile.as_deref(),
            rules: params.rules.clone().unwrap_or_default(),
            strict_auto_review: false,
            output: OutputMode::Capture,
        })
        .map_err(|e| format!("{e:#}"))?;
        let approval_policy = parts.options.approval_policy;
        let permission_profile = parts.selected.compiled.active.id.clone();
        let mut warnings = parts.selected.warnings.clone();
        // `config: {"environment": {"type": "remote", ...}}` selects an exec-server (spec 09).
        let session = crate::session_setup::SessionParts::session(
            parts.options,
            parts.approval_config,
            parts.exec_policy,
            parts.remote,
            Some(events),
        )
        // A long-running server: bubblewrap is started from here, from what the thread
        // already computed for its profile (issue 13 item 3).
        .with_launch_cache();
        warnings.extend(session.warnings().iter().cloned());
        Ok(ThreadSetup {
            session,
            approval_policy,
            permission_profile,
            cwd,
            warnings,
        })
    }

    fn explain(
        &self,
        thread: &ThreadContext,
        params: &PolicyExplainParams,
    ) -> Result<Value, String> {
        let mut argv: Vec<OsString> = vec!["explain".into(), "--json".into()];
        let mut start = thread.params.clone();
        if let Some(dir) = &params.cwd {
            start.cwd = Some(start.cwd.unwrap_or_default().join(dir));
        }
        argv.extend(thread_flags(&start)?);
        if params.sandbox_permissions == Some(SandboxPermissions::RequireEscalated) {
            argv.extend(["--sandbox-permissions".into(), "require_escalated".into()]);
        }
        argv.push("--".into());
        argv.extend(params.command.iter().map(OsString::from));
        crate::explain_cmd::explain_json(argv).map_err(|e| format!("{e:#}"))
    }

    fn render_instructions(
        &self,
        thread: &ThreadContext,
    ) -> Result<InstructionsRenderResponse, String> {
        let mut argv: Vec<OsString> = vec!["instructions".into(), "--json".into()];
        argv.extend(thread_flags(&thread.params)?);
        let value = crate::instructions_cmd::render_json(argv).map_err(|e| format!("{e:#}"))?;
        Ok(InstructionsRenderResponse {
            text: value
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            snapshot: value.get("snapshot").cloned().unwrap_or(Value::Null),
        })
    }

    fn command_exec(
        &self,
        params: CommandExecParams,
    ) -> BoxFuture<'static, Result<CommandExecResponse, String>> {
        Box::pin(async move {
            let exe = std::env::current_exe()
                .map_err(|e| format!("cannot locate the airlock executable: {e}"))?;
            let mut command = tokio::process::Command::new(exe);
            command.arg("sandbox");
            if let Some(cwd) = &params.cwd {
                command.arg("-C").arg(cwd);
            }
            if let Some(profile) = &params.permission_profile {
                command.arg("-P").arg(profile);
            }
            command
                .arg("--")
                .args(&params.command)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true);
            let mut child = command
                .spawn()
                .map_err(|e| format!("cannot start the sandbox: {e}"))?;
            let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
            // Both streams are read to their end but only their first MiB is kept (red-team
            // F8: a command printing gigabytes never fills this server's memory).
            let waited = async {
                let (status, stdout, stderr) =
                    tokio::join!(child.wait(), read_capped(stdout), read_capped(stderr));
                Ok::<_, std::io::Error>((status?, stdout?, stderr?))
            };
            let (status, stdout, stderr) = match params.timeout_ms {
                Some(ms) => tokio::time::timeout(Duration::from_millis(ms), waited)
                    .await
                    .map_err(|_| format!("timed out after {ms} ms; the command was killed"))?,
                None => waited.await,
            }
            .map_err(|e| format!("waiting for the command failed: {e}"))?;
            Ok(CommandExecResponse {
                exit_code: exit_code(status),
                stdout: String::from_utf8_lossy(&stdout.0).into_owned(),
                stderr: String::from_utf8_lossy(&stderr.0).into_owned(),
                stdout_truncated_bytes: stdout.1,
                stderr_truncated_bytes: stderr.1,
            })
        })
    }
}

/// Reads `stream` to its end; keeps its first [`airlock_core::process::MAX_CAPTURED_BYTES`] and counts
/// the bytes past them.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(
    stream: Option<R>,
) -> std::io::Result<(Vec<u8>, u64)> {
    use tokio::io::AsyncReadExt as _;
    let (mut kept, mut dropped) = (Vec::new(), 0_u64);
    let Some(mut stream) = stream else {
        return Ok((kept, dropped));
    };
    let mut buffer = vec![0_u8; 8192];
    loop {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            return Ok((kept, dropped));
        }
        let chunk = buffer.get(..read).unwrap_or_default();
        let room = airlock_core::process::MAX_CAPTURED_BYTES
            .saturating_sub(kept.len())
            .min(read);
        kept.extend_from_slice(chunk.get(..room).unwrap_or_default());
        dropped += u64::try_from(read - room).unwrap_or(u64::MAX);
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
