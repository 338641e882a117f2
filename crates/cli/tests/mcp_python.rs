//! `airlock mcp` driven by a real MCP client library (spec 13 §Tests): the official Python
//! `mcp` package, installed by this test into a virtualenv cached under `target/`
//! (`python3 -m venv` + `pip install`, so PyPI must be reachable the first time). The client
//! script `mcp_client/client.py` checks initialize with and without elicitation, tools/list,
//! an allowed, a failing and a forbidden command, a prompted one answered accept / decline /
//! cancel / approve-for-session / a value that was not offered, apply_patch, progress,
//! cancellation of a long command (its process must be gone), `timeout_ms`, and malformed
//! JSON-RPC on a raw pipe.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Command;

/// The SDK version the script is written against (its client API changed between majors).
const MCP_SDK: &str = "mcp==2.3.0";

const RULES: &str = r#"prefix_rule(pattern=["rm", "-rf"], decision="forbidden", justification="recursive deletes are not allowed")
prefix_rule(pattern=["echo", "needs-approval"], decision="prompt", justification="approval is reviewed")
"#;

/// `target/` of this build (the binary is `target/<profile>/airlock`).
fn target_dir() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_airlock"));
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// A Python with the SDK: reused when it imports `mcp`, else built next to it and renamed
/// into place only once `pip install` succeeded (an interrupted run leaves no half venv).
fn python_with_sdk() -> PathBuf {
    let venv = target_dir().join(format!("mcp-python-venv-{}", MCP_SDK.replace("==", "-")));
    let python = venv.join("bin/python");
    let imports = |python: &Path| {
        Command::new(python)
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["-c", "import mcp.client.stdio"])
            .status()
            .is_ok_and(|status| status.success())
    };
    if imports(&python) {
        return python;
    }
    let building = target_dir().join(format!("mcp-python-venv-building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    let status = Command::new("python3")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-m", "venv"])
        .arg(&building)
        .status()
        .expect("python3 is needed to run the MCP client test");
    assert!(status.success(), "python3 -m venv failed");
    let pip = Command::new(building.join("bin/pip"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["install", "--quiet", "--disable-pip-version-check", MCP_SDK])
        .output()
        .unwrap();
    assert!(
        pip.status.success(),
        "pip install {MCP_SDK} failed (is PyPI reachable?):\n{}",
        String::from_utf8_lossy(&pip.stderr)
    );
    let _ = std::fs::remove_dir_all(&venv);
    std::fs::rename(&building, &venv).unwrap();
    // The venv's scripts name their interpreter by the old path; `bin/python` itself works.
    assert!(imports(&python), "the fresh venv cannot import mcp");
    python
}

#[test]
fn official_python_sdk_drives_airlock_mcp() {
    let python = python_with_sdk();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rules")).unwrap();
    std::fs::write(home.path().join("rules/default.rules"), RULES).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client/client.py");
    let output = Command::new(&python)
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_airlock"))
        .arg(home.path())
        .arg(ws.path())
        .current_dir(ws.path())
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "client.py failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    for check in [
        "ok: initialize with elicitation",
        "ok: tools/list: shell and apply_patch",
        "ok: allowed command runs in the sandbox",
        "ok: forbidden command is an isError result",
        "ok: prompted command accepted through elicitation",
        "ok: prompted command declined",
        "ok: prompted command cancelled",
        "ok: apply_patch applied a patch",
        "ok: notifications/cancelled killed the long command",
        "ok: initialize without elicitation",
        "ok: without elicitation a prompted command is refused",
        "ok: malformed JSON-RPC",
        "all checks passed",
    ] {
        assert!(stdout.contains(check), "missing `{check}` in:\n{stdout}");
    }
    // Every call went through the session's audit log, as `exec` does.
    let audit = std::fs::read_to_string(home.path().join("log/audit.jsonl")).unwrap();
    assert!(audit.contains("needs-approval"), "{audit}");
}
