//! `airlock mcp` on raw JSON-RPC lines (spec 13): what a Python SDK client cannot easily
//! show — a client without elicitation served by the configured reviewer (a permission
//! hook, or a missing automatic reviewer: fail closed); the 2025-06-18 form spelling; and
//! elicitation answers that must fail closed (a JSON-RPC error, an unparsable result).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

#[path = "exec_support/outside.rs"]
mod outside;

const RULES: &str = r#"prefix_rule(pattern=["echo", "needs-approval"], decision="prompt", justification="approval is reviewed")
"#;

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    _home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Server {
    fn start(config: &str, extra: &[&str]) -> Self {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("rules")).unwrap();
        std::fs::write(home.path().join("rules/default.rules"), RULES).unwrap();
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .arg("mcp")
            .arg("-C")
            .arg(ws.path())
            .args(extra)
            .env("AIRLOCK_HOME", home.path())
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            _home: home,
            ws,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message (bounded wait, so a hung server fails the test instead of hanging it).
    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("no message from airlock mcp within 60 s")
    }

    fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": capabilities,
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
        );
        let answer = self.next();
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    fn call_shell(&mut self, id: i64, argv: &[&str]) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "shell", "arguments": {"command": argv}}}));
    }

    fn finish(mut self) {
        drop(self.stdin);
        assert_eq!(self.child.wait().unwrap().code(), Some(0));
    }
}

const ALLOW_HOOK: &str = r#"[hooks]
permission_request = [{ matcher = "Bash", command = "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\"}}}'" }]
"#;

const DENY_HOOK: &str = r#"[hooks]
permission_request = [{ matcher = "Bash", command = "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":\"the hook says no\"}}}'" }]
"#;

#[test]
fn without_elicitation_the_configured_hook_decides() {
    let mut server = Server::start(ALLOW_HOOK, &[]);
    server.initialize("2025-11-25", json!({}));
    server.call_shell(1, &["echo", "needs-approval", "hooked"]);
    let answer = server.next();
    let body = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(body["stdout"], "needs-approval hooked\n");
    assert_eq!(body["decision"]["source"], "hook");
    server.finish();

    let mut server = Server::start(DENY_HOOK, &[]);
    server.initialize("2025-11-25", json!({}));
    server.call_shell(1, &["echo", "needs-approval", "hooked"]);
    let answer = server.next();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let reason = answer["result"]["structuredContent"]["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("the hook says no"), "{reason}");
    server.finish();
}

#[test]
fn without_elicitation_a_missing_automatic_reviewer_fails_closed() {
    let mut server = Server::start("", &["--reviewer", "auto_review"]);
    server.initialize("2025-11-25", json!({}));
    server.call_shell(1, &["echo", "needs-approval", "auto"]);
    let answer = server.next();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let body = &answer["result"]["structuredContent"];
    assert_eq!(body["exit_code"], Value::Null);
    assert!(
        body["reason"].as_str().unwrap().contains("auto_review"),
        "{body}"
    );
    server.finish();
}

#[test]
fn elicitation_in_2025_06_18_and_answers_that_fail_closed() {
    let mut server = Server::start("", &[]);
    let init = server.initialize("2025-06-18", json!({"elicitation": {}}));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let answers = [
        (
            json!({"error": {"code": -32603, "message": "no UI"}}),
            "could not ask for approval: no UI",
        ),
        (
            json!({"result": {"decision": "approved"}}),
            "no valid `action`",
        ),
        (
            json!({"result": {"action": "accept", "content": {"decision": "approve_everything"}}}),
            "without an offered decision",
        ),
    ];
    for (n, (reply, expected)) in answers.into_iter().enumerate() {
        let id = i64::try_from(n).unwrap() + 1;
        server.call_shell(id, &["echo", "needs-approval", "x"]);
        let ask = server.next();
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        let params = &ask["params"];
        assert_eq!(params["mode"], "form");
        let decision = &params["requestedSchema"]["properties"]["decision"];
        assert_eq!(
            decision["enum"],
            json!(["approve", "approve_for_session", "deny"])
        );
        assert_eq!(decision["enumNames"][0], "Approve once");
        let mut answer = reply;
        answer["jsonrpc"] = json!("2.0");
        answer["id"] = ask["id"].clone();
        server.send(&answer);
        let result = server.next();
        assert_eq!(result["id"], id, "{result}");
        assert_eq!(result["result"]["isError"], true, "{result}");
        let reason = result["result"]["structuredContent"]["reason"]
            .as_str()
            .unwrap();
        assert!(reason.contains(expected), "{reason}");
    }
    // A call waiting for its approval when the client goes away: the server ends cleanly.
    server.call_shell(9, &["echo", "needs-approval", "late"]);
    assert_eq!(server.next()["method"], "elicitation/create");
    server.finish();
}

#[test]
fn cancelling_a_call_withdraws_its_elicitation() {
    let mut server = Server::start("", &[]);
    server.initialize("2025-11-25", json!({"elicitation": {"form": {}}}));
    server.call_shell(1, &["echo", "needs-approval", "cancel-me"]);
    let ask = server.next();
    assert_eq!(ask["method"], "elicitation/create");
    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    let withdrawn = server.next();
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(withdrawn["params"]["requestId"], ask["id"]);
    // No response for the cancelled call; the next request is answered normally.
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(
        server.next(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    server.finish();
}

#[test]
fn a_patch_outside_the_workspace_is_asked_about_through_elicitation() {
    let mut server = Server::start("", &[]);
    let Some(outside) = outside::outside_dir(server.ws.path()) else {
        return;
    };
    server.initialize("2025-11-25", json!({"elicitation": {}}));
    for (id, action, written) in [(1, "decline", false), (2, "accept", true)] {
        let target = outside.path().join(format!("note-{id}.txt"));
        let patch = format!(
            "*** Begin Patch\n*** Add File: {}\n+written by apply_patch\n*** End Patch\n",
            target.display()
        );
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "apply_patch", "arguments": {"input": patch}}}));
        let ask = server.next();
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        let message = ask["params"]["message"].as_str().unwrap();
        assert!(message.contains("apply these changes"), "{message}");
        assert!(message.contains(&target.display().to_string()), "{message}");
        let values: Vec<&str> = ask["params"]["requestedSchema"]["properties"]["decision"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|choice| choice["const"].as_str().unwrap())
            .collect();
        assert_eq!(values, ["approve", "approve_for_session", "deny"]);
        let content = if action == "accept" {
            json!({"decision": "approve"})
        } else {
            Value::Null
        };
        server.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": action, "content": content}}));
        let result = server.next();
        assert_eq!(result["id"], id, "{result}");
        assert_eq!(result["result"]["isError"], !written, "{result}");
        assert_eq!(target.exists(), written, "{result}");
    }
    server.finish();
}

