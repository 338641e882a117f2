//! Was a failure caused by the sandbox? (spec 05 §Denial detection)

use crate::sandbox_type::SandboxType;

/// What a finished command produced, as far as denial detection cares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOutput {
    /// Exit code (`128 + signal` for a signal death, as shells report it).
    pub exit_code: i32,
    /// Captured stdout (possibly truncated).
    pub stdout: String,
    /// Captured stderr (possibly truncated).
    pub stderr: String,
    /// Bytes of stdout past the capture's limit, not kept in `stdout` (still streamed to a
    /// live client); 0 when nothing was cut.
    pub stdout_dropped_bytes: u64,
    /// As `stdout_dropped_bytes`, for stderr.
    pub stderr_dropped_bytes: u64,
}

/// Output fragments that point at the sandbox (matched case-insensitively).
const DENIAL_HINTS: [&str; 7] = [
    "operation not permitted",
    "permission denied",
    "read-only file system",
    "seccomp",
    "sandbox",
    "landlock",
    "failed to write file",
];

/// Exit codes that are never the sandbox's doing: misuse (2), not executable (126),
/// not found (127).
const NEVER_SANDBOX_EXIT_CODES: [i32; 3] = [2, 126, 127];

/// `128 + SIGSYS`: a seccomp kill.
const SIGSYS_EXIT_CODE: i32 = 128 + 31;

/// Spec 05 §Denial detection, in order: false for `SandboxType::None` or exit 0; true
/// if any output contains one of the hints; false for exit codes 2, 126, 127; true on
/// Linux for exit 159 (SIGSYS); false otherwise.
pub fn is_likely_sandbox_denied(sandbox_type: SandboxType, output: &ExecOutput) -> bool {
    if sandbox_type == SandboxType::None || output.exit_code == 0 {
        return false;
    }
    let mentions_denial = [&output.stdout, &output.stderr].iter().any(|text| {
        let lower = text.to_lowercase();
        DENIAL_HINTS.iter().any(|hint| lower.contains(hint))
    });
    if mentions_denial {
        return true;
    }
    if NEVER_SANDBOX_EXIT_CODES.contains(&output.exit_code) {
        return false;
    }
    sandbox_type == SandboxType::LinuxSeccomp && output.exit_code == SIGSYS_EXIT_CODE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(exit_code: i32, stderr: &str) -> ExecOutput {
        ExecOutput {
            exit_code,
            stdout: String::new(),
            stderr: stderr.into(),
            ..ExecOutput::default()
        }
    }

    #[test]
    fn table() {
        use SandboxType::{LinuxSeccomp as L, MacosSeatbelt as M, None as N};
        let cases: &[(SandboxType, i32, &str, bool)] = &[
            (N, 1, "Permission denied", false),
            (L, 0, "Permission denied", false),
            (L, 1, "touch: cannot touch 'x': Read-only file system", true),
            (L, 1, "OPERATION NOT PERMITTED", true),
            (M, 1, "sandbox-exec: denied", true),
            (L, 1, "landlock: restricted", true),
            (L, 1, "error: failed to write file foo", true),
            (L, 1, "seccomp", true),
            (L, 126, "permission denied", true),
            (L, 2, "usage: foo", false),
            (L, 126, "cannot execute", false),
            (L, 127, "command not found", false),
            (L, 159, "", true),
            (M, 159, "", false),
            (L, 1, "compile error", false),
            (L, 137, "", false),
        ];
        for (sandbox, code, stderr, expected) in cases {
            assert_eq!(
                is_likely_sandbox_denied(*sandbox, &out(*code, stderr)),
                *expected,
                "{sandbox:?} {code} {stderr:?}"
            );
        }
        let in_stdout = ExecOutput {
            exit_code: 1,
            stdout: "Permission denied".into(),
            stderr: String::new(),
            ..ExecOutput::default()
        };
        assert!(is_likely_sandbox_denied(L, &in_stdout));
    }
}
