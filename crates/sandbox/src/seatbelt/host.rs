//! Facts about the macOS host that the policy needs (reference `seatbelt.md` §1).

use std::path::PathBuf;
use std::sync::OnceLock;

/// `getconf` prints `confstr` values by name; used instead of an FFI call (the workspace denies
/// `unsafe`). Absolute, like `sandbox-exec`, never a PATH lookup.
const GETCONF: &str = "/usr/bin/getconf";

/// The canonical per-user cache directory on macOS (`DARWIN_USER_CACHE_DIR`), probed once per
/// process; `None` on other systems or when the probe fails.
pub(crate) fn host_darwin_user_cache_dir() -> Option<PathBuf> {
    static CACHE_DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    CACHE_DIR
        .get_or_init(|| {
            if !cfg!(target_os = "macos") {
                return None;
            }
            let output = std::process::Command::new(GETCONF)
                .arg("DARWIN_USER_CACHE_DIR")
                .output()
                .ok()
                .filter(|output| output.status.success())?;
            let text = String::from_utf8(output.stdout).ok()?;
            let dir = PathBuf::from(text.trim());
            if !dir.is_absolute() {
                return None;
            }
            Some(std::fs::canonicalize(&dir).unwrap_or(dir))
        })
        .clone()
}
