//! The `unix_sockets` allowlist of a managed network (spec 12 §Config: `"<abs path>" =
//! "allow"`, bind-mounted in, every other socket unreachable), enforced on Linux.
//!
//! seccomp cannot tell one socket path from another (the address is a pointer), so the
//! command's `connect` calls are handed to a supervisor instead (`SECCOMP_RET_USER_NOTIF`):
//! the in-sandbox bridge, which starts before the command and never runs its code. For
//! each call the supervisor copies the address out of the caller's memory once, takes a
//! duplicate of the caller's socket (`pidfd_getfd`) and performs the `connect` itself on
//! that duplicate, so what is connected is exactly what was checked — the caller cannot
//! change the address or the descriptor afterwards (no `SECCOMP_USER_NOTIF_FLAG_CONTINUE`
//! is ever answered):
//! - an `AF_UNIX` path is opened (`O_PATH`, in the caller's working directory when
//!   relative) and the object it names is compared, by device and inode, with the
//!   allowed sockets the bridge opened before the command started; only a match is
//!   connected, and then through the bridge's own descriptor of the allowed socket, never
//!   through the caller's path. Symbolic links, hard links, `/proc/self/fd/N` and
//!   sockets created in writable directories therefore reach an allowed socket or nothing;
//! - abstract and unnamed `AF_UNIX` addresses, and every other family, are connected as
//!   given: the sandbox has its own network namespace, whose abstract socket namespace
//!   and loopback hold only the sandbox's own endpoints (the bridge).
//!
//! Datagram `AF_UNIX` sockets stay refused by the command's filter
//! ([`crate::seccomp::NetworkSeccompMode::ProxyRoutedUnixSockets`]): `sendmsg` can
//! address any socket path without `connect`.
//!
//! Current limitations: only the allowed sockets are reachable by path, so sockets the
//! command creates itself (a server it starts in the workspace) cannot be connected to by
//! path either; abstract names work for that. A command that makes itself non-dumpable (`PR_SET_DUMPABLE` 0)
//! cannot be inspected by the supervisor, so its `connect` calls fail (`EPERM`, fail
//! closed); a connection made for the command carries the bridge's credentials
//! (`SO_PEERCRED` names the bridge's pid, same uid); a blocking `connect` interrupted
//! by a signal before the supervisor took it is restarted and may then report
//! `EISCONN`/`EALREADY` (kernels with `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, 5.19+,
//! no longer interrupt it once taken).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The largest address `connect` accepts (`sizeof(struct sockaddr_storage)`).
const MAX_ADDRESS: usize = 128;
/// `offsetof(struct sockaddr_un, sun_path)`.
const SUN_PATH_OFFSET: usize = 2;

/// The allowed sockets, each opened (`O_PATH`) before the command starts: the descriptor
/// pins the socket the entry named at that moment.
#[derive(Debug)]
pub struct UnixSocketAllowlist {
    sockets: Vec<AllowedSocket>,
}

#[derive(Debug)]
struct AllowedSocket {
    path: PathBuf,
    file: File,
    dev: u64,
    ino: u64,
}

/// An allow entry that cannot be used as a socket: it stays unreachable, like every
/// unlisted socket (the launcher warns).
#[derive(Debug, thiserror::Error)]
#[error("network.unix_sockets entry {} is not reachable from the sandbox: {reason}", path.display())]
pub struct AllowlistError {
    /// The entry.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

impl UnixSocketAllowlist {
    /// Opens every path (absolute, as seen inside the sandbox).
    ///
    /// # Errors
    /// [`AllowlistError`] for a path that is missing or not a socket.
    pub fn open(paths: &[PathBuf]) -> Result<Self, AllowlistError> {
        let mut sockets = Vec::with_capacity(paths.len());
        for path in paths {
            let error = |reason: String| AllowlistError {
                path: path.clone(),
                reason,
            };
            let file = open_path(path).map_err(|e| error(e.to_string()))?;
            let meta = file.metadata().map_err(|e| error(e.to_string()))?;
            if !meta.file_type().is_socket() {
                return Err(error("not a socket".to_owned()));
            }
            sockets.push(AllowedSocket {
                path: path.clone(),
                file,
                dev: meta.dev(),
                ino: meta.ino(),
            });
        }
        Ok(Self { sockets })
    }

