//! `CompactPermissionsState`: the permissions section when `include_permissions_instructions` is
//! off (spec 08 §Compact mode). Only approved prefixes are tracked; no full text is ever sent.

use std::collections::BTreeSet;

use airlock_execpolicy::Policy;
use serde::Deserialize;
use serde::Serialize;

use crate::prefixes::ApprovedCommandPrefixSaved;
use crate::snapshot::PreviousSectionState;

/// The compact snapshot: the prefix set. JSON: an array of token arrays.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CompactPermissionsSnapshot {
    /// The approved prefixes.
    pub approved_command_prefixes: BTreeSet<Vec<String>>,
}

/// Tracks approved prefixes only (section id [`CompactPermissionsState::SECTION_ID`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactPermissionsState {
    snapshot: CompactPermissionsSnapshot,
}

impl CompactPermissionsState {
    /// World-state section id.
    pub const SECTION_ID: &'static str = "approved_command_prefixes";

    /// The state for a set of approved prefixes (empty prefixes are ignored).
    #[must_use]
    pub fn new<I>(prefixes: I) -> Self
    where
        I: IntoIterator<Item = Vec<String>>,
    {
        Self {
            snapshot: CompactPermissionsSnapshot {
                approved_command_prefixes: prefixes
                    .into_iter()
                    .filter(|prefix| !prefix.is_empty())
                    .collect(),
            },
        }
    }

    /// The state for the allow prefixes of `policy`.
    #[must_use]
    pub fn from_policy(policy: &Policy) -> Self {
        Self::new(policy.get_allowed_prefixes())
    }

    /// The snapshot to persist.
    #[must_use]
    pub const fn snapshot(&self) -> &CompactPermissionsSnapshot {
        &self.snapshot
    }

    /// `Known` → the saved fragment for additions only (nothing for removals or no additions);
    /// `Absent` / `Unknown` → nothing: compact mode never builds a baseline.
    #[must_use]
    pub fn render_diff(
        &self,
        previous: PreviousSectionState<'_, CompactPermissionsSnapshot>,
    ) -> Option<ApprovedCommandPrefixSaved> {
        let PreviousSectionState::Known(previous) = previous else {
            return None;
        };
        ApprovedCommandPrefixSaved::new(
            self.snapshot
                .approved_command_prefixes
                .difference(&previous.approved_command_prefixes)
                .cloned(),
        )
    }
}
