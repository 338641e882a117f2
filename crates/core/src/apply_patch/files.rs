//! How the parent reads the files it verifies: with the sandbox's view, not its own (spec 11
//! §Verification: "a path that the profile denies reading is ... never read, never shown").
//!
//! The parent runs unconfined, so without this an agent could learn what the sandbox hides
//! through the verifier: the diff shown to a reviewer, or the success / failure of a match
//! (an `@@` prefix context is a byte-by-byte oracle). Reads are refused for a path the profile
//! does not let the sandbox read (deny entries, deny globs, no read entry at all) and for the
//! kernel's pseudo-filesystems (`/proc`, `/sys`, `/dev`: the sandbox has its own), judged on
//! the path as written *and* on the file actually opened (its `/proc/self/fd` link), so a
//! symlink swapped in between does not help.

use std::path::Path;
use std::path::PathBuf;

use airlock_patch::ReadFile;
use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ReadDenyMatcher;
use airlock_permissions::ResolveContext;
use airlock_protocol::FileSystemSandboxPolicy;

use super::helper::open_for_reading;
use super::helper::read_regular_file;

/// The error text of a refused read.
pub const READ_NOT_ALLOWED: &str = "the permission profile does not allow reading it";

/// Pseudo-filesystems whose content differs inside the sandbox.
const PSEUDO_ROOTS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Reads through the profile's read rules (see the module docs).
#[derive(Debug)]
pub struct PolicyFiles<'a> {
    fs_policy: &'a FileSystemSandboxPolicy,
    ctx: ResolveContext,
    denied: ReadDenyMatcher,
}

impl<'a> PolicyFiles<'a> {
    /// Reads allowed by `fs_policy`, with symbolic entries resolved against `policy_cwd`.
    #[must_use]
    pub fn new(fs_policy: &'a FileSystemSandboxPolicy, policy_cwd: &Path) -> Self {
        let ctx = ResolveContext::new(policy_cwd);
        let denied = ReadDenyMatcher::new(fs_policy, &ctx);
        Self {
            fs_policy,
            ctx,
            denied,
        }
    }

    fn allowed(&self, path: &Path) -> bool {
        !PSEUDO_ROOTS.iter().any(|root| path.starts_with(root))
            && !self.denied.is_read_denied(path)
            && self.fs_policy.resolve_access(path, &self.ctx).can_read()
    }
}

impl ReadFile for PolicyFiles<'_> {
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let refused =
            || std::io::Error::new(std::io::ErrorKind::PermissionDenied, READ_NOT_ALLOWED);
        if !self.allowed(path) {
            return Err(refused());
        }
        let file = open_for_reading(path)?;
        if !opened_path(&file, path).is_some_and(|real| self.allowed(&real)) {
            return Err(refused());
        }
        read_regular_file(file)
    }
}

/// The real path of the opened file (`None` when it cannot be told: the read is refused).
fn opened_path(file: &std::fs::File, path: &Path) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        let _ = path;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        std::fs::canonicalize(path).ok()
    }
}