    /// Whether no socket is allowed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sockets.is_empty()
    }

    /// The allowed socket that is the object `(dev, ino)`.
    fn find(&self, dev: u64, ino: u64) -> Option<&AllowedSocket> {
        self.sockets
            .iter()
            .find(|socket| socket.dev == dev && socket.ino == ino)
    }

    /// The allowed paths (for messages).
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.sockets.iter().map(|socket| socket.path.as_path())
    }
}

/// `open(path, O_PATH | O_CLOEXEC)`, following symbolic links: a handle on the object
/// itself, without opening it (no device is opened, no FIFO waits).
fn open_path(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)
}

/// The decision for one `connect` address (exposed for tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnixTarget {
    /// Not a path: connect the bytes as given (another family, abstract or unnamed).
    AsGiven,
    /// A socket path to resolve: absolute, or relative to the caller's cwd.
    Path(PathBuf),
}

/// Classifies a `connect` address: `Path` for an `AF_UNIX` pathname address (the bytes up
/// to the first NUL, as the kernel reads them), `AsGiven` otherwise. `None` when the
/// address is too short to carry a family.
#[must_use]
pub fn classify(address: &[u8]) -> Option<UnixTarget> {
    let family = u16::from_ne_bytes([*address.first()?, *address.get(1)?]);
    if i32::from(family) != libc::AF_UNIX {
        return Some(UnixTarget::AsGiven);
    }
    let raw = &address[SUN_PATH_OFFSET..];
    match raw.first() {
        None | Some(0) => Some(UnixTarget::AsGiven),
        Some(_) => {
            let end = raw.iter().position(|byte| *byte == 0).unwrap_or(raw.len());
            Some(UnixTarget::Path(PathBuf::from(OsStr::from_bytes(
                &raw[..end],
            ))))
        }
    }
}

/// Where the supervisor opens a caller's socket path: relative paths under the caller's
/// `/proc/<tid>/cwd`, and `/proc/self` / `/proc/thread-self` rewritten to the caller (so
/// `/proc/self/fd/N` names the caller's descriptor, not the supervisor's). Any other
/// spelling resolves in the supervisor's view of the same mount namespace; whatever it
/// names, only an allowed socket is ever connected.
#[must_use]
pub fn caller_view(path: &Path, tgid: u32, tid: u32) -> PathBuf {
    let bytes = path.as_os_str().as_bytes();
    if !bytes.starts_with(b"/") {
        return PathBuf::from(format!("/proc/{tid}/cwd")).join(path);
    }
    for (prefix, replacement) in [
        (&b"/proc/self"[..], format!("/proc/{tgid}")),
        (
            &b"/proc/thread-self"[..],
            format!("/proc/{tgid}/task/{tid}"),
        ),
    ] {
        if let Some(rest) = bytes.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with(b"/"))
        {
            let mut out = replacement.into_bytes();
            out.extend_from_slice(rest);
            return PathBuf::from(OsStr::from_bytes(&out));
        }
    }
    path.to_path_buf()
}

