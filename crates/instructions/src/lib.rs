//! Airlock's model-facing permissions instructions (spec `08-instructions.md`).
//!
//! The model is told its permissions in a developer-role `<permissions instructions>` block. The
//! text describes, it never enforces (spec README invariant 13): it is derived from the same
//! profile and the same `airlock-permissions` queries enforcement uses ([`ProfileProjection`]), and
//! assembled from typed sections ([`sections`]) so each fact has one wording in one place.
//!
//! Pipeline: [`select_instructions_target`] picks the primary environment (or the turn fallback);
//! [`PermissionsInstructions::from_permission_profile`] builds the sections; [`PermissionsState`]
//! compares with the previous [`PermissionsSnapshot`] and yields a [`PermissionsUpdate`] (the full
//! block, only the newly approved prefixes, or nothing). With instructions disabled,
//! [`CompactPermissionsState`] reports newly approved prefixes only.
//!
//! Must not: enforce anything, read files, or widen a profile.

mod catalog;
mod compact;
mod environment;
mod error;
mod fragment;
mod hash;
mod instructions;
mod prefixes;
mod projection;
pub mod sections;
mod snapshot;
mod state;

pub use catalog::ApprovalMessages;
pub use catalog::InstructionsCatalog;
pub use catalog::NETWORK_ACCESS_PLACEHOLDER;
pub use catalog::SandboxMessages;
pub use compact::CompactPermissionsSnapshot;
pub use compact::CompactPermissionsState;
pub use environment::EnvironmentPermissions;
pub use environment::InstructionsSource;
pub use environment::InstructionsTarget;
pub use environment::TurnPermissions;
pub use environment::select_instructions_target;
pub use error::InstructionsError;
pub use fragment::END_MARKER;
pub use fragment::FragmentRole;
pub use fragment::START_MARKER;
pub use fragment::is_permissions_block;
pub use fragment::wrap_in_markers;
pub use hash::InstructionsHash;
pub use instructions::ApprovalPromptContext;
pub use instructions::PermissionsInstructions;
pub use prefixes::ApprovedCommandPrefixSaved;
pub use prefixes::ApprovedPrefixList;
pub use prefixes::MAX_LISTED_PREFIXES;
pub use prefixes::MAX_PREFIX_LIST_CHARS;
pub use prefixes::PREFIX_SAVED_HEADING;
pub use prefixes::prefix_line;
pub use projection::ProfileProjection;
pub use sections::approval::ApprovalFeatures;
pub use snapshot::PermissionsSnapshot;
pub use snapshot::PreviousSectionState;
pub use state::PermissionsState;
pub use state::PermissionsUpdate;
