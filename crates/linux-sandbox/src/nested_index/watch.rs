//! The kernel side of the nested-repository index: one inotify instance, the mount table's
//! change notification, and which file systems report their changes to inotify.
//!
//! Why draining the queue before a query is enough: fsnotify queues an event inside the
//! system call that changed the directory (`mkdir`, `rename`, `unlink`, `chmod` ... call
//! `fsnotify_*` before they return), so every change completed before the query started
//! is already in the queue when it is read until `EAGAIN`. A full queue is reported as
//! `IN_Q_OVERFLOW`, never silently dropped.

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd as _, BorrowedFd, OwnedFd};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

/// `statfs` magic numbers of file systems whose every change goes through this kernel's
/// VFS and so reaches inotify (Linux `include/uapi/linux/magic.h`): ext2/3/4, XFS, Btrfs,
/// tmpfs. Network and FUSE file systems (changes made elsewhere), overlayfs (changes to
/// its lower layers) and everything else are scanned without the index.
pub const RELIABLE_FS_MAGIC: [i64; 4] = [0xef53, 0x5846_5342, 0x9123_683e, 0x0102_1994];

/// What one inotify event means to the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The queue overflowed (or could not be read): nothing can be trusted.
    Overflow,
    /// An entry `name` of the watched directory changed (created, deleted, moved, or its
    /// attributes changed); `is_dir` when the entry is a directory.
    Child {
        /// The watch.
        wd: i32,
        /// The entry's name.
        name: Vec<u8>,
        /// The entry is a directory.
        is_dir: bool,
    },
    /// The watched directory itself changed: attributes, deleted, moved, unmounted, or the
    /// watch is gone.
    Itself {
        /// The watch.
        wd: i32,
    },
}

/// One inotify instance plus the mount table's change notification.
pub struct Watcher {
    inotify: OwnedFd,
    mountinfo: Option<std::fs::File>,
    buf: Vec<MaybeUninit<u8>>,
}

/// The watch mask: every change to a directory's entries or to itself. `IN_ONLYDIR`:
/// never a watch on something else. The watch is added through `/proc/self/fd/N` of a
/// descriptor already open on the directory, so the magic link must be followed (no
/// `IN_DONT_FOLLOW`); the descriptor was opened with `O_NOFOLLOW`.
fn mask() -> WatchFlags {
    WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::ATTRIB
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR
}

impl Watcher {
    /// A new inotify instance (non-blocking, close-on-exec) and the mount table.
    ///
    /// # Errors
    /// When inotify is not available (`EMFILE`: `max_user_instances`).
    pub fn new() -> std::io::Result<Self> {
        let inotify = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
        Ok(Self {
            inotify,
            mountinfo: std::fs::File::open("/proc/self/mountinfo").ok(),
            buf: vec![MaybeUninit::uninit(); 64 * 1024],
        })
    }

    /// Watches the directory `fd` is open on (its inode exactly: the path it was opened
    /// by may have been replaced since). Returns the watch descriptor.
    ///
    /// # Errors
    /// `ENOSPC` (`max_user_watches`), `EACCES` (no read permission) and the like: the
    /// directory is then not trusted.
    pub fn watch(&self, fd: BorrowedFd<'_>) -> std::io::Result<i32> {
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        Ok(inotify::add_watch(&self.inotify, path, mask())?)
    }

    /// Stops watching `wd` (errors ignored: the watch may already be gone).
    pub fn unwatch(&self, wd: i32) {
        let _ = inotify::remove_watch(&self.inotify, wd);
    }

    /// Reads every queued event (until `EAGAIN`).
    pub fn drain(&mut self, mut each: impl FnMut(Event)) {
        let mut reader = inotify::Reader::new(self.inotify.as_fd(), &mut self.buf);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::AGAIN) => return,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => {
                    each(Event::Overflow);
                    return;
                }
            };
            let flags = event.events();
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                each(Event::Overflow);
                continue;
            }
            let wd = event.wd();
            let child = flags.intersects(
                ReadFlags::CREATE
                    | ReadFlags::DELETE
                    | ReadFlags::MOVED_FROM
                    | ReadFlags::MOVED_TO
                    | ReadFlags::ATTRIB,
            );
            match event.file_name() {
                Some(name) if child => each(Event::Child {
                    wd,
                    name: name.to_bytes().to_vec(),
                    is_dir: flags.contains(ReadFlags::ISDIR),
                }),
                _ => each(Event::Itself { wd }),
            }
        }
    }

    /// Whether the mount table changed since the last call (or cannot be watched: then
    /// always, which keeps nothing trusted).
    pub fn mounts_changed(&self) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let Some(file) = &self.mountinfo else {
            return true;
        };
        // A mount table file reports POLLPRI | POLLERR once after each change of the
        // namespace's mounts; polling acknowledges it.
        let mut fds = [PollFd::new(file, PollFlags::PRI)];
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        match rustix::event::poll(&mut fds, Some(&zero)) {
            Ok(0) => false,
            Ok(_) => true,
            Err(_) => true,
        }
    }
}

/// Whether the file system `fd` is on reports every change to inotify
/// ([`RELIABLE_FS_MAGIC`]).
pub fn reliable_fs(fd: BorrowedFd<'_>) -> bool {
    rustix::fs::fstatfs(fd).is_ok_and(|info| {
        #[allow(clippy::unnecessary_cast, clippy::cast_lossless)] // f_type's width differs by arch
        let magic = info.f_type as i64 & 0xffff_ffff;
        RELIABLE_FS_MAGIC.contains(&magic)
    })
}