/// The compiled notification filter: `connect` → `SECCOMP_RET_USER_NOTIF`, everything
/// else allowed (the command's main filter, installed too, does the denying; a foreign
/// ABI falls through to it and is killed there).
fn notify_program() -> Vec<libc::sock_filter> {
    const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const ARCH: u32 = 0; // matches nothing: every call is allowed here, denied by the main filter's arch check
    let ins = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    vec![
        // A = seccomp_data.arch (offset 4)
        ins(LD_W_ABS, 0, 0, 4),
        ins(JEQ_K, 1, 0, ARCH),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
        // A = seccomp_data.nr (offset 0)
        ins(LD_W_ABS, 0, 0, 0),
        ins(JEQ_K, 0, 1, libc::SYS_connect as u32),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

/// Installs the notification filter on the calling thread (after the main filter, which
/// set `no_new_privs`) and returns the listener the supervisor reads. Irreversible.
///
/// # Errors
/// The kernel refused the filter (older than 5.0, or seccomp unavailable).
#[allow(unsafe_code)]
pub fn install_notify_filter() -> io::Result<OwnedFd> {
    let mut program = notify_program();
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).unwrap_or(u16::MAX),
        filter: program.as_mut_ptr(),
    };
    let new_listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    let mut last = io::Error::from_raw_os_error(libc::EINVAL);
    for flags in [
        new_listener | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
        new_listener,
    ] {
        // SAFETY: seccomp(SECCOMP_SET_MODE_FILTER) reads the `sock_fprog` and the
        // instructions it points to (both alive for the call) and returns a new
        // descriptor or -1; it writes no memory of ours.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &raw const fprog,
            )
        };
        if fd >= 0 {
            let fd = i32::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
            // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        last = io::Error::last_os_error();
        if last.raw_os_error() != Some(libc::EINVAL) {
            break;
        }
    }
    Err(last)
}

/// Serves the notifications of `listener` on a thread of its own until it fails (the
/// filter's last process exited). Each call is handled on a thread of its own, since a
/// `connect` may block; a call that gets no thread fails with `EAGAIN`.
///
/// # Errors
/// The serving thread could not be started (the caller must not start the command).
pub fn supervise(listener: OwnedFd, allowlist: UnixSocketAllowlist) -> io::Result<()> {
    let listener = Arc::new(listener);
    let allowlist = Arc::new(allowlist);
    std::thread::Builder::new()
        .name("airlock-unix-sockets".into())
        .spawn(move || {
            loop {
                let notification = match receive(&listener) {
                    Ok(notification) => notification,
                    Err(error) if is_retryable(&error) => continue,
                    Err(_) => return,
                };
                let id = notification.id;
                let serving = Arc::clone(&listener);
                let allowlist = Arc::clone(&allowlist);
                let spawned = std::thread::Builder::new().spawn(move || {
                    let result = handle(&serving, &allowlist, &notification);
                    respond(&serving, notification.id, result);
                });
                if spawned.is_err() {
                    respond(&listener, id, Err(libc::EAGAIN));
                }
            }
        })?;
    Ok(())
}

fn is_retryable(error: &io::Error) -> bool {
    // EINTR: a signal; ENOENT: the caller went away between notification and receipt.
    matches!(error.raw_os_error(), Some(libc::EINTR | libc::ENOENT))
}

/// One received notification (the fields the handler uses).
struct Notification {
    id: u64,
    tid: u32,
    nr: i32,
    args: [u64; 6],
}

#[allow(unsafe_code)]
fn receive(listener: &OwnedFd) -> io::Result<Notification> {
    // SAFETY: `seccomp_notif` is plain integers; all-zero is a valid value, and the
    // kernel requires the buffer to be zeroed.
    let mut raw: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: SECCOMP_IOCTL_NOTIF_RECV writes one `seccomp_notif` into `raw`, which is
    // exactly that type and lives for the call.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV as _,
            &raw mut raw,
        )
    };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(Notification {
        id: raw.id,
        tid: raw.pid,
        nr: raw.data.nr,
        args: raw.data.args,
    })
}

/// Whether the caller of notification `id` is still waiting for it (so the pid read
/// from it still names that caller).
#[allow(unsafe_code)]
fn still_valid(listener: &OwnedFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: SECCOMP_IOCTL_NOTIF_ID_VALID reads one u64 from the pointer.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _,
            &raw mut id,
        )
    };
    rc == 0
}

/// Answers notification `id`: `Ok(())` is a return value of 0, `Err(errno)` a failure.
#[allow(unsafe_code)]
fn respond(listener: &OwnedFd, id: u64, result: Result<(), i32>) {
    let mut response = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: result.err().map_or(0, |errno| -errno),
        flags: 0,
    };
    // SAFETY: SECCOMP_IOCTL_NOTIF_SEND reads one `seccomp_notif_resp` from the pointer.
    // A failure (the caller was interrupted or killed) needs no handling.
    let _ = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND as _,
            &raw mut response,
        )
    };
}

