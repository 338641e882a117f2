//! `airlock exec-server` (spec 09, issue 15): a closed connection terminates its processes,
//! including starts still in flight, and a gigabyte of output keeps the server's memory
//! bounded (red-team F8).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_server_support;

use exec_server_support::ALL;
use exec_server_support::Client;
use exec_server_support::Transport;
use exec_server_support::runtime;
use exec_server_support::setup::context;
use exec_server_support::setup::dirs;
use exec_server_support::setup::env;
use exec_server_support::setup::gone_within;
use exec_server_support::setup::live_with;
use exec_server_support::setup::profile;
use exec_server_support::setup::start;
use exec_server_support::setup::unique_sleep;
use serde_json::json;

#[test]
fn closing_the_connection_terminates_its_processes() {
    for transport in ALL {
        eprintln!("transport {transport:?}");
        runtime().block_on(async {
            let d = dirs();
            let marker = d.ws.join("pid");
            let token = unique_sleep();
            let mut c = Client::connect(transport, &d.home).await;
            let script = format!("echo $$ > '{}'; exec sleep {token}", marker.display());
            let a = start(&mut c, "s", &["sh", "-c", &script], &d.ws, json!({})).await;
            assert_eq!(a["result"]["processId"], "s", "{a}");
            let written = tokio::time::timeout(exec_server_support::BOUND, async {
                while std::fs::read_to_string(&marker).map_or(true, |s| !s.ends_with('\n')) {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            })
            .await;
            assert!(written.is_ok(), "the process never started");
            // Seen running (bounded: /proc may show nothing for it while `sh` execs `sleep`).
            let running = tokio::time::timeout(exec_server_support::BOUND, async {
                while live_with(&token).is_empty() {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            })
            .await;
            assert!(running.is_ok(), "the process is not running");
            // Drop only the connection: a socket server keeps running.
            let mut server = c.drop_connection();
            let gone = gone_within(&token, exec_server_support::BOUND).await;
            let _ = server.start_kill();
            let _ = tokio::time::timeout(exec_server_support::BOUND, server.wait()).await;
            assert_eq!(gone, Ok(()), "processes outlived their connection");
        });
    }
}

#[test]
fn closing_the_connection_during_starts_leaves_no_process() {
    runtime().block_on(async {
        let d = dirs();
        let token = unique_sleep();
        let mut c = Client::connect(Transport::Unix, &d.home).await;
        let ctx = context(profile(":workspace"), &d.ws);
        // Starts still in flight (sandbox set-up) when the connection drops.
        for n in 0..8 {
            let sandbox = if n % 2 == 0 {
                json!({"sandbox": ctx})
            } else {
                json!({})
            };
            let mut params = json!({
                "processId": format!("p{n}"),
                "argv": ["sh", "-c", format!("exec sleep {token}")],
                "cwd": d.ws,
                "env": env(),
            });
            params
                .as_object_mut()
                .unwrap()
                .extend(sandbox.as_object().unwrap().clone());
            c.send(json!({"id": 100 + n, "method": "process/start", "params": params}))
                .await;
        }
        let mut server = c.drop_connection();
        // Long enough for every start to have finished, then nothing may be left.
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        let gone = gone_within(&token, std::time::Duration::from_secs(10)).await;
        let _ = server.start_kill();
        let _ = tokio::time::timeout(exec_server_support::BOUND, server.wait()).await;
        assert_eq!(
            gone,
            Ok(()),
            "processes started after their connection closed"
        );
    });
}

/// `VmHWM` (peak resident set) of `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_gigabyte_of_output_keeps_the_server_memory_bounded() {
    runtime().block_on(async {
        let d = dirs();
        let mut c = Client::connect(Transport::Stdio, &d.home).await;
        let pid = c.server_pid();
        let before = peak_rss_kib(pid);
        let ctx = context(profile(":read-only"), &d.ws);
        let a = start(
            &mut c,
            "big",
            &["head", "-c", "1073741824", "/dev/zero"],
            &d.ws,
            json!({"sandbox": ctx}),
        )
        .await;
        assert!(a.get("result").is_some(), "{a}");
        let (encoded, exited) = c
            .drain_raw("big", std::time::Duration::from_secs(600))
            .await;
        assert_eq!(exited["exitCode"], 0, "{exited}");
        // Every byte was streamed (base64: 4/3 of the bytes, plus the JSON around each chunk).
        assert!(
            encoded > (1_u64 << 30) * 4 / 3,
            "only {encoded} bytes of notifications"
        );
        let peak = peak_rss_kib(pid);
        eprintln!("server VmHWM: {before} KiB at start, {peak} KiB after 1 GiB of output");
        assert!(
            peak < 200 * 1024,
            "the server's peak RSS reached {peak} KiB"
        );
        // What `process/read` no longer retains is reported, with the seqs it covers.
        let r = c
            .request(
                "process/read",
                json!({"processId": "big", "afterSeq": 0, "maxBytes": 1}),
            )
            .await;
        let dropped = r["result"]["droppedChunks"].as_u64().unwrap_or(0);
        assert!(dropped > 0, "{r}");
        assert_eq!(r["result"]["chunks"][0]["seq"], dropped + 1, "{r}");
        c.close().await;
    });
}
