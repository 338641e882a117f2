//! `airlock exec-server` (spec 09, issue 15) over stdio, loopback WebSocket and a Unix socket:
//! the process and fs methods, seq ordering, the real Linux sandbox applied from the context
//! the client sends, malformed input, concurrency, and the token rule of WebSocket listeners.

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
use exec_server_support::unb64;
use serde_json::Value;
use serde_json::json;

struct Dirs {
    _root: tempfile::TempDir,
    home: std::path::PathBuf,
    ws: std::path::PathBuf,
}

/// The test directories, under cargo's target tmp dir, or under `AIRLOCK_TEST_TMPDIR` when set
/// (to run the suite as a clone under `/tmp` would, without moving the checkout).
fn dirs() -> Dirs {
    let base = std::env::var_os("AIRLOCK_TEST_TMPDIR").map_or_else(
        || env!("CARGO_TARGET_TMPDIR").into(),
        std::path::PathBuf::from,
    );
    let root = tempfile::Builder::new()
        .prefix("airlock-es-")
        .tempdir_in(base)
        .unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    Dirs {
        _root: root,
        home,
        ws,
    }
}

fn profile(id: &str) -> Value {
    serde_json::to_value(airlock_permissions::built_in_profile(id).unwrap()).unwrap()
}

fn context(permissions: Value, ws: &Path) -> Value {
    json!({
        "permissions": permissions,
        "cwd": ws,
        "workspaceRoots": [format!("file://{}", ws.display())],
        "windowsSandboxLevel": "disabled",
    })
}