fn errno(error: &io::Error) -> i32 {
    error.raw_os_error().unwrap_or(libc::EPERM)
}

/// Performs the caller's `connect(fd, address, length)` as decided above. `Err(errno)` is
/// what the caller sees.
fn handle(
    listener: &OwnedFd,
    allowlist: &UnixSocketAllowlist,
    notification: &Notification,
) -> Result<(), i32> {
    if i64::from(notification.nr) != libc::SYS_connect {
        return Err(libc::EPERM);
    }
    let [fd, address, length, ..] = notification.args;
    let length = usize::try_from(length).map_err(|_| libc::EINVAL)?;
    if length > MAX_ADDRESS {
        return Err(libc::EINVAL);
    }
    let fd = i32::try_from(fd).map_err(|_| libc::EBADF)?;
    let tid = notification.tid;
    let tgid = thread_group(tid).ok_or(libc::EPERM)?;
    let pidfd = rustix::process::pidfd_open(
        rustix::process::Pid::from_raw(i32::try_from(tgid).map_err(|_| libc::EPERM)?)
            .ok_or(libc::EPERM)?,
        rustix::process::PidfdFlags::empty(),
    )
    .map_err(|error| error.raw_os_error())?;
    let mut bytes = vec![0u8; length];
    File::open(format!("/proc/{tid}/mem"))
        .and_then(|mem| mem.read_exact_at(&mut bytes, address))
        .map_err(|_| libc::EFAULT)?;
    // The pid named the caller when the address was read (pid reuse excluded).
    if !still_valid(listener, notification.id) {
        return Err(libc::EPERM);
    }
    let socket =
        rustix::process::pidfd_getfd(&pidfd, fd, rustix::process::PidfdGetfdFlags::empty())
            .map_err(|error| error.raw_os_error())?;
    match classify(&bytes).ok_or(libc::EINVAL)? {
        UnixTarget::AsGiven => connect_raw(&socket, &bytes),
        UnixTarget::Path(path) => {
            let target = open_path(&caller_view(&path, tgid, tid)).map_err(|e| errno(&e))?;
            let meta = target.metadata().map_err(|e| errno(&e))?;
            if !meta.file_type().is_socket() {
                return Err(libc::ECONNREFUSED);
            }
            let allowed = allowlist.find(meta.dev(), meta.ino()).ok_or(libc::EPERM)?;
            let via = format!("/proc/self/fd/{}", allowed.file.as_raw_fd());
            let address = rustix::net::SocketAddrUnix::new(via.as_str())
                .map_err(|error| error.raw_os_error())?;
            rustix::net::connect(&socket, &address).map_err(|error| error.raw_os_error())
        }
    }
}

/// `connect(socket, bytes)` with the supervisor's own copy of the address.
#[allow(unsafe_code)]
fn connect_raw(socket: &OwnedFd, bytes: &[u8]) -> Result<(), i32> {
    // SAFETY: sockaddr_storage is plain integers; all-zero is valid.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let length = bytes
        .len()
        .min(std::mem::size_of::<libc::sockaddr_storage>());
    // SAFETY: `length` fits both buffers; they do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), (&raw mut storage).cast::<u8>(), length);
    }
    let length = libc::socklen_t::try_from(length).map_err(|_| libc::EINVAL)?;
    // SAFETY: connect reads `length` bytes of `storage`, which holds at least that many.
    let rc = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            (&raw const storage).cast::<libc::sockaddr>(),
            length,
        )
    };
    if rc == -1 {
        Err(errno(&io::Error::last_os_error()))
    } else {
        Ok(())
    }
}

/// The thread group (process id) of thread `tid`, from `/proc/<tid>/status`.
fn thread_group(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Tgid:"))
        .and_then(|value| value.trim().parse().ok())
}

