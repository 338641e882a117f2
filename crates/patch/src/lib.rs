//! Airlock's `apply_patch` language (spec `11-apply-patch.md`; reference
//! `codex/apply-patch.md` §A1–A5): the patch text → hunks → verified file changes.
//!
//! Owns:
//! - the parser ([`parse_patch`]): Codex's lenient grammar (trimmed markers, CRLF input, a
//!   `<<'EOF'` wrapper) with Codex's error texts, plus nested `@@` context lines;
//! - the context matcher: Codex's four passes (exact, trailing whitespace, both ends, Unicode
//!   punctuation), then a prefix pass for `@@` context only when no whole line matches;
//! - the verifier ([`verify_patch`]): every path resolved against the cwd and normalised
//!   lexically, every source read through [`ReadFile`], the complete new contents of every
//!   affected file and a unified diff per change ([`VerifiedPatch`]);
//! - recognising a patch inside a shell-tool argv ([`maybe_parse_apply_patch`]).
//!
//! Must not: touch the filesystem other than through the caller's [`ReadFile`], decide whether
//! a path may be written (crate `core` asks the permission profile), or write anything (the
//! sandboxed child applies [`VerifiedPatch::final_writes`]).
//!
//! Where Airlock differs from Codex 0.125 (all strictly more useful, never less safe; spec 11):
//! consecutive `@@ a` / `@@ b` lines narrow the search; an `@@` context matches as a prefix of
//! the trimmed file line when no whole line matches; a pure-addition chunk with context inserts
//! after the context line; an `*** End of File` chunk whose lines exist but not at the end says
//! so; each line keeps its own line ending and new lines take the file's style; the line
//! number of an unexpected first chunk line is the line's own.

#![deny(missing_docs)]

mod diff;
mod error;
mod hunk;
mod invocation;
mod lexical;
mod parser;
mod seek;
mod text;
mod update;
mod verify;

pub use diff::unified_diff;
pub use error::ParseError;
pub use error::VerifyError;
pub use hunk::Hunk;
pub use hunk::ParsedPatch;
pub use hunk::UpdateChunk;
pub use invocation::APPLY_PATCH_COMMANDS;
pub use invocation::ApplyPatchInvocation;
pub use invocation::IMPLICIT_INVOCATION_MESSAGE;
pub use invocation::maybe_parse_apply_patch;
pub use lexical::normalize_lexically;
pub use parser::parse_patch;
pub use verify::ChangeKind;
pub use verify::FinalWrite;
pub use verify::ReadFile;
pub use verify::VerifiedChange;
pub use verify::VerifiedPatch;
pub use verify::verify_patch;
