//! Pseudo-terminals of `tty: true` processes (spec 09 §Methods `process/start`; Codex's
//! exec-server streams them as `stream: "pty"`).
//!
//! A pair is opened close-on-exec on both ends (no other spawn inherits it); the child gets
//! the slave as stdin, stdout and stderr, a session of its own and the slave as its
//! controlling terminal ([`controlling_terminal`]); this process keeps only the master,
//! non-blocking and registered with the runtime. Once every copy of the slave is closed (the
//! command and whatever it left behind have gone), reading the master fails with `EIO`: that
//! is the normal end of the output and reads as end-of-file here.

use std::io;
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Context;
use std::task::Poll;
use std::task::ready;

use rustix::pty::OpenptFlags;
use tokio::io::AsyncRead;
use tokio::io::AsyncWrite;
use tokio::io::ReadBuf;
use tokio::io::unix::AsyncFd;

/// The size a new terminal reports (`TIOCGWINSZ`): 24 rows of 80 columns, the classic
/// default (a 0×0 terminal confuses programs that lay out their output).
const ROWS: u16 = 24;
const COLUMNS: u16 = 80;

/// A pair not yet handed to a child.
#[derive(Debug)]
pub(crate) struct Pty {
    master: Arc<AsyncFd<OwnedFd>>,
    slave: OwnedFd,
}

/// This process's end of a terminal: read for the output, written for the input. Clones
/// share the descriptor, which closes with the last of them.
#[derive(Debug, Clone)]
pub(crate) struct Master(Arc<AsyncFd<OwnedFd>>);

impl Pty {
    /// Opens a pair (24×80).
    ///
    /// # Errors
    /// The OS error of `posix_openpt`, `grantpt`, `unlockpt`, opening the slave or
    /// registering the master with the runtime (call from within one).
    pub(crate) fn open() -> io::Result<Self> {
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = rustix::pty::openpt(flags)?;
        rustix::pty::grantpt(&master)?;
        rustix::pty::unlockpt(&master)?;
        let slave = open_slave(&master, flags)?;
        rustix::termios::tcsetwinsize(
            &slave,
            rustix::termios::Winsize {
                ws_row: ROWS,
                ws_col: COLUMNS,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )?;
        rustix::io::ioctl_fionbio(&master, true)?;
        Ok(Self {
            master: Arc::new(register(master)?),
            slave,
        })
    }

    /// A new descriptor of the slave, for one of the child's standard streams.
    ///
    /// # Errors
    /// The OS error of `dup`.
    pub(crate) fn slave_stdio(&self) -> io::Result<std::process::Stdio> {
        Ok(std::process::Stdio::from(self.slave.try_clone()?))
    }

    /// The master, closing this process's slave (call once the child has been spawned and
    /// the command holding its copies dropped: the output ends only when no slave is open).
    pub(crate) fn into_master(self) -> Master {
        Master(self.master)
    }
}

/// Registers `master` with the runtime's reactor.
#[allow(unsafe_code)]
fn register(master: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` is an open descriptor that stays open, and always the same number,
    // until it is dropped with the `AsyncFd` that owns it.
    unsafe { AsyncFd::register(master) }.map_err(|e| e.into_parts().1)
}

/// The slave of `master`: through `TIOCGPTPEER` where the kernel has it (no path lookup, so
/// no race with a `/dev/pts` swapped underneath), else by name.
fn open_slave(master: &OwnedFd, flags: OpenptFlags) -> io::Result<OwnedFd> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Ok(slave) = rustix::pty::ioctl_tiocgptpeer(master, flags) {
        return Ok(slave);
    }
    let name = rustix::pty::ptsname(master, Vec::new())?;
    let mut oflags = rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC;
    if flags.contains(OpenptFlags::RDWR) {
        oflags |= rustix::fs::OFlags::RDWR;
    }
    Ok(rustix::fs::open(
        name.as_c_str(),
        oflags,
        rustix::fs::Mode::empty(),
    )?)
}

/// Makes the child a session leader with its stdin (the slave) as controlling terminal, as a
/// login terminal would. The session is also the process group `process/terminate` kills, so
/// the caller must not ask for another group (`setsid` fails for a group leader).
#[allow(unsafe_code)]
pub(crate) fn controlling_terminal(command: &mut tokio::process::Command) {
    // SAFETY: the closure runs in the forked child before exec, after stdio was set up, and
    // only makes the setsid(2) and ioctl(2) system calls; it allocates nothing.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()?;
            let stdin = std::os::fd::BorrowedFd::borrow_raw(0);
            rustix::process::ioctl_tiocsctty(stdin)?;
            Ok(())
        });
    }
}

impl AsyncRead for Master {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard.try_io(|fd| Ok(rustix::io::read(fd.as_fd(), &mut *unfilled)?)) {
                Ok(Ok(read)) => {
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                // No slave is open any more: the end of the output.
                Ok(Err(e)) if e.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) => {
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for Master {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.0.poll_write_ready(cx))?;
            match guard.try_io(|fd| Ok(rustix::io::write(fd.as_fd(), bytes)?)) {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