fn env() -> Value {
    json!({"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
}

async fn start(client: &mut Client, id: &str, argv: &[&str], cwd: &Path, extra: Value) -> Value {
    let mut params = json!({"processId": id, "argv": argv, "cwd": cwd, "env": env()});
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    client.request("process/start", params).await
}

fn each_transport(
    test: impl Fn(Transport) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>,
) {
    for transport in ALL {
        eprintln!("transport {transport:?}");
        runtime().block_on(test(transport));
    }
}

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
fn fs_operations_obey_the_same_profile() {
    each_transport(|transport| {
        Box::pin(async move {
            let d = dirs();
            let mut c = Client::connect(transport, &d.home).await;
            let secret = d.ws.join("secret.txt");
            std::fs::write(&secret, "s3cret").unwrap();
            std::fs::write(d.ws.join("open.txt"), "hello").unwrap();
            let mut deny = profile(":read-only");
            deny["file_system"]["entries"]
                .as_array_mut()
                .unwrap()
                .push(json!({"path": {"type": "path", "path": secret}, "access": "deny"}));
            let ctx = context(deny, &d.ws);
            let r = c
                .request(
                    "fs/readFile",
                    json!({"path": secret, "sandbox": ctx.clone()}),
                )
                .await;
            assert_eq!(r["error"]["code"], -32600, "{r}");
            assert_eq!(
                r["error"]["message"], "Permission denied (os error 13)",
                "{r}"
            );
            // The same file through a file:// URI, still denied.
            let uri = format!("file://{}", secret.display());
            let r = c
                .request("fs/readFile", json!({"path": uri, "sandbox": ctx.clone()}))
                .await;
            assert_eq!(r["error"]["code"], -32600, "{r}");
            // A sandboxed process with the same context cannot read it either.
            start(
                &mut c,
                "cat",
                &["cat", secret.to_str().unwrap()],
                &d.ws,
                json!({"sandbox": ctx.clone()}),
            )
            .await;
            let events = c.collect("cat").await;
            assert!(
                !output_of(&events, "stdout").contains("s3cret"),
                "{events:?}"
            );
            // Other files read fine, in the sandbox and without one.
            let r = c
                .request(
                    "fs/readFile",
                    json!({"path": d.ws.join("open.txt"), "sandbox": ctx.clone()}),
                )
                .await;
            assert_eq!(unb64(&r["result"]["dataBase64"]), b"hello", "{r}");
            let r = c.request("fs/readFile", json!({"path": secret})).await;
            assert_eq!(
                unb64(&r["result"]["dataBase64"]),
                b"s3cret",
                "no sandbox, no restriction: {r}"
            );
            // Read-only: writes, directories and removals are refused by the mount.
            let r = c
                .request("fs/writeFile", json!({"path": d.ws.join("new.txt"), "dataBase64": b64(b"x"), "sandbox": ctx.clone()}))
                .await;
            assert_eq!(
                r["error"]["message"], "Read-only file system (os error 30)",
                "{r}"
            );
            assert!(!d.ws.join("new.txt").exists());
            let r = c
                .request(
                    "fs/remove",
                    json!({"path": d.ws.join("open.txt"), "sandbox": ctx.clone()}),
                )
                .await;
            assert_eq!(r["error"]["code"], -32600, "{r}");
            assert!(d.ws.join("open.txt").exists());
            // Workspace: writes in the workspace work, .git stays read-only.
            let ws_ctx = context(profile(":workspace"), &d.ws);
            let r = c
                .request("fs/writeFile", json!({"path": d.ws.join("new.txt"), "dataBase64": b64(b"abc"), "sandbox": ws_ctx.clone()}))
                .await;
            assert_eq!(r["result"], json!({}), "{r}");
            assert_eq!(std::fs::read(d.ws.join("new.txt")).unwrap(), b"abc");
            let r = c
                .request("fs/writeFile", json!({"path": d.ws.join(".git/config"), "dataBase64": b64(b"x"), "sandbox": ws_ctx.clone()}))
                .await;
            assert_eq!(
                r["error"]["message"], "Read-only file system (os error 30)",
                "{r}"
            );
            let r = c
                .request(
                    "fs/createDirectory",
                    json!({"path": d.ws.join("a/b"), "recursive": true, "sandbox": ws_ctx.clone()}),
                )
                .await;
            assert_eq!(r["result"], json!({}), "{r}");
            let r = c
                .request("fs/copy", json!({"sourcePath": d.ws.join("new.txt"), "destinationPath": d.ws.join("a/b/c.txt"), "recursive": false, "sandbox": ws_ctx.clone()}))
                .await;
            assert_eq!(r["result"], json!({}), "{r}");
            let r = c
                .request(
                    "fs/readDirectory",
                    json!({"path": d.ws.join("a/b"), "sandbox": ws_ctx.clone()}),
                )
                .await;
            assert_eq!(
                r["result"]["entries"],
                json!([{"fileName": "c.txt", "isDirectory": false, "isFile": true}]),
                "{r}"
            );
            let r = c
                .request(
                    "fs/getMetadata",
                    json!({"path": d.ws.join("a"), "sandbox": ws_ctx.clone()}),
                )
                .await;
            assert_eq!(r["result"]["isDirectory"], true, "{r}");
            let r = c
                .request(
                    "fs/remove",
                    json!({"path": d.ws.join("a"), "recursive": true, "sandbox": ws_ctx}),
                )
                .await;
            assert_eq!(r["result"], json!({}), "{r}");
            assert!(!d.ws.join("a").exists());
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

/// A token no other process carries: a `sleep` duration unique to this test run.
fn unique_sleep() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("1000.{}{n:04}", std::process::id())
}

/// The live (not zombie) processes whose command line contains `token`, read from /proc.
fn live_with(token: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(token) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if !stat.is_empty() && !stat.contains(") Z ") {
            pids.push(pid);
        }
    }
    pids
}

/// Waits (bounded) until no live process carries `token`; the ones left otherwise.
async fn gone_within(token: &str, bound: std::time::Duration) -> Result<(), Vec<i32>> {
    let deadline = std::time::Instant::now() + bound;
    loop {
        let left = live_with(token);
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
