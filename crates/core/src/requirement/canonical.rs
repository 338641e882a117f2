//! The canonical command for approval-cache keys (spec 03 "Canonical command for the
//! approval cache", reference §10).
//!
//! The approval crate owns the one implementation; it is re-exported here so that callers
//! of the requirement computation find it next to it and no second copy can drift.

pub use airlock_approval::canonicalize_command_for_approval;
