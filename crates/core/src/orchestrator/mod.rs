//! The orchestrator: one tool call through requirement → approval → first attempt → denial
//! → retry (spec `07-orchestrator.md`).
//!
//! Tools implement [`Approvable`], [`Sandboxable`] and [`ToolRuntime`];
//! [`ToolOrchestrator::run`] owns the order of decisions and records each of them in a
//! [`CallTrace`] (spec 07 step 7). [`ShellRuntime`](crate::ShellRuntime) is the local shell
//! tool.

mod attempt;
mod error;
mod retry;
mod run;
mod trace;
mod traits;

pub use attempt::AttemptPhase;
pub use attempt::SandboxAttempt;
pub use error::DenialEvidence;
pub use error::ExecError;
pub use error::NetworkDenial;
pub use error::ToolError;
pub use retry::DenialFacts;
pub use retry::RetryPlan;
pub use retry::network_retry_reason;
pub use retry::plan_retry;
pub use retry::sandbox_retry_reason;
pub use run::OrchestratorOutcome;
pub use run::SandboxSettings;
pub use run::ToolCallContext;
pub use run::ToolOrchestrator;
pub use trace::ApprovalRecord;
pub use trace::AttemptRecord;
pub use trace::CallTrace;
pub use trace::NoRetryReason;
pub use traits::Approvable;
pub use traits::Sandboxable;
pub use traits::ToolEnvironment;
pub use traits::ToolRuntime;
