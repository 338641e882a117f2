//! The `apply_patch` tool through the three layers (spec `11-apply-patch.md`): pre-checks and
//! the safety assessment ([`refusal_before_reading`], [`assess_patch_safety`]), the sandboxed
//! runtime ([`PatchRuntime`]), the child that applies a patch atomically ([`run_helper`],
//! [`write_atomically`]) and its audit record ([`PatchAuditRecord`]).
//!
//! [`Session::apply_patch`](crate::Session::apply_patch) ties them together: parse → refuse
//! protected metadata, policy folders and deny-read paths, judged where each path really
//! leads ([`resolve_target`]: through every symlink on the way, issue 11 finding F6) → verify
//! (read the sources, compute new contents and diffs) → assess → [`ToolOrchestrator::run`](
//! crate::ToolOrchestrator::run) with [`PatchRuntime`]; the child writes exactly at the real
//! paths the parent judged ([`real_paths_of`]), opening folders without following symlinks.

mod audit;
mod dirs;
mod events;
mod files;
mod helper;
mod resolve;
mod runtime;
mod safety;
mod write;

pub use audit::PatchAuditRecord;
pub use audit::PatchFileRecord;
pub use events::PatchApplyBeginEvent;
pub use events::PatchApplyEndEvent;
pub use events::PatchApplyStatus;
pub use events::PatchEnding;
pub use events::PatchEvents;
pub use files::PolicyFiles;
pub use files::READ_NOT_ALLOWED;
pub use helper::APPLY_PATCH_HELPER_SUBCOMMAND;
pub use helper::HelperOutcome;
pub use helper::HelperRequest;
pub use helper::HostFiles;
pub use helper::MAX_HELPER_REQUEST_BYTES;
pub use helper::MAX_PATCHED_FILE_BYTES;
pub use helper::apply_request;
pub use helper::run_helper;
pub use resolve::MAX_SYMLINK_HOPS;
pub use resolve::ResolveTargetError;
pub use resolve::ResolvedTarget;
pub use resolve::real_paths_of;
pub use resolve::resolve_folder;
pub use resolve::resolve_target;
pub use runtime::PatchRequest;
pub use runtime::PatchRuntime;
pub use safety::OUTSIDE_PROJECT_REJECT_REASON;
pub use safety::PATCH_REJECTED_PREFIX;
pub use safety::PatchAssessment;
pub use safety::PatchPolicy;
pub use safety::READ_ONLY_REJECT_REASON;
pub use safety::assess_patch_safety;
pub use safety::named_paths;
pub use safety::refusal_before_reading;
pub use write::WriteError;
pub use write::write_atomically;
