//! Section 1, sandbox (spec 08 §Sections): one line naming `sandbox_mode` and the network state.
//!
//! The three built-in sentences are mandated word for word by spec 08; only the final network
//! sentence switches between `restricted` and `enabled`.

use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::SandboxMode;

use crate::catalog::NETWORK_ACCESS_PLACEHOLDER;
use crate::catalog::SandboxMessages;

/// Lead-in shared by the three built-in sentences (spec 08, exact).
const LEAD_IN: &str = "Filesystem sandboxing defines which files can be read or written.";

/// The sandbox section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSection {
    /// The projected mode.
    pub sandbox_mode: SandboxMode,
    /// The projected network state.
    pub network_access: NetworkSandboxPolicy,
    /// A non-empty catalog override (placeholder already substituted), if any.
    pub catalog_text: Option<String>,
}

impl SandboxSection {
    /// The section for `mode`/`network`, or `None` when the catalog supplies an empty message for
    /// this mode (spec 08: that omits the sandbox section only).
    #[must_use]
    pub fn new(
        sandbox_mode: SandboxMode,
        network_access: NetworkSandboxPolicy,
        catalog: Option<&SandboxMessages>,
    ) -> Option<Self> {
        let catalog_text = match catalog.and_then(|messages| messages.for_mode(sandbox_mode)) {
            Some("") => return None,
            Some(text) => {
                Some(text.replace(NETWORK_ACCESS_PLACEHOLDER, network_word(network_access)))
            }
            None => None,
        };
        Some(Self {
            sandbox_mode,
            network_access,
            catalog_text,
        })
    }

    /// The section text (no trailing newline).
    #[must_use]
    pub fn render(&self) -> String {
        if let Some(text) = &self.catalog_text {
            return text.trim_end().to_owned();
        }
        let mode = match self.sandbox_mode {
            SandboxMode::ReadOnly => {
                "`sandbox_mode` is `read-only`: The sandbox only permits reading files."
            }
            SandboxMode::WorkspaceWrite => {
                "`sandbox_mode` is `workspace-write`: The sandbox permits reading files, and editing files in `cwd` and `writable_roots`. Editing files in other directories requires approval."
            }
            SandboxMode::DangerFullAccess => {
                "`sandbox_mode` is `danger-full-access`: No filesystem sandboxing - all commands are permitted."
            }
        };
        format!(
            "{LEAD_IN} {mode} Network access is {}.",
            network_word(self.network_access)
        )
    }
}

/// `restricted` / `enabled`, as in the spec's sentences and the placeholder.
pub(crate) const fn network_word(network: NetworkSandboxPolicy) -> &'static str {
    match network {
        NetworkSandboxPolicy::Restricted => "restricted",
        NetworkSandboxPolicy::Enabled => "enabled",
    }
}
