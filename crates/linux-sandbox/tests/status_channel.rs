//! The status channel against the real bubblewrap: a launcher that is gone while
//! bubblewrap sets the sandbox up (killed with SIGKILL) must not leave the sandbox's first
//! process waiting forever in its namespaces, holding the caller's output open
//! (red-team finding of 2026-12-06). With a pipe, bubblewrap's first status line killed it
//! (`SIGPIPE`) before it released that process. One test function: it spawns bubblewrap
//! while a descriptor is inheritable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use airlock_linux_sandbox::status::StatusPipe;

const BWRAP: &str = "/usr/bin/bwrap";

#[test]
fn a_launcher_gone_during_set_up_leaves_no_sandbox_waiting() {
    if !Path::new(BWRAP).exists() {
        eprintln!("skipped: no {BWRAP} on this host (the helper's own tests report it)");
        return;
    }
    let token = format!("airlock-status-channel-test-{}", std::process::id());
    let status = StatusPipe::open().unwrap();
    let fd = status.writer_fd().unwrap();
    // The writer is close-on-exec; this test's only child inherits it.
    let writer = unsafe_borrow(fd);
    rustix::io::fcntl_setfd(writer, rustix::io::FdFlags::empty()).unwrap();
    let mut child = Command::new(BWRAP)
        .args([
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--unshare-pid",
        ])
        .args(["--json-status-fd", &fd.to_string(), "--"])
        .args(["/bin/sh", "-c", "echo ran", &token])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The launcher's end is gone before bubblewrap writes its first status line.
    drop(status);
    let mut stdout = child.stdout.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = sender.send(out);
    });
    let out = receiver.recv_timeout(Duration::from_secs(10));
    let status = child.wait().unwrap();
    if out.is_err() {
        // Clean up the process left waiting before failing.
        let _ = Command::new("pkill").args(["-KILL", "-f", &token]).status();
    }
    let out = out.expect("the sandbox's first process was left waiting, holding stdout open");
    assert_eq!(out, "ran\n");
    assert!(status.success(), "{status:?}");
}

fn unsafe_borrow(fd: i32) -> std::os::fd::BorrowedFd<'static> {
    #[allow(unsafe_code)]
    // SAFETY: the status channel's writer stays open until the test drops it, after the
    // one use of this borrow.
    unsafe {
        std::os::fd::BorrowedFd::borrow_raw(fd)
    }
}
