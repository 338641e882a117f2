//! The audit log: one JSON line per tool call in `$AIRLOCK_HOME/log/audit.jsonl` (spec 10
//! §Audit log). It never contains environment variable values: the record is built from the
//! argv, the policy evaluation and the orchestrator's trace, never from the command's
//! environment.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use airlock_execpolicy::Decision;
use airlock_protocol::ExecApprovalRequirement;
use serde::Serialize;

use crate::audit_time::rfc3339_utc;
use crate::orchestrator::CallTrace;
use crate::orchestrator::ToolError;
use crate::requirement::DangerSummary;
use crate::requirement::InnerRuleMatch;
use crate::requirement::PromptCause;
use crate::requirement::RequirementOutcome;
use crate::requirement::SegmentVerdict;
use airlock_sandbox::ExecOutput;

/// The audit file under `$AIRLOCK_HOME` (spec 10 §Configuration).
pub const AUDIT_LOG_RELATIVE_PATH: &str = "log/audit.jsonl";

/// One line of the audit log (spec 10 §Audit log: time, session, turn, call id, cwd, command,
/// segments, matched rules, heuristics, requirement, reviewer source and decision with timing,
/// each attempt, retry reason, amendments written).
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    /// When the call ended (RFC 3339, UTC).
    pub time: String,
    /// The session id.
    pub session_id: String,
    /// The turn id.
    pub turn_id: String,
    /// The tool call id.
    pub call_id: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// The argv as proposed.
    pub command: Vec<String>,
    /// What the policy layer found; `None` when the command could not be evaluated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyEvaluation>,
    /// The orchestrator's record: requirement, approvals, attempts, retry reason, amendments.
    #[serde(flatten)]
    pub trace: CallTrace,
    /// The rules file accepted amendments were appended to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amendment_file: Option<PathBuf>,
    /// How the call ended.
    pub outcome: CallOutcome,
}

/// The policy layer's evaluation of the command (spec 03), without any variable values.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyEvaluation {
    /// Plain segments (argv lists).
    pub segments: Vec<Vec<String>>,
    /// Whether the script is plain.
    pub plain: bool,
    /// Per segment: rule matches or the heuristic verdict, and known-safe.
    pub matched_rules: Vec<SegmentVerdict>,
    /// `forbidden`/`prompt` rules matched through the deny view.
    pub deny_view_matches: Vec<InnerRuleMatch>,
    /// Heuristic findings.
    pub heuristics: Heuristics,
    /// The strictest decision.
    pub decision: Decision,
    /// Set when the exec policy could not be loaded (every command needs approval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_unavailable: Option<String>,
    /// The requirement computed from all of the above.
    pub computed_requirement: ExecApprovalRequirement,
    /// What running it outside the sandbox would run (issue 11): why it stays confined,
    /// or that it runs workspace code unconfined.
    #[serde(skip_serializing_if = "crate::unsandboxed::UnsandboxedReview::is_empty")]
    pub unsandboxed: crate::unsandboxed::UnsandboxedReview,
}

/// Heuristic findings of the policy layer.
#[derive(Debug, Clone, Serialize)]
pub struct Heuristics {
    /// The first dangerous command found, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dangerous: Option<DangerSummary>,
    /// Names (never values) of code-loading variables assigned by the script.
    pub code_loading_variables: Vec<String>,
    /// Why the decision is at least `prompt`.
    pub prompt_causes: Vec<PromptCause>,
}

impl PolicyEvaluation {
    /// The audit view of `outcome` (drops the parse notes and assignment values).
    #[must_use]
    pub fn from_outcome(outcome: &RequirementOutcome) -> Self {
        Self {
            segments: outcome.parsed.segments.clone(),
            plain: outcome.parsed.plain,
            matched_rules: outcome.segments.clone(),
            deny_view_matches: outcome.deny_view_matches.clone(),
            heuristics: Heuristics {
                dangerous: outcome.dangerous.clone(),
                code_loading_variables: outcome.code_loading_variables.clone(),
                prompt_causes: outcome.prompt_causes.clone(),
            },
            decision: outcome.decision,
            policy_unavailable: outcome.policy_unavailable.clone(),
            computed_requirement: outcome.requirement.clone(),
            unsandboxed: outcome.unsandboxed.clone(),
        }
    }
}

/// How a call ended.
///
/// JSON: `{"status":"ran","exit_code":0}`, `{"status":"sandbox_denied","exit_code":1}`,
/// `{"status":"rejected","message":"...","interrupts_turn":false}`,
/// `{"status":"unrunnable","exit_code":127,"message":"..."}`, `{"status":"error","message":"..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CallOutcome {
    /// The command ran (its last attempt) and exited with `exit_code`.
    Ran {
        /// The exit code.
        exit_code: i32,
    },
    /// The sandbox denied the command and it was not retried.
    SandboxDenied {
        /// The exit code of the denied attempt.
        exit_code: i32,
    },
    /// Refused before running (forbidden, denied, timed out, aborted).
    Rejected {
        /// The model-visible reason.
        message: String,
        /// `true` for an abort.
        interrupts_turn: bool,
    },
    /// Never started: the program is not found or cannot be executed (checked before
    /// policy and sandbox, so nothing ran); `exit_code` is the shell's 127 or 126.
    Unrunnable {
        /// 127 (not found) or 126 (not executable).
        exit_code: i32,
        /// Why, e.g. `command not found: nosuchcmd`.
        message: String,
    },
    /// Could not be run confined, or could not be evaluated.
    Error {
        /// What went wrong.
        message: String,
    },
}