/// Canonical paths of the allow entries, and one problem per entry left out. An entry
/// must exist and be a socket itself: a symbolic link as the last component is left out,
/// so a link planted by an earlier command cannot redirect the entry; links among the
/// parent directories are resolved (`/var/run` → `/run`). An entry left out is simply
/// unreachable (fail closed), like every unlisted socket; deny entries need nothing.
#[must_use]
pub fn canonical_allow_entries<'a>(
    entries: impl IntoIterator<Item = &'a PathBuf>,
) -> (Vec<PathBuf>, Vec<AllowlistError>) {
    let mut out = BTreeSet::new();
    let mut problems = Vec::new();
    for entry in entries {
        match canonical_socket(entry) {
            Ok(path) => {
                out.insert(path);
            }
            Err(reason) => problems.push(AllowlistError {
                path: entry.clone(),
                reason,
            }),
        }
    }
    (out.into_iter().collect(), problems)
}

fn canonical_socket(entry: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::symlink_metadata(entry).map_err(|e| e.to_string())?;
    if meta.file_type().is_symlink() {
        return Err("it is a symbolic link; name the socket itself".to_owned());
    }
    if !meta.file_type().is_socket() {
        return Err("it is not a socket".to_owned());
    }
    let (Some(parent), Some(name)) = (entry.parent(), entry.file_name()) else {
        return Err("it is not a socket path".to_owned());
    };
    let parent = std::fs::canonicalize(parent).map_err(|e| e.to_string())?;
    Ok(parent.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix_address(path: &[u8]) -> Vec<u8> {
        let mut bytes = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        bytes.extend_from_slice(path);
        bytes
    }

    #[test]
    fn classifies_paths_abstract_unnamed_and_other_families() {
        assert_eq!(
            classify(&unix_address(b"/run/a.sock\0junk")),
            Some(UnixTarget::Path(PathBuf::from("/run/a.sock")))
        );
        assert_eq!(
            classify(&unix_address(b"rel.sock")),
            Some(UnixTarget::Path(PathBuf::from("rel.sock")))
        );
        assert_eq!(
            classify(&unix_address(b"\0abstract")),
            Some(UnixTarget::AsGiven)
        );
        assert_eq!(classify(&unix_address(b"")), Some(UnixTarget::AsGiven));
        let inet = (libc::AF_INET as u16).to_ne_bytes();
        assert_eq!(classify(&inet), Some(UnixTarget::AsGiven));
        assert_eq!(classify(&[1]), None);
    }

    #[test]
    fn caller_view_names_the_caller_not_the_supervisor() {
        assert_eq!(
            caller_view(Path::new("a.sock"), 7, 9),
            PathBuf::from("/proc/9/cwd/a.sock")
        );
        assert_eq!(
            caller_view(Path::new("/proc/self/fd/3"), 7, 9),
            PathBuf::from("/proc/7/fd/3")
        );
        assert_eq!(
            caller_view(Path::new("/proc/thread-self/fd/3"), 7, 9),
            PathBuf::from("/proc/7/task/9/fd/3")
        );
        assert_eq!(
            caller_view(Path::new("/proc/selfish"), 7, 9),
            PathBuf::from("/proc/selfish")
        );
        assert_eq!(
            caller_view(Path::new("/run/a.sock"), 7, 9),
            PathBuf::from("/run/a.sock")
        );
    }

    #[test]
    fn allow_entries_must_be_sockets_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let link = dir.path().join("link.sock");
        std::os::unix::fs::symlink(&socket, &link).unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let missing = dir.path().join("missing");
        let (canonical, problems) = canonical_allow_entries([&socket, &link, &file, &missing]);
        assert_eq!(
            canonical,
            vec![std::fs::canonicalize(dir.path()).unwrap().join("s.sock")]
        );
        let left_out: Vec<&PathBuf> = problems.iter().map(|problem| &problem.path).collect();
        assert_eq!(left_out, [&link, &file, &missing]);
        let allowlist = UnixSocketAllowlist::open(&canonical).unwrap();
        assert!(!allowlist.is_empty());
        assert!(UnixSocketAllowlist::open(&[file]).is_err());
    }
}
