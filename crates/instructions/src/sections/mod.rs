//! The four sections of the permissions instructions, each a typed value that renders itself
//! (spec 08 §Sections). Model-visible text is produced only by these types and by
//! [`crate::prefixes`], so wording for one fact lives in exactly one place.

pub mod approval;
pub mod approval_parts;
pub mod denied_reads;
pub mod sandbox;
pub mod writable_roots;
