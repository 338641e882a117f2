//! What the server needs from the CLI: building a thread's session from `thread/start` and
//! the configuration (as `airlock exec` does), and the commands that live in the CLI
//! (`explain --json`, `instructions --json`, `sandbox`).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use airlock_app_server_protocol::CommandExecParams;
use airlock_app_server_protocol::CommandExecResponse;
use airlock_app_server_protocol::InstructionsRenderResponse;
use airlock_app_server_protocol::PolicyExplainParams;
use airlock_app_server_protocol::ThreadStartParams;
use airlock_approval::ApprovalEvent;
use airlock_core::Session;
use airlock_protocol::AskForApproval;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A thread's session and what `thread/start` reports about it.
pub struct ThreadSetup {
    /// The core session (its approval layer sends user prompts to the `events` given to
    /// [`Backend::start_thread`]).
    pub session: Session,
    /// The approval policy in force.
    pub approval_policy: AskForApproval,
    /// The permission profile id in force.
    pub permission_profile: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Set-up warnings (sent as `warning` notifications).
    pub warnings: Vec<String>,
}

/// What a thread was started with (for the calls that re-read the configuration).
#[derive(Debug, Clone)]
pub struct ThreadContext {
    /// The thread id.
    pub thread_id: String,
    /// The `thread/start` params, with `cwd` resolved.
    pub params: ThreadStartParams,
}

/// The CLI side of the server. Errors are one line for the client: -32602 for `thread/start`
/// and `policy/explain`, -32603 for `instructions/render`, -32600 for `command/exec`.
pub trait Backend: Send + Sync + 'static {
    /// `$AIRLOCK_HOME` (for `initialize`).
    fn airlock_home(&self) -> PathBuf;

    /// Builds the session of a new thread with audit session id `thread_id`; user prompts go
    /// to `events`.
    ///
    /// # Errors
    /// An unusable configuration, profile, cwd or rules file, naming it.
    fn start_thread(
        &self,
        thread_id: &str,
        params: &ThreadStartParams,
        events: UnboundedSender<ApprovalEvent>,
    ) -> Result<ThreadSetup, String>;

    /// `policy/explain`: the `airlock explain --json` object for `params` in `thread`.
    ///
    /// # Errors
    /// As `airlock explain` (configuration or command problems).
    fn explain(
        &self,
        thread: &ThreadContext,
        params: &PolicyExplainParams,
    ) -> Result<Value, String>;

    /// `instructions/render` for `thread`.
    ///
    /// # Errors
    /// As `airlock instructions`.
    fn render_instructions(
        &self,
        thread: &ThreadContext,
    ) -> Result<InstructionsRenderResponse, String>;

    /// `command/exec`: the command under the sandbox only. Dropping the future kills it.
    fn command_exec(
        &self,
        params: CommandExecParams,
    ) -> BoxFuture<'static, Result<CommandExecResponse, String>>;
}
