//! `airlock exec-server` `tty: true` processes (spec 09): run on a pseudo-terminal, streamed
//! as `pty`, written by `process/write`, sandboxed too; nothing (process or terminal
//! descriptor) outlives a terminate or a disconnect.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_server_support;

use std::path::Path;

use exec_server_support::ALL;
use exec_server_support::Client;
use exec_server_support::Transport;
use exec_server_support::b64;
use exec_server_support::exited;
use exec_server_support::output_of;
use exec_server_support::runtime;
use exec_server_support::setup::context;
use exec_server_support::setup::dirs;
use exec_server_support::setup::each_transport;
use exec_server_support::setup::gone_within;
use exec_server_support::setup::live_with;
use exec_server_support::setup::profile;
use exec_server_support::setup::start;
use exec_server_support::setup::unique_sleep;
use serde_json::Value;
use serde_json::json;

/// The descriptors of the server `pid` open on a pseudo-terminal (master or slave).
fn terminal_fds(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .map(|target| target.display().to_string())
        .filter(|target| target == "/dev/ptmx" || target.starts_with("/dev/pts/"))
        .collect()
}

/// Waits (bounded) until the server `pid` holds no terminal descriptor; the ones left otherwise.
async fn no_terminal_fds_within(pid: u32) -> Result<(), Vec<String>> {
    let deadline = std::time::Instant::now() + exec_server_support::BOUND;
    loop {
        let left = terminal_fds(pid);
        if left.is_empty() {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(left);
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[test]
fn tty_process_runs_on_a_terminal_streamed_as_pty() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect_raw(transport, &d.home).await;
            let init = c.request("initialize", json!({"clientName": "test"})).await;
            assert_eq!(
                init["result"]["environmentInfo"]["capabilities"]["pty"], true,
                "{init}"
            );
            c.send(json!({"method": "initialized"})).await;
            // stdin, stdout and stderr are the terminal, which is also the controlling one
            // (only then does /dev/tty open).
            let script = "test -t 0 && test -t 1 && test -t 2 && echo isatty; echo ctty > /dev/tty";
            let a = start(
                &mut c,
                "t",
                &["sh", "-c", script],
                &d.ws,
                json!({"tty": true}),
            )
            .await;
            assert_eq!(a["result"]["sandboxType"], "none", "{a}");
            let events = c.collect("t").await;
            assert_eq!(exited(&events)["exitCode"], 0, "{events:?}");
            let pty = output_of(&events, "pty");
            assert!(pty.contains("isatty\r\n"), "{pty:?}");
            assert!(pty.contains("ctty\r\n"), "{pty:?}");
            assert_eq!(output_of(&events, "stdout"), "");
            assert_eq!(output_of(&events, "stderr"), "");
            let seqs: Vec<u64> = events
                .iter()
                .map(|e| e["params"]["seq"].as_u64().unwrap())
                .collect();
            let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
            assert_eq!(seqs, expected);
            // Retained for process/read too, and the master is closed once it has exited.
            let r = c.request("process/read", json!({"processId": "t"})).await;
            assert_eq!(r["result"]["chunks"][0]["stream"], "pty", "{r}");
            assert_eq!(no_terminal_fds_within(c.server_pid()).await, Ok(()));
            let w = c
                .request(
                    "process/write",
                    json!({"processId": "t", "chunk": b64(b"x")}),
                )
                .await;
            assert_eq!(w["result"]["status"], "stdinClosed", "{w}");
            c.close().await;
        })
    });
}

#[test]
fn tty_output_is_complete_when_the_process_exits() {
    runtime().block_on(async {
        let d = dirs();
        let mut c = Client::connect(Transport::Stdio, &d.home).await;
        // Much more than a terminal buffers (about 4 KiB): nothing may be lost at the EIO that
        // ends the output.
        let a = start(
            &mut c,
            "n",
            &["seq", "1", "20000"],
            &d.ws,
            json!({"tty": true}),
        )
        .await;
        assert!(a.get("result").is_some(), "{a}");
        let events = c.collect("n").await;
        assert_eq!(exited(&events)["exitCode"], 0, "{events:?}");
        let want: String = (1..=20000).map(|i| format!("{i}\r\n")).collect();
        assert!(
            output_of(&events, "pty") == want,
            "output lost or reordered"
        );
        c.close().await;
    });
}

#[test]
fn tty_process_reads_what_is_written_to_its_terminal() {
    runtime().block_on(async {
        let d = dirs();
        let mut c = Client::connect(Transport::Stdio, &d.home).await;
        // No pipeStdin: a terminal is always writable.
        let script = "read line; echo got:$line";
        let a = start(
            &mut c,
            "i",
            &["sh", "-c", script],
            &d.ws,
            json!({"tty": true}),
        )
        .await;
        assert!(a.get("result").is_some(), "{a}");
        let w = c
            .request(
                "process/write",
                json!({"processId": "i", "chunk": b64(b"hello\n")}),
            )
            .await;
        assert_eq!(w["result"]["status"], "accepted", "{w}");
        let events = c.collect("i").await;
        assert_eq!(exited(&events)["exitCode"], 0, "{events:?}");
        let pty = output_of(&events, "pty");
        assert!(pty.contains("got:hello\r\n"), "{pty:?}");
        c.close().await;
    });
}

