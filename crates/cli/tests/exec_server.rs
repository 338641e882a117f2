//! `airlock exec-server` (spec 09, issue 15) over stdio, loopback WebSocket and a Unix socket:
//! the process methods, seq ordering, the real Linux sandbox applied from the context the
//! client sends, malformed input, concurrency, and the token rule of WebSocket listeners.
//! The fs methods, connection lifetime and `tty: true` have their own files
//! (`exec_server_fs.rs`, `exec_server_lifetime.rs`, `exec_server_tty.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_server_support;

use exec_server_support::Client;
use exec_server_support::b64;
use exec_server_support::exited;
use exec_server_support::output_of;
use exec_server_support::runtime;
use exec_server_support::setup::context;
use exec_server_support::setup::dirs;
use exec_server_support::setup::each_transport;
use exec_server_support::setup::env;
use exec_server_support::setup::profile;
use exec_server_support::setup::start;
use exec_server_support::unb64;
use serde_json::Value;
use serde_json::json;

#[test]
fn start_read_write_terminate() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect(transport, &d.home).await;
            let answer = start(&mut c, "cat", &["cat"], &d.ws, json!({"pipeStdin": true})).await;
            assert_eq!(answer["result"]["sandboxType"], "none", "{answer}");
            let w = c
                .request(
                    "process/write",
                    json!({"processId": "cat", "chunk": b64(b"hello exec\n")}),
                )
                .await;
            assert_eq!(w["result"]["status"], "accepted", "{w}");
            // Long-poll until the echo arrives.
            let mut after = 0;
            let mut seen = Vec::new();
            while !String::from_utf8_lossy(&seen).contains("hello exec") {
                let r = c
                    .request(
                        "process/read",
                        json!({"processId": "cat", "afterSeq": after, "waitMs": 5000}),
                    )
                    .await;
                for chunk in r["result"]["chunks"].as_array().unwrap() {
                    seen.extend(unb64(&chunk["chunk"]));
                }
                after = r["result"]["nextSeq"].as_u64().unwrap();
                assert_eq!(r["result"]["exited"], false, "{r}");
            }
            // A process without pipeStdin refuses writes; an unknown one is reported.
            start(&mut c, "sleep", &["sleep", "1000"], &d.ws, json!({})).await;
            let w = c
                .request(
                    "process/write",
                    json!({"processId": "sleep", "chunk": b64(b"x")}),
                )
                .await;
            assert_eq!(w["result"]["status"], "stdinClosed", "{w}");
            let w = c
                .request(
                    "process/write",
                    json!({"processId": "nope", "chunk": b64(b"x")}),
                )
                .await;
            assert_eq!(w["result"]["status"], "unknownProcess", "{w}");
            let t = c
                .request("process/terminate", json!({"processId": "sleep"}))
                .await;
            assert_eq!(t["result"]["running"], true, "{t}");
            let events = c.collect("sleep").await;
            assert_eq!(exited(&events)["exitCode"], 128 + 9);
            let t = c
                .request("process/terminate", json!({"processId": "sleep"}))
                .await;
            assert_eq!(t["result"]["running"], false, "{t}");
            // Reading after exit still works while the handle is retained.
            let r = c
                .request("process/read", json!({"processId": "sleep"}))
                .await;
            assert_eq!(r["result"]["exited"], true, "{r}");
            assert_eq!(r["result"]["closed"], true, "{r}");
            let t = c
                .request("process/terminate", json!({"processId": "cat"}))
                .await;
            assert_eq!(t["result"]["running"], true, "{t}");
            c.close().await;
        })
    });
}

