//! `sandbox_permissions`: the per-command sandbox request a tool call carries.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// What one tool call asks of the sandbox (tool argument `sandbox_permissions`).
///
/// JSON forms (reference `protocol.md` §7): `"use_default"` (the default),
/// `"require_escalated"`, `"with_additional_permissions"`. Other strings fail with serde's
/// "unknown variant" error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPermissions {
    /// Run with the turn's permissions.
    #[default]
    UseDefault,
    /// Run outside the sandbox; needs approval.
    RequireEscalated,
    /// Stay sandboxed, widened by the call's `additional_permissions`.
    WithAdditionalPermissions,
}

impl SandboxPermissions {
    /// `true` only for [`SandboxPermissions::RequireEscalated`].
    #[must_use]
    pub const fn requires_escalated_permissions(self) -> bool {
        matches!(self, Self::RequireEscalated)
    }

    /// `true` for anything other than [`SandboxPermissions::UseDefault`].
    #[must_use]
    pub const fn requests_sandbox_override(self) -> bool {
        !matches!(self, Self::UseDefault)
    }

    /// `true` only for [`SandboxPermissions::WithAdditionalPermissions`].
    #[must_use]
    pub const fn uses_additional_permissions(self) -> bool {
        matches!(self, Self::WithAdditionalPermissions)
    }
}
