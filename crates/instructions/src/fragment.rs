//! Model-visible messages (spec 08 opening paragraph and §Snapshot and diff): the marked
//! `<permissions instructions>` block and the unmarked "Approved command prefix saved" update,
//! both sent with the developer role.

use serde::Serialize;

/// Opening marker of the instructions block (spec 08).
pub const START_MARKER: &str = "<permissions instructions>";
/// Closing marker of the instructions block (spec 08).
pub const END_MARKER: &str = "</permissions instructions>";

/// Role of a model-visible message. Permissions text is always developer-role (spec 08).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FragmentRole {
    /// Developer message.
    Developer,
}

impl FragmentRole {
    /// The wire name, `developer`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Developer => "developer",
        }
    }
}

/// Wraps a body that ends with `\n` in the markers: `<permissions instructions>\n{body}</permissions instructions>`.
#[must_use]
pub fn wrap_in_markers(body: &str) -> String {
    format!("{START_MARKER}\n{body}{END_MARKER}")
}

/// Whether `text` is a marked permissions block (used to recognise one in retained history).
#[must_use]
pub fn is_permissions_block(text: &str) -> bool {
    let trimmed = text.trim();
    trimmed.starts_with(START_MARKER) && trimmed.ends_with(END_MARKER)
}
