//! `airlock exec-server` `fs/*` methods (spec 09): every file operation obeys the same
//! sandbox profile as a process would, over each transport.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_server_support;

use exec_server_support::Client;
use exec_server_support::b64;
use exec_server_support::output_of;
use exec_server_support::setup::context;
use exec_server_support::setup::dirs;
use exec_server_support::setup::each_transport;
use exec_server_support::setup::profile;
use exec_server_support::setup::start;
use exec_server_support::unb64;
use serde_json::json;

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