impl CallOutcome {
    /// The outcome of an orchestrator result.
    #[must_use]
    pub fn from_result(result: &Result<ExecOutput, ToolError>) -> Self {
        match result {
            Ok(output) => Self::Ran {
                exit_code: output.exit_code,
            },
            Err(ToolError::SandboxDenied { output, .. }) => Self::SandboxDenied {
                exit_code: output.exit_code,
            },
            Err(ToolError::Rejected {
                message,
                interrupts_turn,
            }) => Self::Rejected {
                message: message.clone(),
                interrupts_turn: *interrupts_turn,
            },
            Err(error @ ToolError::Execution(_)) => Self::Error {
                message: error.to_string(),
            },
        }
    }
}

/// Where audit records go: one JSON object per line, appended (spec 10 §Audit log).
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    /// The file as last opened, kept for the next record while `path` still names it.
    open: Mutex<Option<OpenLog>>,
}

/// The log file held open, and the identity (`st_dev`, `st_ino`) it had when opened.
#[derive(Debug)]
struct OpenLog {
    file: std::fs::File,
    identity: (u64, u64),
}

/// A record could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the audit log {path}: {source}")]
pub struct AuditError {
    /// The log file.
    pub path: PathBuf,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}

impl AuditLog {
    /// A log appending to `path` (its folder is created on first write).
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            open: Mutex::new(None),
        }
    }

    /// `$AIRLOCK_HOME/log/audit.jsonl`.
    #[must_use]
    pub fn in_home(airlock_home: &Path) -> Self {
        Self::new(airlock_home.join(AUDIT_LOG_RELATIVE_PATH))
    }

    /// The log file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` (an [`AuditRecord`], or a patch's
    /// [`PatchAuditRecord`](crate::apply_patch::PatchAuditRecord)) as one line (one `write`
    /// call, under a lock so lines of concurrent calls of this process never interleave).
    ///
    /// # Errors
    /// [`AuditError`] when the folder or file cannot be created or written.
    pub fn append<T: Serialize>(&self, record: &T) -> Result<(), AuditError> {
        let error = |source| AuditError {
            path: self.path.clone(),
            source,
        };
        let mut line = serde_json::to_vec(record).map_err(|e| error(std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The file opened for an earlier record is written again while the path still
        // names it with a private mode (a rotated or replaced log is opened afresh).
        use std::os::unix::fs::MetadataExt as _;
        let private = |path: &Path| {
            std::fs::symlink_metadata(path)
                .ok()
                .filter(|meta| meta.mode() & 0o077 == 0)
        };
        let current = private(&self.path)
            .filter(|_| {
                self.path
                    .parent()
                    .filter(|parent| !parent.as_os_str().is_empty())
                    .is_none_or(|parent| private(parent).is_some())
            })
            .map(|meta| (meta.dev(), meta.ino()));
        if let Some(log) = open.as_mut().filter(|log| Some(log.identity) == current) {
            return log.file.write_all(&line).map_err(error);
        }
        *open = None;
        let mut file = self.open_file().map_err(error)?;
        file.write_all(&line).map_err(error)?;
        let meta = file.metadata().map_err(error)?;
        *open = Some(OpenLog {
            file,
            identity: (meta.dev(), meta.ino()),
        });
        Ok(())
    }

    /// Opens the log for appending, creating its folders; the log holds every command line
    /// in full (tokens, paths, arguments): private to the user, 0700 folders and a 0600
    /// file; a log or folder left readable (by an older version, or by hand since) is
    /// tightened. A symlink, FIFO or other non-regular file at the path is refused.
    fn open_file(&self) -> std::io::Result<std::fs::File> {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
        if let Some(parent) = self.path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)?;
            tighten(parent, 0o700)?;
        }
        // Never through a symlink, never blocking on a FIFO: only a regular file is a log
        // (anything else at the path is an error that names it, and the call goes on).
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&self.path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::other(
                "it is not a regular file; remove it (Airlock creates the log itself)",
            ));
        }
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))?;
        }
        Ok(file)
    }
}

/// Removes group and other permissions from the directory `path` when it has any.
fn tighten(path: &std::path::Path, keep: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & keep))?;
    }
    Ok(())
}

/// The current time as the audit log writes it.
#[must_use]
pub fn audit_now() -> String {
    rfc3339_utc(SystemTime::now())
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
