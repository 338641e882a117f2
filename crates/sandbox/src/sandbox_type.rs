//! Which platform sandbox wraps a command (spec 05 §Types).

use serde::{Deserialize, Serialize};

/// The platform mechanism that confines a command. Exactly four values.
///
/// `None` does not mean "the policy asked for no sandbox" (spec README invariant 11):
/// a remote executor or a host without a sandbox also yields `None`.
/// JSON: `"none"`, `"macosSeatbelt"`, `"linuxSeccomp"`, `"windowsRestrictedToken"`
/// (the exec-server's `sandboxType` spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SandboxType {
    /// No local wrapper.
    None,
    /// macOS `sandbox-exec` with a generated Seatbelt policy.
    MacosSeatbelt,
    /// Linux: bubblewrap + seccomp + no_new_privs through the helper.
    LinuxSeccomp,
    /// Windows restricted token.
    WindowsRestrictedToken,
}

/// Whether a tool wants the platform sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxablePreference {
    /// Sandbox when the runtime policy needs it.
    Auto,
    /// Always sandbox.
    Require,
    /// Never sandbox (the caller takes responsibility, e.g. an approved escalation).
    Forbid,
}

/// The platform sandbox of this host: macOS → Seatbelt, Linux → LinuxSeccomp,
/// Windows → RestrictedToken only when `windows_enabled`; otherwise `None`.
pub fn get_platform_sandbox(windows_enabled: bool) -> Option<SandboxType> {
    platform_sandbox_for(std::env::consts::OS, windows_enabled)
}

/// [`get_platform_sandbox`] for an explicit OS name (`std::env::consts::OS` values).
pub fn platform_sandbox_for(os: &str, windows_enabled: bool) -> Option<SandboxType> {
    match os {
        "macos" => Some(SandboxType::MacosSeatbelt),
        "linux" => Some(SandboxType::LinuxSeccomp),
        "windows" if windows_enabled => Some(SandboxType::WindowsRestrictedToken),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_selection() {
        assert_eq!(
            platform_sandbox_for("macos", false),
            Some(SandboxType::MacosSeatbelt)
        );
        assert_eq!(
            platform_sandbox_for("linux", false),
            Some(SandboxType::LinuxSeccomp)
        );
        assert_eq!(platform_sandbox_for("windows", false), None);
        assert_eq!(
            platform_sandbox_for("windows", true),
            Some(SandboxType::WindowsRestrictedToken)
        );
        assert_eq!(platform_sandbox_for("freebsd", true), None);
    }

    #[test]
    fn wire_names() {
        assert_eq!(
            serde_json::to_string(&SandboxType::LinuxSeccomp).unwrap(),
            "\"linuxSeccomp\""
        );
        assert_eq!(
            serde_json::to_string(&SandboxType::None).unwrap(),
            "\"none\""
        );
    }
}
