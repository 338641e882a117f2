//! Airlock's approval layer (spec `06-approval.md`): who must agree before a command or patch
//! runs, and what they answered.
//!
//! Owns:
//! - [`ApprovalAction`] (`Shell`, `ExecCommand`, `ApplyPatch`): the one description every
//!   reviewer sees; its hook payload projection ([`ApprovalAction::hook_payload`]) and session
//!   cache keys ([`ApprovalAction::cache_keys`], [`canonicalize_command_for_approval`]);
//! - [`ApprovalSession::request_approval`]: permission-request hooks first
//!   ([`run_permission_request_hooks`]), then the automatic reviewer ([`run_auto_review`]) or
//!   the user (events + [`ApprovalSession::submit_exec_approval`]), with the in-memory session
//!   cache ([`with_cached_approval`]);
//! - [`ApprovalResolution::into_tool_result`]: the decision as the tool result the model sees;
//! - persisting amendment decisions ([`AmendmentTarget`]) before they are delivered.
//!
//! Must not: compute whether approval is needed (the requirement comes from the policy layer),
//! choose or apply a sandbox, or run the approved command (crate `core`'s orchestrator does).
//!
//! Every failure fails closed: a hook that breaks gives no verdict, a reviewer that breaks
//! denies, a reviewer that is too slow times out, a reply channel that closes aborts.
//!
//! # How the orchestrator uses it (spec 07 steps 3 and 6)
//!
//! ```text
//! // once per session
//! let config = ApprovalConfig::load(&airlock_config.table, &airlock_config.origin, &airlock_home)?;
//! let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel(); // None: nobody to ask
//! let session = Arc::new(ApprovalSession::new(session_id, config, Some(events_tx))
//!     .with_amendment_target(AmendmentTarget::new(home.join("rules/default.rules"), live_policy)));
//! // a prompt front end (terminal, JSON-RPC client) reads `events_rx` and answers with
//! // session.submit_exec_approval(id, Some(turn_id), decision) / submit_patch_approval(id, decision)
//!
//! // once per turn
//! let turn = session.start_turn(TurnSettings { turn_id, approval_policy, approvals_reviewer, model });
//!
//! // per NeedsApproval (first attempt), strict review on Skip, or a retry
//! let action = ApprovalAction::Shell(CommandAction { sandbox_permissions, justification,
//!     proposed_execpolicy_amendment, ..CommandAction::new(call_id, argv, cwd) });
//! let ctx = ApprovalContext { approval_reason, retry_reason, network_approval_context,
//!     strict_auto_review, category, permission_profile, ..ApprovalContext::new(call_id) };
//! let resolution = session.request_approval(&turn, &action, &ctx).await;
//! audit.record(&resolution);                      // decision, source, duration_ms
//! match resolution.into_tool_result() {
//!     Ok(_decision) => { /* already_approved = true; run the attempt */ }
//!     Err(rejected) if rejected.interrupts_turn => { /* abort: interrupt the turn */ }
//!     Err(rejected) => { /* ToolError::Rejected(rejected.message); the turn goes on */ }
//! }
//! ```

#![deny(missing_docs)]

mod action;
mod amend;
mod answers;
mod auto_review;
mod cache;
mod canonical;
mod config;
mod context;
mod decisions;
mod error;
mod events;
mod hook_payload;
mod hooks;
mod process;
mod resolution;
mod session;
mod turn;
mod user;

pub use action::ApprovalAction;
pub use action::CommandAction;
pub use action::ExecCommandAction;
pub use action::FileChange;
pub use action::PatchAction;
pub use action::hook_command_for;
pub use amend::AmendmentTarget;
pub use auto_review::AUTO_REVIEW_SYSTEM_PROMPT;
pub use auto_review::AutoReviewConfig;
pub use auto_review::AutoReviewOutcome;
pub use auto_review::AutoReviewRequest;
pub use auto_review::AutoReviewer;
pub use auto_review::DEFAULT_AUTO_REVIEW_TIMEOUT;
pub use auto_review::EndpointConfig;
pub use auto_review::ReviewFailureKind;
pub use auto_review::ReviewOutcome;
pub use auto_review::ReviewerVerdict;
pub use auto_review::parse_reviewer_verdict;
pub use auto_review::run_auto_review;
pub use cache::ApprovalCacheKey;
pub use cache::ApprovalStore;
pub use cache::CachedApproval;
pub use cache::with_cached_approval;
pub use canonical::SHELL_SCRIPT_MARKER;
pub use canonical::canonicalize_command_for_approval;
pub use config::ApprovalConfig;
pub use config::HOOKS_JSON_FILE;
pub use context::ApprovalCategory;
pub use context::ApprovalContext;
pub use decisions::available_decisions;
pub use decisions::is_offered;
pub use decisions::patch_decisions;
pub use decisions::proposed_network_policy_amendments;
pub use error::ConfigError;
pub use events::ApplyPatchApprovalRequestEvent;
pub use events::ApprovalEvent;
pub use events::ExecApprovalRequestEvent;
pub use events::ParsedCommandSummary;
pub use hook_payload::APPLY_PATCH_ALIASES;
pub use hook_payload::APPLY_PATCH_TOOL_NAME;
pub use hook_payload::BASH_TOOL_NAME;
pub use hook_payload::PermissionRequestPayload;
pub use hooks::DEFAULT_HOOK_DENY_MESSAGE;
pub use hooks::DEFAULT_HOOK_TIMEOUT;
pub use hooks::HookInput;
pub use hooks::HookMatcher;
pub use hooks::HookReport;
pub use hooks::HookRunResult;
pub use hooks::HookVerdict;
pub use hooks::PermissionRequestHook;
pub use hooks::parse_hook_output;
pub use hooks::run_permission_request_hooks;
pub use hooks::run_pre_tool_use_hooks;
pub use hooks::{DEFAULT_PRE_TOOL_USE_DENY_MESSAGE, parse_pre_tool_use_output};
pub use process::MAX_OUTPUT_BYTES;
pub use resolution::APPROVAL_ABORTED;
pub use resolution::AUTO_REVIEW_DENIED;
pub use resolution::AUTO_REVIEW_TIMED_OUT;
pub use resolution::ApprovalRejected;
pub use resolution::ApprovalResolution;
pub use resolution::DecisionSource;
pub use resolution::MCP_AMENDMENT_OUTSIDE_MCP;
pub use resolution::REJECTED_BY_CONFIGURATION;
pub use resolution::REJECTED_BY_USER;
pub use session::AUTO_REVIEW_NOT_CONFIGURED;
pub use session::ApprovalSession;
pub use session::NO_REVIEWER_AVAILABLE;
pub use turn::ApprovalTurn;
pub use turn::TurnSettings;
