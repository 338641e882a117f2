//! Windows sandbox: the level model, its selection, and the transform entry point
//! (spec 05 §Windows; wire names from reference `exec-server.md` §6).
//!
//! Airlock has no Windows backend yet. [`create_windows_sandbox_command`] is where the manager
//! hands over a `WindowsRestrictedToken` transform; today it always fails before spawn, with
//! [`WindowsSandboxError::UnsupportedPlatform`] on every non-Windows host — never a silent
//! unconfined run.
//!
//! # What a Windows backend must do
//! A backend is correct when the same probe suite that judges Linux (`spec 05 §Required tests`)
//! finds no escape for `:read-only`, `:workspace` (network off and on) and a deny-read profile.
//! Concretely it must:
//! - **Identity.** Start the command with a restricted token derived from the user's: every
//!   privilege removed except change-notify, the Administrators and other powerful groups made
//!   deny-only, and a restricting SID list holding a per-sandbox capability SID, the logon SID
//!   and `Everyone`, so every access check must pass for both the user and the restricted set.
//!   `elevated` runs the command as a dedicated, low-privilege local sandbox account created by
//!   a one-time elevated setup helper, which also owns the firewall rules below; it must refuse
//!   to run (not fall back to `restricted-token`) when that setup is missing.
//! - **Filesystem.** Grant the capability SID write access (inheritable ACEs) on each writable
//!   root from `get_writable_roots`, add deny-write ACEs on every read-only subpath (`.git`,
//!   its `gitdir:` target, `.agents`, `.codex`, `.aws`, narrower entries — creating absent
//!   protected names as empty read-only directories or refusing the root), and deny-read ACEs
//!   on deny paths and on every existing match of a deny glob (bounded like Linux: depth from
//!   `glob_scan_max_depth`, 8,192 matches at most, else an error). Restricted-read profiles
//!   need read ACEs for the readable roots and the system directories of `:minimal`. ACEs
//!   added for a run are removed afterwards, or kept in a persistent per-workspace state that
//!   is reconciled before the next run. Paths are compared after resolving junctions and
//!   symlinks; a protected path reached through a writable reparse point is an error.
//! - **Network.** When the network is restricted, block outbound and inbound traffic of the
//!   sandbox identity (Windows Filtering Platform filter or firewall rule keyed to the
//!   capability SID or the sandbox account), allowing only the loopback ports of a managed
//!   proxy; set `AIRLOCK_SANDBOX_NETWORK_DISABLED=1` and `CODEX_SANDBOX_NETWORK_DISABLED=1`.
//! - **Process containment.** Put the command in a job object with kill-on-close, no breakaway
//!   and UI restrictions (no clipboard, global atoms, desktop switching or system settings);
//!   optionally on a private desktop (`windowsSandboxPrivateDesktop`), so it cannot drive the
//!   user's windows. Child processes inherit all of the above.
//! - **Reporting.** Say before spawn, with the fix, when something cannot be enforced (no
//!   setup for `elevated`, an ACL that cannot be written, a filesystem without ACLs); set
//!   `AIRLOCK_SANDBOX=windows`; map access-denied failures so `is_likely_sandbox_denied`
//!   recognises them.

use std::fmt;

use serde::Deserialize;
use serde::Serialize;
use thiserror::Error;

use crate::sandbox_type::SandboxType;
use crate::sandbox_type::platform_sandbox_for;

/// How strongly a command is confined on Windows.
///
/// JSON (kebab-case, the exec-server's `windowsSandboxLevel`): `"disabled"`,
/// `"restricted-token"`, `"elevated"`; the spelling `"restricted_token"` of spec 05 is accepted
/// when reading. Default: `disabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowsSandboxLevel {
    /// No Windows sandbox: a Windows host selects [`SandboxType::None`].
    #[default]
    Disabled,
    /// A restricted token of the current user (no setup needed).
    #[serde(alias = "restricted_token")]
    RestrictedToken,
    /// A dedicated sandbox account prepared by an elevated setup step.
    Elevated,
}

