//! Airlock wire types (spec `01-protocol.md`).
//!
//! This crate owns the JSON shapes that every Airlock layer (approval, policy, enforcement) and every
//! client (CLI, app server, exec-server) exchange. The names and `serde` forms follow Codex 0.169's
//! **core** snake_case / kebab-case JSON as recorded in reference `protocol.md`, plus the deliberate
//! differences that spec 01 lists (`untrusted` is a real policy, `on-failure` is only an input alias
//! of `on-request`, and `ReviewDecision::Denied` carries an optional rejection reason).
//!
//! What the crate does:
//! - defines each wire type once, with `Serialize`, `Deserialize` and `JsonSchema`;
//! - accepts the legacy input spellings the reference lists, and always writes the canonical one;
//! - offers trivial accessors (for example [`GranularApprovalConfig::allows_rules_approval`]).
//!
//! What the crate must not do:
//! - no policy logic (deciding whether to ask, matching rules, computing a requirement): that lives in
//!   the policy and approval crates, which depend on this one;
//! - no I/O, no filesystem or network access, no environment lookups, no OS-specific code;
//! - no dependency on any other Airlock crate (this is the bottom of the dependency graph).
//!
//! JSON Schemas (`schemars`) describe the canonical forms only; legacy input aliases are accepted
//! when reading but are not advertised in the schemas.
//!
//! Enums are deliberately not `#[non_exhaustive]`: every consumer lives in this workspace and must
//! match them exhaustively, so that a new decision or policy variant is a compile error at each
//! decision point instead of falling into a wildcard arm.

mod amendments;
mod approval_policy;
mod approvals_reviewer;
mod network_approval;
mod permissions_additional;
mod permissions_fs;
mod permissions_legacy;
mod permissions_profile;
mod requirement;
mod review_decision;
mod sandbox_mode;
mod sandbox_permissions;

pub use amendments::ExecPolicyAmendment;
pub use amendments::NetworkPolicyAmendment;
pub use amendments::NetworkPolicyRuleAction;
pub use approval_policy::AskForApproval;
pub use approval_policy::GranularApprovalConfig;
pub use approvals_reviewer::ApprovalsReviewer;
pub use network_approval::NetworkApprovalContext;
pub use network_approval::NetworkApprovalProtocol;
pub use permissions_additional::AdditionalPermissionProfile;
pub use permissions_additional::FileSystemPermissions;
pub use permissions_additional::NetworkPermissions;
pub use permissions_fs::FileSystemAccessMode;
pub use permissions_fs::FileSystemPath;
pub use permissions_fs::FileSystemSandboxEntry;
pub use permissions_fs::FileSystemSandboxKind;
pub use permissions_fs::FileSystemSandboxPolicy;
pub use permissions_fs::FileSystemSpecialPath;
pub use permissions_fs::MissingPathBehavior;
pub use permissions_fs::NetworkSandboxPolicy;
pub use permissions_legacy::NetworkAccess;
pub use permissions_legacy::SandboxPolicy;
pub use permissions_profile::ActivePermissionProfile;
pub use permissions_profile::ManagedFileSystemPermissions;
pub use permissions_profile::PermissionProfile;
pub use permissions_profile::SandboxEnforcement;
pub use requirement::ExecApprovalRequirement;
pub use review_decision::REJECTION_MAX_BYTES;
pub use review_decision::Rejection;
pub use review_decision::ReviewDecision;
pub use sandbox_mode::SandboxMode;
pub use sandbox_permissions::SandboxPermissions;
