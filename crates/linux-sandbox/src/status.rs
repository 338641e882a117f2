//! Telling a failure of the sandbox's own set-up from the command's own failure
//! (spec 07 step 6: a set-up failure is an execution error, never a denial).
//!
//! The launcher opens a status channel ([`StatusPipe`]: an in-memory file) and hands a
//! descriptor of it to the helper (`--status-fd N`) or to bubblewrap. What arrives on it:
//! - `{"airlock-setup-error": "<message>"}` — written by the helper when it cannot
//!   prepare the launch (bubblewrap missing or untrusted, a path that cannot be
//!   resolved, seccomp, Landlock);
//! - `{"airlock-exec": true}` — written by the helper right before it execs the command
//!   itself (seccomp-only and Landlock launches; the descriptor is close-on-exec then);
//! - bubblewrap's `--json-status-fd` lines: `{ "child-pid": .. }` once the sandbox
//!   process exists and `{ "exit-code": N }` once the *command* it started has ended.
//!   bubblewrap writes no `exit-code` when its set-up (namespaces, mounts, seccomp)
//!   fails or when exec of the command fails, and the command never holds the
//!   descriptor.
//!
//! So: no start marker means the command never ran, and then everything on stderr was
//! written by the helper or bubblewrap — not by the (adversarial) command — and can be
//! quoted as the cause. A command cannot fake a set-up failure into a retry without
//! the sandbox: at worst it makes its own run look like one, which only stops the call.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The key of the helper's own set-up error report.
pub const SETUP_ERROR_KEY: &str = "airlock-setup-error";
/// The key the helper writes right before it execs the command directly.
pub const EXEC_KEY: &str = "airlock-exec";
/// The key of bubblewrap's report that the command it started has exited.
const BWRAP_EXIT_KEY: &str = "\"exit-code\"";
/// How much of the status pipe is read (the reports are a few hundred bytes).
const MAX_STATUS_BYTES: usize = 64 * 1024;

/// What the status pipe and the helper's stderr say about a finished launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchReport {
    /// The command was started inside the sandbox; its exit code and output are its own.
    Started,
    /// The sandbox could not be set up; the command never ran. The cause is quoted from
    /// the helper or bubblewrap.
    SetupFailed(String),
    /// The sandbox was set up but the command could not be executed (not found, not
    /// executable); the command never ran. Not a set-up failure and not a denial.
    CommandNotExecutable(String),
}

/// The launcher's end of a status channel: an in-memory file (`memfd_create(2)`), read
/// close-on-exec by the launcher, and an inheritable descriptor of the same open file to
/// hand to exactly one helper process (or bubblewrap), which appends its reports.
///
/// A file, not a pipe (red-team finding of 2026-12-06): a write to a pipe whose reader
/// is gone kills the writer with `SIGPIPE`. When the launcher was killed while
/// bubblewrap set the sandbox up, bubblewrap's outer process died on its first status
/// line, before it released the sandbox's first process, which then waited forever in
/// its own namespaces, holding the caller's stdout and stderr open. Writing to a file
/// never fails that way, and reading it never waits for a writer.
#[derive(Debug)]
pub struct StatusPipe {
    reader: File,
    writer: Option<OwnedFd>,
}

impl StatusPipe {
    /// Opens the channel. Both ends are close-on-exec: the launcher hands the writer to
    /// the one child that reports on it — by `posix_spawn` file actions (`airlock serve`),
    /// by [`crate::inherit_only_in_child`] in a `pre_exec` hook, or by the keep list of
    /// [`crate::fds::close_inherited_on_exec`] in a launcher that starts nothing else —
    /// so no other child started meanwhile (an unsandboxed command of a server) holds a
    /// copy: a `airlock-setup-error` line written through one would turn a launch that
    /// ran into a reported set-up failure.
    ///
    /// # Errors
    /// The OS error of `memfd_create`/`dup`.
    pub fn open() -> io::Result<Self> {
        let reader = rustix::fs::memfd_create("airlock-status", rustix::fs::MemfdFlags::CLOEXEC)?;
        // A second descriptor of the same open file: writes append at its shared offset.
        let writer = reader.try_clone()?;
        Ok(Self {
            reader: File::from(reader),
            writer: Some(writer),
        })
    }