#[test]
fn output_is_ordered_by_seq() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect(transport, &d.home).await;
            let script = "i=1; while [ $i -le 300 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); done; exit 7";
            start(&mut c, "p", &["sh", "-c", script], &d.ws, json!({})).await;
            let events = c.collect("p").await;
            let seqs: Vec<u64> = events
                .iter()
                .map(|e| e["params"]["seq"].as_u64().unwrap())
                .collect();
            let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
            assert_eq!(
                seqs, expected,
                "seq must count 1, 2, 3, ... in arrival order"
            );
            let n = events.len();
            assert_eq!(events[n - 2]["method"], "process/exited");
            assert_eq!(events[n - 1]["method"], "process/closed");
            let want_out: String = (1..=300).map(|i| format!("out-{i}\n")).collect();
            let want_err: String = (1..=300).map(|i| format!("err-{i}\n")).collect();
            assert_eq!(output_of(&events, "stdout"), want_out);
            assert_eq!(output_of(&events, "stderr"), want_err);
            assert_eq!(exited(&events)["exitCode"], 7);
            assert_eq!(exited(&events)["sandboxDenied"], false);
            c.close().await;
        })
    });
}

#[test]
fn read_only_context_refuses_writes_under_the_real_sandbox() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect(transport, &d.home).await;
            let ctx = context(profile(":read-only"), &d.ws);
            let target = d.ws.join("written");
            let a = start(
                &mut c,
                "w",
                &["sh", "-c", "cat .git/HEAD; echo data > written"],
                &d.ws,
                json!({"sandbox": ctx}),
            )
            .await;
            assert_eq!(a["result"]["sandboxType"], "linuxSeccomp", "{a}");
            let events = c.collect("w").await;
            assert!(
                output_of(&events, "stdout").contains("refs/heads/main"),
                "reads are allowed"
            );
            assert!(
                output_of(&events, "stderr").contains("Read-only file system"),
                "{events:?}"
            );
            assert_ne!(exited(&events)["exitCode"], 0);
            assert_eq!(exited(&events)["sandboxDenied"], true);
            assert!(!target.exists(), "the sandbox let the write through");
            c.close().await;
        })
    });
}

#[test]
fn workspace_context_allows_the_workspace_but_not_git() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect(transport, &d.home).await;
            let ctx = context(profile(":workspace"), &d.ws);
            start(
                &mut c,
                "ok",
                &["sh", "-c", "echo fine > made"],
                &d.ws,
                json!({"sandbox": ctx.clone()}),
            )
            .await;
            let events = c.collect("ok").await;
            assert_eq!(exited(&events)["exitCode"], 0, "{events:?}");
            assert_eq!(
                std::fs::read_to_string(d.ws.join("made")).unwrap(),
                "fine\n"
            );
            start(
                &mut c,
                "git",
                &["sh", "-c", "echo evil > .git/hooks-planted"],
                &d.ws,
                json!({"sandbox": ctx}),
            )
            .await;
            let events = c.collect("git").await;
            assert_ne!(exited(&events)["exitCode"], 0);
            assert_eq!(exited(&events)["sandboxDenied"], true, "{events:?}");
            assert!(
                !d.ws.join(".git/hooks-planted").exists(),
                ".git must stay read-only"
            );
            c.close().await;
        })
    });
}

#[test]
fn malformed_messages_get_the_right_codes_and_the_server_keeps_serving() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect_raw(transport, &d.home).await;
            // Before initialize.
            let r = c.request("process/start", json!({})).await;
            assert_eq!(r["error"]["code"], -32600, "{r}");
            let r = c.request("initialize", json!({"clientName": "t"})).await;
            assert!(r["result"]["sessionId"].is_string(), "{r}");
            c.send_text("{not json").await;
            let r = c.recv().await;
            assert_eq!(r["error"]["code"], -32700, "{r}");
            c.send_text("[1,2]").await;
            let r = c.recv().await;
            assert_eq!(r["error"]["code"], -32600, "{r}");
            let r = c.request("process/nope", json!({})).await;
            assert_eq!(r["error"]["code"], -32601, "{r}");
            let r = c
                .request("process/start", json!({"argv": ["true"], "cwd": d.ws}))
                .await;
            assert_eq!(r["error"]["code"], -32602, "{r}");
            assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("processId"),
                "{r}"
            );
            let r = c
                .request(
                    "process/start",
                    json!({"processId": "x", "argv": ["true"], "cwd": "relative"}),
                )
                .await;
            assert_eq!(r["error"]["code"], -32602, "{r}");
            assert!(
                r["error"]["message"].as_str().unwrap().contains("cwd"),
                "{r}"
            );
            let bad_ctx = json!({"permissions": profile(":read-only")});
            let r = c
                .request(
                    "process/start",
                    json!({"processId": "x", "argv": ["true"], "cwd": d.ws, "sandbox": bad_ctx}),
                )
                .await;
            assert_eq!(r["error"]["code"], -32602, "{r}");
            assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("windowsSandboxLevel"),
                "{r}"
            );
            let r = c
                .request("process/read", json!({"processId": "ghost"}))
                .await;
            assert_eq!(r["error"]["code"], -32600, "{r}");
            // Still serving.
            start(&mut c, "after", &["echo", "still here"], &d.ws, json!({})).await;
            let events = c.collect("after").await;
            assert_eq!(output_of(&events, "stdout"), "still here\n");
            let r = start(&mut c, "after", &["true"], &d.ws, json!({})).await;
            assert_eq!(
                r["error"]["code"], -32600,
                "a reused process id is refused: {r}"
            );
            c.close().await;
        })
    });
}

