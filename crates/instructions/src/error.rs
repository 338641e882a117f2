//! Errors of this crate. Building instructions cannot fail (every profile has a description);
//! only reading persisted snapshots can.

/// What went wrong while reading instructions state.
#[derive(Debug, thiserror::Error)]
pub enum InstructionsError {
    /// A persisted snapshot is not valid JSON of any accepted form (spec 08 §Snapshot and diff:
    /// `Current` object, `Legacy` hash string, or Codex's `{instructions_fingerprint}` object).
    #[error("invalid permissions snapshot: {source}")]
    InvalidSnapshot {
        /// The JSON error, with line and column.
        #[source]
        source: serde_json::Error,
    },
}
