//! The part of a bubblewrap launch that depends only on the profile, the configuration
//! and the host's root-owned bubblewrap (issue 13 item 3: a long-running server computes
//! it once per thread and profile instead of once per command).
//!
//! What is in it, and why nothing a confined command does can make it stale:
//! - the trusted bubblewrap executable ([`crate::bwrap_path::choose_bwrap`] for the
//!   profile's writable roots): the check established that the file and every directory
//!   above it are root-owned, not writable by group or others and outside every writable
//!   root, so no sandboxed command (never root on the host, capabilities dropped) can
//!   replace them. The file is still re-identified on every launch
//!   ([`BwrapBase::is_current`]: device, inode, size, mode, owner, change time) so an
//!   upgrade by the administrator makes the next launch recompute everything;
//! - its features (`bwrap --version` and the `/proc` trial, see [`crate::probe`]). Only a
//!   *positive* `/proc` result is kept: "cannot mount `/proc`" is asked again on every
//!   launch ([`BwrapBase::features`]), so a transient failure never makes later launches
//!   run without a fresh `/proc`;
//! - the compiled seccomp programs (BPF bytes), a pure function of the network mode and
//!   the CPU.
//!
//! What is not in it, and is recomputed for every launch by
//! [`crate::launch::prepare_bwrap_with`]: the mount plan (the nested scan for `.git`
//! directories and pointer files, protected metadata, `$HOME` placeholders, symlink
//! checks, deny globs), the descriptors, the working directory and the command.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use airlock_protocol::{FileSystemSandboxPolicy, NetworkSandboxPolicy};

use crate::bwrap_path::choose_bwrap;
use crate::launch::LaunchError;
use crate::probe::BwrapFeatures;
use crate::seccomp::{NetworkSeccompMode, build_filter, build_userns_filters, program_bytes};

const UNREADABLE: &str =
    "could not run `bwrap --version`; check the bubblewrap installation with `airlock doctor`";

/// What identifies the bubblewrap file between launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    uid: u32,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

fn identity(path: &Path) -> Option<FileIdentity> {
    let meta = std::fs::metadata(path).ok()?;
    Some(FileIdentity {
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        mode: meta.mode(),
        uid: meta.uid(),
        ctime: (meta.ctime(), meta.ctime_nsec()),
        mtime: (meta.mtime(), meta.mtime_nsec()),
    })
}

/// The profile- and host-level inputs of a bubblewrap launch (module docs).
#[derive(Debug, Clone)]
pub struct BwrapBase {
    bwrap: PathBuf,
    identity: FileIdentity,
    features: BwrapFeatures,
    seccomp_programs: Vec<Vec<u8>>,
}

impl BwrapBase {
    /// Chooses and checks bubblewrap for `policy` (writable roots resolved against
    /// `policy_cwd`), reads its features and compiles the seccomp programs the command runs
    /// under: the filesystem-and-network filter for `network` (or, with `proxied`, the
    /// bridge's outer filter, which keeps `AF_UNIX`), then the two user-namespace filters.
    ///
    /// # Errors
    /// [`LaunchError::Bwrap`] for a missing or untrusted bubblewrap,
    /// [`LaunchError::Unsupported`] for one that cannot be run or is older than 0.5,
    /// [`LaunchError::Seccomp`] when a program cannot be compiled.
    pub fn compute(
        configured_bwrap: Option<&Path>,
        policy: &FileSystemSandboxPolicy,
        policy_cwd: &Path,
        network: NetworkSandboxPolicy,
        proxied: bool,
    ) -> Result<Self, LaunchError> {
        let bwrap = choose_bwrap(
            configured_bwrap,
            &crate::bwrap_path::writable_roots(policy, policy_cwd),
        )?
        .path;
        let identity = identity(&bwrap).ok_or(LaunchError::Unsupported(
            "could not inspect the bubblewrap executable; check it with `airlock doctor`",
        ))?;
        let features =
            crate::probe::bwrap_features(&bwrap).ok_or(LaunchError::Unsupported(UNREADABLE))?;
        if !features.add_seccomp_fd {
            return Err(LaunchError::Unsupported(
                "bubblewrap 0.5 or newer is required (it must accept --add-seccomp-fd); upgrade the bubblewrap package",
            ));
        }
        // With a managed network the first process is the bridge, which needs `AF_UNIX` to
        // reach the proxy socket; the command's own, stricter filter is added by the bridge.
        let outer_mode = if proxied || network.is_enabled() {
            NetworkSeccompMode::Enabled
        } else {
            NetworkSeccompMode::Restricted
        };
        let [userns, clone3] = build_userns_filters()?;
        let seccomp_programs = [build_filter(outer_mode)?, userns, clone3]
            .iter()
            .map(program_bytes)
            .collect();
        Ok(Self {
            bwrap,
            identity,
            features,
            seccomp_programs,
        })
    }

    /// The bubblewrap executable to run.
    #[must_use]
    pub fn bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// Whether the bubblewrap file is still the one that was checked (same device, inode,
    /// size, mode, owner, change and modification times). A `false` means: compute a new
    /// base before launching.
    #[must_use]
    pub fn is_current(&self) -> bool {
        identity(&self.bwrap) == Some(self.identity)
    }

    /// The features for this launch: the cached ones, except that a negative `/proc`
    /// result is probed again (module docs).
    ///
    /// # Errors
    /// [`LaunchError::Unsupported`] when that new probe cannot run `bwrap --version`.
    pub fn features(&self) -> Result<BwrapFeatures, LaunchError> {
        if self.features.proc_mount_ok {
            return Ok(self.features);
        }
        crate::probe::bwrap_features(&self.bwrap).ok_or(LaunchError::Unsupported(UNREADABLE))
    }

    /// The compiled seccomp programs, in the order they are passed (`--add-seccomp-fd`).
    #[must_use]
    pub fn seccomp_programs(&self) -> &[Vec<u8>] {
        &self.seccomp_programs
    }
}