impl WindowsSandboxLevel {
    /// Whether a Windows host should confine commands at all (level ≠ `disabled`).
    #[must_use]
    pub const fn is_enabled(self) -> bool {
        !matches!(self, Self::Disabled)
    }

    /// The wire name (`"disabled"`, `"restricted-token"`, `"elevated"`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::RestrictedToken => "restricted-token",
            Self::Elevated => "elevated",
        }
    }

    /// The platform sandbox of an OS (`std::env::consts::OS` value) at this level: macOS →
    /// Seatbelt and Linux → LinuxSeccomp whatever the level; Windows →
    /// `WindowsRestrictedToken` only when the level is enabled (reference
    /// `orchestrator-and-approvals.md` step 2); anything else → `None`.
    #[must_use]
    pub fn platform_sandbox_for(self, os: &str) -> Option<SandboxType> {
        platform_sandbox_for(os, self.is_enabled())
    }

    /// [`Self::platform_sandbox_for`] on this host.
    #[must_use]
    pub fn platform_sandbox(self) -> Option<SandboxType> {
        self.platform_sandbox_for(std::env::consts::OS)
    }
}

impl fmt::Display for WindowsSandboxLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a Windows transform cannot produce a launch. Each message names the fix.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WindowsSandboxError {
    /// The Windows sandbox was selected on a host that is not Windows.
    #[error(
        "cannot run `{program}` in the Windows sandbox (level `{level}`): this host is {os}, and the \
         Windows sandbox exists only on Windows; use this host's own sandbox or a Windows exec-server"
    )]
    UnsupportedPlatform {
        /// `std::env::consts::OS` of the host.
        os: String,
        /// The requested level.
        level: WindowsSandboxLevel,
        /// The command's program (first argv element; empty when there is none).
        program: String,
    },
    /// The Windows sandbox was selected while its level is `disabled`.
    #[error(
        "cannot run `{program}` in the Windows sandbox: its level is `disabled`; set the level to \
         `restricted-token` or `elevated`, or select no sandbox"
    )]
    Disabled {
        /// The command's program.
        program: String,
    },
    /// A Windows host, but this build of Airlock has no Windows backend.
    #[error(
        "cannot run `{program}` in the Windows sandbox (level `{level}`): this build of Airlock has \
         no Windows sandbox backend yet; run the command through an exec-server on a supported \
         platform or choose an unsandboxed profile explicitly"
    )]
    BackendUnavailable {
        /// The requested level.
        level: WindowsSandboxLevel,
        /// The command's program.
        program: String,
    },
}

/// The Windows transform of `command` at `level` on this host; see
/// [`create_windows_sandbox_command_for`].
///
/// # Errors
/// Always today: see [`create_windows_sandbox_command_for`].
pub fn create_windows_sandbox_command(
    command: &[String],
    level: WindowsSandboxLevel,
) -> Result<Vec<String>, WindowsSandboxError> {
    create_windows_sandbox_command_for(std::env::consts::OS, command, level)
}