#[test]
fn two_calls_wait_for_approval_at_once_and_are_answered_out_of_order() {
    let mut server = Server::start("", &[]);
    server.initialize("2025-11-25", json!({"elicitation": {}}));
    server.call_shell(1, &["echo", "needs-approval", "first"]);
    server.call_shell(2, &["echo", "needs-approval", "second"]);
    let asks = [server.next(), server.next()];
    let ask_for = |word: &str| {
        asks.iter()
            .find(|ask| ask["params"]["message"].as_str().unwrap().contains(word))
            .unwrap()
            .clone()
    };
    let (first, second) = (ask_for("first"), ask_for("second"));
    assert_ne!(first["id"], second["id"]);
    server.send(&json!({"jsonrpc": "2.0", "id": second["id"], "result": {"action": "accept", "content": {"decision": "approve"}}}));
    let answer = server.next();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["stdout"],
        "needs-approval second\n"
    );
    server.send(&json!({"jsonrpc": "2.0", "id": first["id"], "result": {"action": "decline"}}));
    let answer = server.next();
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["isError"], true);
    server.finish();
}

#[test]
fn print_config_is_the_entry_that_starts_this_server() {
    let ws = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "mcp",
            "--print-config",
            "-a",
            "untrusted",
            "-r",
            "team.rules",
            "-C",
        ])
        .arg(ws.path())
        .current_dir(ws.path())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let config: Value = serde_json::from_slice(&output.stdout).unwrap();
    let ws = ws.path().to_str().unwrap();
    assert_eq!(
        config,
        json!({"mcpServers": {"airlock": {
            "command": env!("CARGO_BIN_EXE_airlock"),
            "args": ["mcp", "-C", ws, "-a", "untrusted", "-r", format!("{ws}/team.rules")],
        }}})
    );
}

#[test]
fn timeout_ms_does_not_count_the_time_a_person_takes_to_answer() {
    let mut server = Server::start("", &[]);
    server.initialize("2025-11-25", json!({"elicitation": {}}));
    server.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "shell",
        "arguments": {"command": ["echo", "needs-approval", "slowly"], "timeout_ms": 500}}}),
    );
    let ask = server.next();
    assert_eq!(ask["method"], "elicitation/create");
    // A person who takes longer than the whole budget to decide.
    std::thread::sleep(Duration::from_millis(1500));
    server.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"decision": "approve"}}}));
    let answer = server.next();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["stdout"],
        "needs-approval slowly\n"
    );
    server.finish();
}