#[test]
fn hundred_concurrent_processes_lose_no_output() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect(transport, &d.home).await;
            let script = "i=1; while [ $i -le 200 ]; do echo \"$0 line $i\"; i=$((i+1)); done";
            let mut ids = Vec::new();
            for n in 0..100 {
                let id = format!("p{n}");
                c.send(json!({"id": 1000 + n, "method": "process/start", "params": {
                    "processId": id, "argv": ["sh", "-c", script, id.clone()], "cwd": d.ws, "env": env()}}))
                    .await;
                ids.push(id);
            }
            let mut events: std::collections::HashMap<String, Vec<Value>> = Default::default();
            let mut answers = 0;
            let mut closed = 0;
            while answers < 100 || closed < 100 {
                let m = c.recv().await;
                if m.get("id").is_some() {
                    assert!(m.get("result").is_some(), "{m}");
                    answers += 1;
                    continue;
                }
                let id = m["params"]["processId"].as_str().unwrap().to_owned();
                if m["method"] == "process/closed" {
                    closed += 1;
                }
                events.entry(id).or_default().push(m);
            }
            for id in ids {
                let list = &events[&id];
                let seqs: Vec<u64> = list
                    .iter()
                    .map(|e| e["params"]["seq"].as_u64().unwrap())
                    .collect();
                assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "{id}");
                let want: String = (1..=200).map(|i| format!("{id} line {i}\n")).collect();
                assert_eq!(output_of(list, "stdout"), want, "{id}");
                assert_eq!(exited(list)["exitCode"], 0);
            }
            c.close().await;
        })
    });
}

#[test]
fn non_loopback_websocket_without_token_is_refused_at_start() {
    let d = dirs();
    let out = std::process::Command::new(exec_server_support::airlock())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["exec-server", "--listen", "ws://0.0.0.0:0"])
        .env("AIRLOCK_HOME", &d.home)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bearer token is required"), "{stderr}");
    assert!(stderr.contains("--ws-token-file"), "{stderr}");
    assert!(!stderr.contains("listening"), "{stderr}");
}

#[test]
fn websocket_token_is_checked_before_any_method() {
    runtime().block_on(async {
        let d = dirs();
        let token = "a-long-random-token-for-tests-0123456789";
        let file = d.home.join("token");
        std::fs::write(&file, format!("{token}\n")).unwrap();
        let (mut server, addr) =
            exec_server_support::start_ws_server(&d.home, "ws://127.0.0.1:0", Some(&file)).await;
        assert!(
            exec_server_support::ws_connect(&addr, None).await.is_err(),
            "no token"
        );
        assert!(
            exec_server_support::ws_connect(
                &addr,
                Some("a-long-random-token-for-tests-0123456788")
            )
            .await
            .is_err(),
            "wrong token"
        );
        assert!(
            exec_server_support::ws_connect(&addr, Some(token))
                .await
                .is_ok()
        );
        let _ = server.start_kill();
        let _ = server.wait().await;
    });
}
