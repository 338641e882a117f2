//! The pipe through which a bubblewrap started early (`bwrap --args FD -- COMMAND…`)
//! receives its options once the mount plan is known: by `airlock sandbox`
//! ([`crate::early_bwrap`]) and by `airlock serve` (core's direct launch).
//!
//! bubblewrap blocks in its argument parser reading the pipe until end of file, and only
//! then does anything to the system. Everything that confines the command travels
//! through the pipe; the command and its environment are fixed at `exec`.
//!
//! Fail closed: [`ArgsPipe::send`] puts the whole list into the pipe with **one**
//! `write(2)`, into a pipe grown to hold it, from a buffer locked in memory. With room
//! for every byte and no page to fetch, the kernel copies all of them without waiting,
//! and no signal (not even `SIGKILL`) stops the copy half-way; a short write is reported
//! and the writer stays open. bubblewrap therefore reads every option or none. The
//! caller must kill bubblewrap **before** it closes a writer that did not send (drops
//! the [`ArgsPipe`]), so bubblewrap never parses a partial or empty list; should the
//! caller die first, bubblewrap reads an empty list: no mount at all, the command does
//! not exist in its root and nothing runs (tested in `tests/early_bwrap.rs`).

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;

/// The most the pipe may be grown to hold the argument list (the unprivileged default of
/// `/proc/sys/fs/pipe-max-size`); a longer list must be launched the ordinary way.
const MAX_STREAM: usize = 1 << 20;

/// A pipe for bubblewrap's `--args`: both ends close-on-exec; the reader goes to
/// bubblewrap (renumbered by `posix_spawn`, or made inheritable), the writer stays.
#[derive(Debug)]
pub struct ArgsPipe {
    reader: Option<OwnedFd>,
    /// `None` once the list was sent.
    writer: Option<File>,
}

/// Why [`ArgsPipe::send`] sent nothing; bubblewrap must be killed before the pipe is
/// dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotSent {
    /// The list does not end in `--` and the command bubblewrap was started with.
    #[error("the option list does not end with the command bubblewrap was started for")]
    OtherCommand,
    /// An option holds a NUL byte (it cannot be told apart from the separator).
    #[error("an option holds a NUL byte")]
    NulByte,
    /// The list is larger than the pipe can be made (1 MiB), or the pipe cannot grow.
    #[error("the option list does not fit in the pipe")]
    TooLong,
    /// The buffer could not be locked in memory, or the write came up short.
    #[error("the option list could not be written at once")]
    Write,
    /// It was sent already.
    #[error("the option list was sent already")]
    Sent,
}

impl ArgsPipe {
    /// Opens the pipe.
    ///
    /// # Errors
    /// The OS error of `pipe2`.
    pub fn open() -> io::Result<Self> {
        let (reader, writer) = io::pipe()?;
        Ok(Self {
            reader: Some(reader.into()),
            writer: Some(File::from(OwnedFd::from(writer))),
        })
    }

    /// The reader's descriptor number, until [`ArgsPipe::take_reader`].
    #[must_use]
    pub fn reader_fd(&self) -> Option<RawFd> {
        self.reader.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Takes the reader (to hand it over, or to close it once bubblewrap holds a copy).
    pub fn take_reader(&mut self) -> Option<OwnedFd> {
        self.reader.take()
    }

    /// Sends `argv`, the full argument list that would follow bubblewrap's name (options,
    /// `--`, then exactly `command`), as the options before `--`, and closes the writer.
    ///
    /// # Errors
    /// [`NotSent`]; nothing was written and the writer is still open.
    pub fn send(&mut self, argv: &[OsString], command: &[OsString]) -> Result<(), NotSent> {
        let options = options_before_command(argv, command).ok_or(NotSent::OtherCommand)?;
        let stream = nul_separated(options).ok_or(NotSent::NulByte)?;
        let writer = self.writer.as_mut().ok_or(NotSent::Sent)?;
        if !fits(writer, stream.len()) {
            return Err(NotSent::TooLong);
        }
        let locked = Resident::lock(&stream).ok_or(NotSent::Write)?;
        // One write(2): with room for every byte and the bytes resident it cannot stop
        // half-way (module docs).
        match writer.write(&stream) {
            Ok(written) if written == stream.len() => {}
            _ => return Err(NotSent::Write),
        }
        drop(locked);
        self.writer = None;
        Ok(())
    }
}

/// A buffer held in memory (`mlock(2)`) while it is written: the copy into the pipe then
/// cannot wait for a page to be read back from swap, which is the one point where a
/// fatal signal could end the write half-way.
struct Resident<'a>(&'a [u8]);

impl<'a> Resident<'a> {
    #[allow(unsafe_code)]
    fn lock(bytes: &'a [u8]) -> Option<Self> {
        // SAFETY: mlock only pins the pages of this borrowed, live buffer.
        (unsafe { libc::mlock(bytes.as_ptr().cast(), bytes.len()) } == 0).then_some(Self(bytes))
    }
}

impl Drop for Resident<'_> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: unpins the pages locked in `lock`; the buffer is still borrowed.
        unsafe {
            libc::munlock(self.0.as_ptr().cast(), self.0.len());
        }
    }
}

/// `argv` without the trailing `--` and `command`, or `None` when it does not end so.
fn options_before_command<'a>(
    argv: &'a [OsString],
    command: &[OsString],
) -> Option<&'a [OsString]> {
    let split = argv.len().checked_sub(command.len() + 1)?;
    let (options, tail) = argv.split_at(split);
    (tail.first().is_some_and(|dashes| dashes == "--") && tail.get(1..)? == command)
        .then_some(options)
}

/// bubblewrap's `--args` format: every argument followed by a NUL byte; `None` when one
/// holds a NUL itself.
fn nul_separated(options: &[OsString]) -> Option<Vec<u8>> {
    let mut stream = Vec::with_capacity(options.iter().map(|a| a.len() + 1).sum());
    for arg in options {
        let bytes = arg.as_bytes();
        if bytes.contains(&0) {
            return None;
        }
        stream.extend_from_slice(bytes);
        stream.push(0);
    }
    Some(stream)
}

/// Whether the (empty) pipe behind `writer` holds `len` bytes, growing it when needed.
#[allow(unsafe_code)]
fn fits(writer: &File, len: usize) -> bool {
    if len > MAX_STREAM {
        return false;
    }
    // SAFETY: F_GETPIPE_SZ/F_SETPIPE_SZ read or resize the pipe buffer of a descriptor we
    // own (borrowed for the call); no memory of ours is passed.
    let size = unsafe { libc::fcntl(writer.as_raw_fd(), libc::F_GETPIPE_SZ) };
    if usize::try_from(size).is_ok_and(|size| size >= len) {
        return true;
    }
    let Ok(wanted) = libc::c_int::try_from(len) else {
        return false;
    };
    // SAFETY: as above.
    let size = unsafe { libc::fcntl(writer.as_raw_fd(), libc::F_SETPIPE_SZ, wanted) };
    usize::try_from(size).is_ok_and(|size| size >= len)
}

#[cfg(test)]
#[path = "args_pipe_tests.rs"]
mod tests;
