//! `approvals_reviewer`: who answers an approval request.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// Who reviews approval prompts (`approvals_reviewer` in config, `--reviewer` on the CLI).
///
/// JSON forms (reference `protocol.md` §2): `"user"` (the default) or `"auto_review"`. The
/// legacy name `"guardian_subagent"` (Codex 0.125) is accepted as an input alias of
/// `"auto_review"` and is never written. Other strings fail with serde's "unknown variant" error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalsReviewer {
    /// A person answers (interactive prompt or app-server client).
    #[default]
    User,
    /// The automatic reviewer answers (spec 06, "Automatic reviewer").
    #[serde(alias = "guardian_subagent")]
    AutoReview,
}
