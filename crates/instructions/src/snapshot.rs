//! `PermissionsSnapshot`: what is remembered about the last instructions sent (spec 08 §Snapshot
//! and diff), and the three states a previous snapshot can be in.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;

use crate::error::InstructionsError;
use crate::hash::InstructionsHash;

/// A previous section state as the world-state machinery knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviousSectionState<'a, S> {
    /// Nothing was ever sent for this section (new conversation).
    Absent,
    /// Something was sent but its snapshot is not known (e.g. restored from an older history).
    Unknown,
    /// The snapshot of what was sent.
    Known(&'a S),
}

/// The persisted snapshot of the permissions section.
///
/// JSON, untagged (Codex's form):
/// - `Current`: `{"instructions":"sha1:…","approved_command_prefixes":[["git","pull"],…]}` —
///   the hash of the instructions rendered with an empty exec policy plus the prefix set
///   (`approved_command_prefixes` omitted when empty, read as empty when missing, so a snapshot
///   never contains a JSON `null`, which would mean "delete" in a merge patch);
/// - `Legacy`: `"sha1:…"`, the hash of the full text. Codex's older object
///   `{"enabled":true,"model_slug":…,"instructions_fingerprint":"sha1:…"}` is read as `Legacy`
///   too; it is always written back as the bare string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PermissionsSnapshot {
    /// The current form.
    Current {
        /// Hash of the body rendered without approved prefixes.
        instructions: InstructionsHash,
        /// The approved prefixes listed when the snapshot was taken.
        #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
        approved_command_prefixes: BTreeSet<Vec<String>>,
    },
    /// An older persisted form: the hash of the full text.
    Legacy(#[serde(deserialize_with = "legacy_hash")] InstructionsHash),
}

impl PermissionsSnapshot {
    /// Reads a snapshot from JSON.
    ///
    /// # Errors
    /// [`InstructionsError::InvalidSnapshot`] when the text is none of the accepted forms.
    pub fn from_json(text: &str) -> Result<Self, InstructionsError> {
        serde_json::from_str(text).map_err(|source| InstructionsError::InvalidSnapshot { source })
    }

    /// Reads a snapshot from an already parsed JSON value.
    ///
    /// # Errors
    /// [`InstructionsError::InvalidSnapshot`] when the value is none of the accepted forms.
    pub fn from_value(value: serde_json::Value) -> Result<Self, InstructionsError> {
        serde_json::from_value(value)
            .map_err(|source| InstructionsError::InvalidSnapshot { source })
    }
}

/// The `Legacy` payload: a hash string, or Codex's fingerprint object.
fn legacy_hash<'de, D: Deserializer<'de>>(deserializer: D) -> Result<InstructionsHash, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum LegacyForm {
        Hash(String),
        Fingerprint { instructions_fingerprint: String },
    }
    Ok(match LegacyForm::deserialize(deserializer)? {
        LegacyForm::Hash(hash)
        | LegacyForm::Fingerprint {
            instructions_fingerprint: hash,
        } => InstructionsHash::from_string(hash),
    })
}
