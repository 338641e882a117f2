//! The directories, profiles and request shapes the exec-server test binaries share.

use std::path::Path;

use serde_json::Value;
use serde_json::json;

use super::ALL;
use super::Client;
use super::Transport;
use super::runtime;

pub struct Dirs {
    pub _root: tempfile::TempDir,
    pub home: std::path::PathBuf,
    pub ws: std::path::PathBuf,
}

/// The test directories, under cargo's target tmp dir, or under `AIRLOCK_TEST_TMPDIR` when set
/// (to run the suite as a clone under `/tmp` would, without moving the checkout).
pub fn dirs() -> Dirs {
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

pub fn profile(id: &str) -> Value {
    serde_json::to_value(airlock_permissions::built_in_profile(id).unwrap()).unwrap()
}

pub fn context(permissions: Value, ws: &Path) -> Value {
    json!({
        "permissions": permissions,
        "cwd": ws,
        "workspaceRoots": [format!("file://{}", ws.display())],
        "windowsSandboxLevel": "disabled",
    })
}

pub fn env() -> Value {
    json!({"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
}

pub async fn start(
    client: &mut Client,
    id: &str,
    argv: &[&str],
    cwd: &Path,
    extra: Value,
) -> Value {
    let mut params = json!({"processId": id, "argv": argv, "cwd": cwd, "env": env()});
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    client.request("process/start", params).await
}

pub fn each_transport(
    test: impl Fn(Transport) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>,
) {
    for transport in ALL {
        eprintln!("transport {transport:?}");
        runtime().block_on(test(transport));
    }
}

/// A token no other process carries: a `sleep` duration unique to this test run.
pub fn unique_sleep() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("1000.{}{n:04}", std::process::id())
}

/// The live (not zombie) processes whose command line contains `token`, read from /proc.
pub fn live_with(token: &str) -> Vec<i32> {
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
pub async fn gone_within(token: &str, bound: std::time::Duration) -> Result<(), Vec<i32>> {
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
