//! What the system bubblewrap and kernel can do, probed once and cached (issue 4:
//! no per-run `--help` probe, no per-run trial sandbox).
//!
//! The cache (`$XDG_CACHE_HOME/airlock/bwrap-features.json`, else
//! `~/.cache/airlock/...`) is keyed by the bwrap binary (path, size, mtime) and the
//! kernel release. Only a *positive* `/proc` result is trusted from the cache: a
//! cached "cannot mount /proc" is re-checked by a trial before Airlock runs without a
//! fresh `/proc`, so a tampered cache cannot quietly weaken the sandbox; every other
//! cached value can at worst make the launch fail.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// Capabilities of one bwrap binary on this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BwrapFeatures {
    /// `(major, minor, patch)` from `bwrap --version`.
    pub version: (u32, u32, u32),
    /// `--disable-userns` exists (bubblewrap ≥ 0.8).
    pub disable_userns: bool,
    /// `--add-seccomp-fd` exists (bubblewrap ≥ 0.5).
    pub add_seccomp_fd: bool,
    /// A fresh `/proc` can be mounted in a new pid namespace.
    pub proc_mount_ok: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheEntry {
    key: String,
    features: BwrapFeatures,
}

/// Parses `bubblewrap 0.8.0` (or a bare `0.8.0`).
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let word = text
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))?;
    let mut parts = word.split('.').map(|p| {
        p.trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse::<u32>()
            .ok()
    });
    Some((
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
        parts.next().flatten().unwrap_or(0),
    ))
}

fn cache_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("airlock").join("bwrap-features.json"))
}

fn cache_key(bwrap: &Path) -> Option<String> {
    let meta = std::fs::metadata(bwrap).ok()?;
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    Some(format!(
        "{}|{}|{}.{}|{}",
        bwrap.display(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        kernel.trim()
    ))
}

fn proc_trial(bwrap: &Path) -> bool {
    Command::new(bwrap)
        .args([
            "--unshare-user",
            "--unshare-pid",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn probe(bwrap: &Path) -> Option<BwrapFeatures> {
    let out = Command::new(bwrap)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let version = parse_version(&String::from_utf8_lossy(&out.stdout))?;
    Some(BwrapFeatures {
        version,
        disable_userns: version >= (0, 8, 0),
        add_seccomp_fd: version >= (0, 5, 0),
        proc_mount_ok: proc_trial(bwrap),
    })
}

/// The features of `bwrap`, from the cache when it matches, else probed (and cached).
/// `None` when `bwrap --version` cannot be run or read.
pub fn bwrap_features(bwrap: &Path) -> Option<BwrapFeatures> {
    let key = cache_key(bwrap)?;
    let path = cache_path();
    if let Some(path) = &path
        && let Ok(text) = std::fs::read_to_string(path)
        && let Ok(entry) = serde_json::from_str::<CacheEntry>(&text)
        && entry.key == key
    {
        let mut features = entry.features;
        if !features.proc_mount_ok {
            features.proc_mount_ok = proc_trial(bwrap);
        }
        return Some(features);
    }
    let features = probe(bwrap)?;
    if let Some(path) = &path {
        store(path, &CacheEntry { key, features });
    }
    Some(features)
}

/// Best effort: a cache that cannot be written only costs a probe next time.
fn store(path: &Path, entry: &CacheEntry) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_string(entry) else {
        return;
    };
    let tmp = dir.join(format!(".bwrap-features.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("bubblewrap 0.8.0\n"), Some((0, 8, 0)));
        assert_eq!(parse_version("bubblewrap 0.11.0-rc1"), Some((0, 11, 0)));
        assert_eq!(parse_version("0.4"), Some((0, 4, 0)));
        assert_eq!(parse_version("bubblewrap"), None);
    }
}