    /// The descriptor number to pass as `--status-fd`, while the writer is open.
    #[must_use]
    pub fn writer_fd(&self) -> Option<i32> {
        self.writer.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Closes this process's copy of the writer (call right after spawning the helper).
    pub fn close_writer(&mut self) {
        self.writer = None;
    }

    /// Reads what arrived (from the start of the file, without waiting for more) and
    /// classifies the launch, given the helper's captured `stderr`. Call after the helper
    /// has exited.
    #[must_use]
    pub fn report(mut self, stderr: &str) -> LaunchReport {
        use std::os::unix::fs::FileExt as _;
        self.close_writer();
        let mut bytes = Vec::new();
        let mut buffer = [0_u8; 4096];
        while bytes.len() < MAX_STATUS_BYTES {
            let offset = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
            match self.reader.read_at(&mut buffer, offset) {
                Ok(0) | Err(_) => break,
                Ok(read) => bytes.extend_from_slice(buffer.get(..read).unwrap_or_default()),
            }
        }
        classify(&String::from_utf8_lossy(&bytes), stderr)
    }
}

/// Classifies a finished launch from the status text and the helper's stderr (module
/// docs).
#[must_use]
pub fn classify(status: &str, stderr: &str) -> LaunchReport {
    for line in status.lines() {
        if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(line)
            && let Some(message) = map.get(SETUP_ERROR_KEY)
        {
            let message = message
                .as_str()
                .map_or_else(|| message.to_string(), str::to_owned);
            return LaunchReport::SetupFailed(message);
        }
    }
    if status.contains(BWRAP_EXIT_KEY) || status.contains(EXEC_KEY) {
        return LaunchReport::Started;
    }
    let cause = stderr
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .unwrap_or("the sandbox helper exited before starting the command")
        .to_owned();
    if cause.starts_with("bwrap: execvp ") {
        return LaunchReport::CommandNotExecutable(cause);
    }
    LaunchReport::SetupFailed(cause)
}

/// Helper side: reports a set-up failure on `fd` (best effort: a launcher that gave no
/// status fd still sees the helper's exit code 125 and message).
pub fn write_setup_error(fd: i32, message: &str) {
    let line = serde_json::json!({ SETUP_ERROR_KEY: message }).to_string();
    write_line(fd, &line);
}

/// Helper side: reports that the command is about to be exec'd directly.
pub fn write_exec_marker(fd: i32) {
    write_line(fd, &serde_json::json!({ EXEC_KEY: true }).to_string());
}

#[allow(unsafe_code)]
fn write_line(fd: i32, line: &str) {
    // SAFETY: `fd` was handed to this process as its status descriptor (`--status-fd`);
    // it is borrowed for one write and never closed here (ManuallyDrop).
    let file = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    let _ = (&*file).write_all(format!("{line}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn close_on_exec(fd: i32) -> bool {
        rustix::io::fcntl_getfd(unsafe_borrow(fd))
            .unwrap()
            .contains(rustix::io::FdFlags::CLOEXEC)
    }

    fn unsafe_borrow(fd: i32) -> std::os::fd::BorrowedFd<'static> {
        #[allow(unsafe_code)]
        // SAFETY: the descriptor belongs to a pipe alive for the whole test.
        unsafe {
            std::os::fd::BorrowedFd::borrow_raw(fd)
        }
    }

    #[test]
    fn neither_end_of_the_channel_is_inheritable() {
        let pipe = StatusPipe::open().unwrap();
        assert!(close_on_exec(pipe.writer_fd().unwrap()));
        assert!(close_on_exec(pipe.reader.as_raw_fd()));
    }

    #[test]
    fn classification_table() {
        let started = "{ \"child-pid\": 5 }\n{ \"exit-code\": 1 }\n";
        assert_eq!(classify(started, "bwrap: fake"), LaunchReport::Started);
        assert_eq!(
            classify("{\"airlock-exec\":true}\n", "x"),
            LaunchReport::Started
        );
        assert_eq!(
            classify(
                "{ \"child-pid\": 5 }\n",
                "bwrap: Can't find source path /gone: No such file or directory\n"
            ),
            LaunchReport::SetupFailed(
                "bwrap: Can't find source path /gone: No such file or directory".into()
            )
        );
        assert_eq!(
            classify("{\"airlock-setup-error\":\"no bwrap\"}\n", ""),
            LaunchReport::SetupFailed("no bwrap".into())
        );
        assert!(matches!(classify("", ""), LaunchReport::SetupFailed(_)));
        assert!(matches!(
            classify(
                "{ \"child-pid\": 5 }",
                "bwrap: execvp nope: No such file or directory"
            ),
            LaunchReport::CommandNotExecutable(_)
        ));
    }

    #[test]
    fn pipe_round_trip_does_not_block() {
        let pipe = StatusPipe::open().unwrap();
        let fd = pipe.writer_fd().unwrap();
        write_exec_marker(fd);
        assert_eq!(pipe.report(""), LaunchReport::Started);
        // Nothing written, writer still held by a leaked copy: must not hang.
        let pipe = StatusPipe::open().unwrap();
        let leaked = std::fs::File::from(pipe.writer.as_ref().unwrap().try_clone().unwrap());
        assert!(matches!(pipe.report("boom"), LaunchReport::SetupFailed(m) if m == "boom"));
        drop(leaked);
    }
}
