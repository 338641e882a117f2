//! `PermissionsState`: decides what to send the model given what it was sent before (spec 08
//! §Snapshot and diff).
//!
//! Rules, in order:
//! - previous `Current` with the same instructions hash: same prefix set → nothing; previous set a
//!   strict subset → only the newly approved prefixes (`Approved command prefix saved:`); any
//!   prefix removed → the full text, because an appended note cannot revoke an earlier approval;
//! - previous `Legacy(h)` with `h` equal to the hash of the full current body → nothing;
//! - anything else (absent, unknown, another hash) → the full text.

use std::collections::BTreeSet;

use crate::fragment::FragmentRole;
use crate::instructions::PermissionsInstructions;
use crate::prefixes::ApprovedCommandPrefixSaved;
use crate::snapshot::PermissionsSnapshot;
use crate::snapshot::PreviousSectionState;

/// What to send the model for the permissions section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionsUpdate {
    /// The whole marked `<permissions instructions>` block.
    Full(Box<PermissionsInstructions>),
    /// Only the prefixes approved since the last full block.
    PrefixesSaved(ApprovedCommandPrefixSaved),
}

impl PermissionsUpdate {
    /// The message text.
    #[must_use]
    pub fn render(&self) -> String {
        match self {
            Self::Full(instructions) => instructions.render(),
            Self::PrefixesSaved(saved) => saved.render(),
        }
    }

    /// The role it is sent with (always developer).
    #[must_use]
    pub const fn role(&self) -> FragmentRole {
        FragmentRole::Developer
    }

    /// `full` or `prefixes_saved`, for logs and the CLI's JSON.
    #[must_use]
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Full(_) => "full",
            Self::PrefixesSaved(_) => "prefixes_saved",
        }
    }
}

/// The permissions section of the world state (section id [`PermissionsState::SECTION_ID`]),
/// used when `include_permissions_instructions` is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionsState {
    instructions: PermissionsInstructions,
    snapshot: PermissionsSnapshot,
}

impl PermissionsState {
    /// World-state section id.
    pub const SECTION_ID: &'static str = "permissions";

    /// The state for `instructions`; its snapshot is `Current`.
    #[must_use]
    pub fn new(instructions: PermissionsInstructions) -> Self {
        let snapshot = PermissionsSnapshot::Current {
            instructions: instructions.instructions_hash(),
            approved_command_prefixes: instructions.approved_command_prefixes(),
        };
        Self {
            instructions,
            snapshot,
        }
    }

    /// The snapshot to persist after sending.
    #[must_use]
    pub const fn snapshot(&self) -> &PermissionsSnapshot {
        &self.snapshot
    }

    /// The current instructions.
    #[must_use]
    pub const fn instructions(&self) -> &PermissionsInstructions {
        &self.instructions
    }

    /// What to send given `previous` (see the module docs), or `None` for nothing.
    #[must_use]
    pub fn render_diff(
        &self,
        previous: PreviousSectionState<'_, PermissionsSnapshot>,
    ) -> Option<PermissionsUpdate> {
        let full = || Some(PermissionsUpdate::Full(Box::new(self.instructions.clone())));
        let PreviousSectionState::Known(previous) = previous else {
            return full();
        };
        match previous {
            PermissionsSnapshot::Current {
                instructions,
                approved_command_prefixes: before,
            } => {
                if *instructions != self.instructions.instructions_hash() {
                    return full();
                }
                let now = self.instructions.approved_command_prefixes();
                if !before.is_subset(&now) {
                    return full();
                }
                let added: BTreeSet<Vec<String>> = now.difference(before).cloned().collect();
                ApprovedCommandPrefixSaved::new(added).map(PermissionsUpdate::PrefixesSaved)
            }
            PermissionsSnapshot::Legacy(hash) => {
                if *hash == self.instructions.full_text_hash() {
                    None
                } else {
                    full()
                }
            }
        }
    }
}
