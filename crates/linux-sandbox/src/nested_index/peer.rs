//! Who is at the other end of an index socket. The daemon is a trust boundary: a
//! sandboxed process runs as the same user and can `connect()` to a socket on a
//! read-only bind mount, so the user id alone proves nothing. What a sandboxed process
//! cannot share is the host's mount namespace (bubblewrap always makes a new one), so both
//! sides require the peer (`SO_PEERCRED`: the connecting process for the daemon, the
//! listening process for the client) to run as this user in this process's mount
//! namespace (`/proc/PID/ns/mnt` compared by device and inode).
//!
//! Limitation: `SO_PEERCRED` names the process as it was at `connect()`/`listen()`; a peer
//! that exits and whose PID is reused by a host process within the connection's life
//! would pass. The protocol is query-only (an outcome computed from the real tree), so
//! such a peer could learn the names of repositories, never change what any launch sees.

use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::os::unix::net::UnixStream;
use std::path::Path;

use crate::fs_kind::effective_uid;

fn namespace(path: &str) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether the peer of `stream` runs as this user in this mount namespace.
#[must_use]
pub fn trusted_peer(stream: &UnixStream) -> bool {
    let Ok(cred) = rustix::net::sockopt::socket_peercred(stream) else {
        return false;
    };
    if cred.uid.as_raw() != effective_uid() {
        return false;
    }
    let pid = cred.pid.as_raw_pid();
    let mine = namespace("/proc/self/ns/mnt");
    mine.is_some() && mine == namespace(&format!("/proc/{pid}/ns/mnt"))
}

/// Whether `dir` is a directory owned by this user that nobody else can enter or change
/// (mode `0700` or stricter), not a symbolic link.
#[must_use]
pub fn private_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == effective_uid() && m.mode() & 0o077 == 0)
}

/// The identity (`st_dev`, `st_ino`) of the socket file at `path` when it is a socket
/// owned by this user and not accessible to others.
#[must_use]
pub fn own_socket(path: &Path) -> Option<(u64, u64)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    (m.file_type().is_socket() && m.uid() == effective_uid() && m.mode() & 0o077 == 0)
        .then(|| (m.dev(), m.ino()))
}