/// The Windows transform for an explicit OS (`std::env::consts::OS` values): the argv that
/// would launch `command` under the Windows sandbox.
///
/// # Errors
/// [`WindowsSandboxError::UnsupportedPlatform`] when `os` is not `"windows"` (spec 05
/// §Windows), then [`WindowsSandboxError::Disabled`] for level `disabled`, then
/// [`WindowsSandboxError::BackendUnavailable`] (no backend exists yet).
pub fn create_windows_sandbox_command_for(
    os: &str,
    command: &[String],
    level: WindowsSandboxLevel,
) -> Result<Vec<String>, WindowsSandboxError> {
    let program = command.first().cloned().unwrap_or_default();
    if os != "windows" {
        return Err(WindowsSandboxError::UnsupportedPlatform {
            os: os.to_owned(),
            level,
            program,
        });
    }
    if !level.is_enabled() {
        return Err(WindowsSandboxError::Disabled { program });
    }
    Err(WindowsSandboxError::BackendUnavailable { level, program })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn wire_names_are_kebab_case() {
        for (level, json) in [
            (WindowsSandboxLevel::Disabled, "\"disabled\""),
            (WindowsSandboxLevel::RestrictedToken, "\"restricted-token\""),
            (WindowsSandboxLevel::Elevated, "\"elevated\""),
        ] {
            assert_eq!(serde_json::to_string(&level).unwrap(), json);
            assert_eq!(
                serde_json::from_str::<WindowsSandboxLevel>(json).unwrap(),
                level
            );
            assert_eq!(format!("\"{level}\""), json);
        }
    }

    #[test]
    fn spec_spelling_is_accepted_on_input() {
        assert_eq!(
            serde_json::from_str::<WindowsSandboxLevel>("\"restricted_token\"").unwrap(),
            WindowsSandboxLevel::RestrictedToken
        );
        assert!(serde_json::from_str::<WindowsSandboxLevel>("\"restricted\"").is_err());
    }

    #[test]
    fn default_is_disabled() {
        assert_eq!(
            WindowsSandboxLevel::default(),
            WindowsSandboxLevel::Disabled
        );
        assert!(!WindowsSandboxLevel::Disabled.is_enabled());
        assert!(WindowsSandboxLevel::RestrictedToken.is_enabled());
        assert!(WindowsSandboxLevel::Elevated.is_enabled());
    }

    #[test]
    fn selection_on_windows_depends_on_the_level() {
        assert_eq!(
            WindowsSandboxLevel::Disabled.platform_sandbox_for("windows"),
            None
        );
        for level in [
            WindowsSandboxLevel::RestrictedToken,
            WindowsSandboxLevel::Elevated,
        ] {
            assert_eq!(
                level.platform_sandbox_for("windows"),
                Some(SandboxType::WindowsRestrictedToken)
            );
        }
    }

    #[test]
    fn selection_elsewhere_ignores_the_level() {
        for level in [WindowsSandboxLevel::Disabled, WindowsSandboxLevel::Elevated] {
            assert_eq!(
                level.platform_sandbox_for("linux"),
                Some(SandboxType::LinuxSeccomp)
            );
            assert_eq!(
                level.platform_sandbox_for("macos"),
                Some(SandboxType::MacosSeatbelt)
            );
        }
    }

    #[test]
    fn transform_off_windows_is_unsupported_platform() {
        let error = create_windows_sandbox_command_for(
            "linux",
            &argv(&["git", "status"]),
            WindowsSandboxLevel::RestrictedToken,
        )
        .unwrap_err();
        assert_eq!(
            error,
            WindowsSandboxError::UnsupportedPlatform {
                os: "linux".to_owned(),
                level: WindowsSandboxLevel::RestrictedToken,
                program: "git".to_owned(),
            }
        );
        assert!(error.to_string().contains("this host is linux"));
    }

    #[test]
    fn transform_on_this_host_is_unsupported_unless_windows() {
        let result = create_windows_sandbox_command(&argv(&["ls"]), WindowsSandboxLevel::Elevated);
        if cfg!(not(windows)) {
            assert!(matches!(
                result,
                Err(WindowsSandboxError::UnsupportedPlatform { .. })
            ));
        }
    }

    #[test]
    fn transform_on_windows_reports_disabled_then_missing_backend() {
        assert_eq!(
            create_windows_sandbox_command_for(
                "windows",
                &argv(&["dir"]),
                WindowsSandboxLevel::Disabled
            ),
            Err(WindowsSandboxError::Disabled {
                program: "dir".to_owned()
            })
        );
        assert_eq!(
            create_windows_sandbox_command_for("windows", &[], WindowsSandboxLevel::Elevated),
            Err(WindowsSandboxError::BackendUnavailable {
                level: WindowsSandboxLevel::Elevated,
                program: String::new(),
            })
        );
    }
}