#[test]
fn sandboxed_tty_process_runs_on_a_terminal() {
    runtime().block_on(async {
        let d = dirs();
        let mut c = Client::connect(Transport::Stdio, &d.home).await;
        let ctx = context(profile(":workspace"), &d.ws);
        let script = "read line; test -t 0 && test -t 1 && test -t 2 && echo isatty:$line; echo x > .git/planted";
        let a = start(
            &mut c,
            "s",
            &["sh", "-c", script],
            &d.ws,
            json!({"tty": true, "sandbox": ctx}),
        )
        .await;
        assert_eq!(a["result"]["sandboxType"], "linuxSeccomp", "{a}");
        let w = c
            .request(
                "process/write",
                json!({"processId": "s", "chunk": b64(b"typed\n")}),
            )
            .await;
        assert_eq!(w["result"]["status"], "accepted", "{w}");
        let events = c.collect("s").await;
        let pty = output_of(&events, "pty");
        assert!(pty.contains("isatty:typed\r\n"), "{pty:?}");
        // Still confined, and the denial is recognised in the terminal's output.
        assert!(pty.contains("Read-only file system"), "{pty:?}");
        assert!(!d.ws.join(".git/planted").exists(), ".git must stay read-only");
        assert_ne!(exited(&events)["exitCode"], 0, "{events:?}");
        assert_eq!(exited(&events)["sandboxDenied"], true, "{events:?}");
        assert_eq!(no_terminal_fds_within(c.server_pid()).await, Ok(()));
        c.close().await;
    });
}

/// Starts `sleep token` on a terminal (sandboxed with `extra`) and waits until it runs.
async fn start_tty_sleep(c: &mut Client, id: &str, token: &str, ws: &Path, extra: Value) {
    let mut params = json!({"tty": true});
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let script = format!("exec sleep {token}");
    let a = start(c, id, &["sh", "-c", &script], ws, params).await;
    assert!(a.get("result").is_some(), "{a}");
    let running = tokio::time::timeout(exec_server_support::BOUND, async {
        while live_with(token).is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(running.is_ok(), "the process is not running");
}

#[test]
fn terminated_tty_process_leaves_no_process_nor_terminal() {
    runtime().block_on(async {
        let d = dirs();
        let mut c = Client::connect(Transport::Stdio, &d.home).await;
        for (id, extra) in [
            ("plain", json!({})),
            (
                "sandboxed",
                json!({"sandbox": context(profile(":workspace"), &d.ws)}),
            ),
        ] {
            let token = unique_sleep();
            start_tty_sleep(&mut c, id, &token, &d.ws, extra).await;
            let t = c
                .request("process/terminate", json!({"processId": id}))
                .await;
            assert_eq!(t["result"]["running"], true, "{t}");
            let events = c.collect(id).await;
            assert_eq!(exited(&events)["exitCode"], 128 + 9, "{events:?}");
            assert_eq!(
                gone_within(&token, exec_server_support::BOUND).await,
                Ok(()),
                "{id}"
            );
            assert_eq!(no_terminal_fds_within(c.server_pid()).await, Ok(()), "{id}");
        }
        c.close().await;
    });
}

#[test]
fn closing_the_connection_ends_its_tty_processes() {
    for transport in ALL {
        eprintln!("transport {transport:?}");
        runtime().block_on(async {
            let d = dirs();
            let mut c = Client::connect(transport, &d.home).await;
            let plain = unique_sleep();
            let sandboxed = unique_sleep();
            start_tty_sleep(&mut c, "plain", &plain, &d.ws, json!({})).await;
            let ctx = context(profile(":workspace"), &d.ws);
            start_tty_sleep(
                &mut c,
                "sandboxed",
                &sandboxed,
                &d.ws,
                json!({"sandbox": ctx}),
            )
            .await;
            let pid = c.server_pid();
            let mut server = c.drop_connection();
            let gone = (
                gone_within(&plain, exec_server_support::BOUND).await,
                gone_within(&sandboxed, exec_server_support::BOUND).await,
            );
            // A socket server keeps running: it must have closed the terminals too.
            let fds = if transport == Transport::Stdio {
                Ok(())
            } else {
                no_terminal_fds_within(pid).await
            };
            let _ = server.start_kill();
            let _ = tokio::time::timeout(exec_server_support::BOUND, server.wait()).await;
            assert_eq!(
                gone,
                (Ok(()), Ok(())),
                "tty processes outlived their connection"
            );
            assert_eq!(fds, Ok(()), "terminals left open");
        });
    }
}
