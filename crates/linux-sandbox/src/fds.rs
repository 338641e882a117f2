//! Descriptors handed to bubblewrap across `exec`: the compiled seccomp program
//! (`--seccomp FD`) and empty files for `--ro-bind-data FD` masks.
//!
//! Rust opens every descriptor close-on-exec; these must survive the `exec` of
//! `bwrap`, which is the one thing std has no safe API for (`fcntl(F_SETFD)`).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};

/// Clears `FD_CLOEXEC` so the descriptor is inherited by the next `exec`.
#[allow(unsafe_code)]
pub fn make_inheritable(fd: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: fcntl(F_SETFD) only changes the descriptor flags of a descriptor we own
    // (borrowed for the duration of the call); it touches no memory.
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) };
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A descriptor that reads as an empty file (`/dev/null`), close-on-exec until the
/// launcher makes it inheritable ([`make_inheritable`] in a single-threaded helper,
/// [`keep_only_in_child`] after `fork` in a multi-threaded launcher).
pub fn empty_data_fd() -> io::Result<OwnedFd> {
    Ok(File::open("/dev/null")?.into())
}

/// A descriptor whose content is `bytes`: the read end of a pipe, already filled and
/// with the write end closed (bubblewrap reads it to EOF); close-on-exec like
/// [`empty_data_fd`]. Were it created inheritable, a copy leaked into another child of a
/// multi-threaded launcher (an unsandboxed command `airlock serve` starts meanwhile)
/// could read part of a seccomp program before bubblewrap does. `bytes` must fit in the
/// pipe buffer (64 KiB by default); a seccomp program is a few KiB.
pub fn data_fd(bytes: &[u8]) -> io::Result<OwnedFd> {
    let (reader, writer) = io::pipe()?;
    let mut writer = writer;
    writer.write_all(bytes)?;
    drop(writer);
    Ok(reader.into())
}

/// For a `pre_exec` hook of a multi-threaded launcher: marks every descriptor above
/// stderr close-on-exec (`close_range(2)` with `CLOSE_RANGE_CLOEXEC`, Linux 5.11), then
/// clears the flag on `keep`, so the exec'd program gets exactly `keep` and nothing the
/// launcher or a concurrent launch holds. Async-signal-safe: two system calls per
/// descriptor, no allocation, no lock.
///
/// # Errors
/// The OS error of `close_range` (`ENOSYS`/`EINVAL` before Linux 5.11: the launch must
/// not go on) or `fcntl`.
#[allow(unsafe_code)]
pub fn keep_only_in_child(keep: &[i32]) -> io::Result<()> {
    // SAFETY: close_range(CLOSE_RANGE_CLOEXEC) only sets descriptor flags; no memory is
    // passed or touched.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3_u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    for fd in keep {
        // SAFETY: F_SETFD only changes the flags of descriptor `fd`; no memory is touched.
        if unsafe { libc::fcntl(*fd, libc::F_SETFD, 0) } == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// For a `pre_exec` hook of a multi-threaded launcher whose child must inherit exactly
/// `keep` besides stdin, stdout and stderr: [`keep_only_in_child`], except that before
/// Linux 5.11 (no `close_range`) the child keeps what else it would inherit (every
/// descriptor this process opens is close-on-exec; a server marks what it inherited so
/// at start). Async-signal-safe.
///
/// # Errors
/// The OS error of `fcntl` on a descriptor of `keep`.
pub fn inherit_only_in_child(keep: &[i32]) -> io::Result<()> {
    match keep_only_in_child(keep) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) => {}
        done => return done,
    }
    for fd in keep {
        make_inheritable(fd)?;
    }
    Ok(())
}

/// Marks every descriptor above stderr close-on-exec except `keep`, which becomes
/// inheritable, so nothing the launcher inherited (an open file outside the writable roots, a connected socket to
/// a host service) leaks into the sandbox.
pub fn close_inherited_on_exec(keep: &[i32]) -> io::Result<()> {
    // One `close_range` where the kernel has it (5.11); a listing of /proc/self/fd before.
    match keep_only_in_child(keep) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) => {}
        done => return done,
    }
    let mut fds = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")? {
        if let Some(fd) = entry?
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
            && fd > 2
            && !keep.contains(&fd)
        {
            fds.push(fd);
        }
    }
    for fd in fds {
        set_cloexec(fd)?;
    }
    for fd in keep {
        make_inheritable(fd)?;
    }
    Ok(())
}

#[allow(unsafe_code)]
fn set_cloexec(fd: i32) -> io::Result<()> {
    // SAFETY: F_GETFD/F_SETFD only read and change descriptor flags; an fd that was the
    // (now closed) directory handle of the listing above reports EBADF, which is fine.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags == -1 {
        let err = io::Error::last_os_error();
        return if err.raw_os_error() == Some(libc::EBADF) {
            Ok(())
        } else {
            Err(err)
        };
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Takes ownership of descriptor `fd`, inherited from the parent under a number it named
/// on the command line, and marks it close-on-exec (it must not reach the command).
///
/// # Errors
/// `fd` is not open (`EBADF`) or is one of the standard descriptors.
#[allow(unsafe_code)]
pub fn adopt_inherited(fd: i32) -> io::Result<OwnedFd> {
    if fd <= 2 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // SAFETY: F_GETFD only reads descriptor flags.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return Err(io::Error::last_os_error());
    }
    set_cloexec(fd)?;
    // SAFETY: the descriptor is open (checked above) and was handed to this process for
    // this purpose by its parent; nothing else in this process refers to it.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Read as _;
    use std::os::fd::AsFd as _;

    #[test]
    fn a_data_descriptor_holds_its_bytes_and_is_close_on_exec() {
        let fd = super::data_fd(b"program").unwrap();
        let flags = rustix::io::fcntl_getfd(fd.as_fd()).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        let mut bytes = Vec::new();
        std::fs::File::from(fd).read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes, b"program");
    }
}
