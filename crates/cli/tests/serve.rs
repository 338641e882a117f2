//! `airlock serve` driven over stdio (and a Unix socket) by the reference Python client
//! (`examples/airlock_client.py`), every message validated against the schema `airlock schema`
//! writes (issue 13 "Must show"). The scenarios live in `tests/serve/scenarios.py` (launch ones in
//! `scenarios_launch.py`, shared helpers in `serve_harness.py`).
//!
//! Needs `python3` and the `jsonschema` package: when the system Python lacks it, a virtualenv
//! in the test's directory gets it from PyPI, else Debian's `python3-jsonschema` is installed
//! with apt (as root). If none of these works the test fails with the fix; it never skips.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn has_jsonschema(python: &Path) -> bool {
    Command::new(python)
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-c", "import jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A Python with `jsonschema`, set up once per test binary.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let system = PathBuf::from("python3");
        if has_jsonschema(&system) {
            return system;
        }
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-venv");
        let venv_python = venv.join("bin/python3");
        if !has_jsonschema(&venv_python) {
            let made = Command::new("python3")
                .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
                .args(["-m", "venv"])
                .arg(&venv)
                .status();
            if made.is_ok_and(|s| s.success()) {
                let _ = Command::new(&venv_python)
                    .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
                    .args(["-m", "pip", "install", "--quiet", "jsonschema"])
                    .status();
            }
        }
        if has_jsonschema(&venv_python) {
            return venv_python;
        }
        let _ = Command::new("apt-get")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["install", "-y", "-q", "python3-jsonschema"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status();
        assert!(
            has_jsonschema(&system),
            "these tests need python3 with the jsonschema package: `pip install jsonschema` or \
             `apt-get install python3-jsonschema` (a virtualenv install from PyPI failed too)"
        );
        system
    })
}

fn run_scenario(name: &str) {
    let work = tempfile::Builder::new()
        .prefix("airlock-serve-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let schema = work.path().join("schema");
    let airlock = env!("CARGO_BIN_EXE_airlock");
    let written = Command::new(airlock)
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["schema", "--out"])
        .arg(&schema)
        .output()
        .unwrap();
    assert!(written.status.success(), "airlock schema: {written:?}");
    let script = repo_root().join("crates/cli/tests/serve/scenarios.py");
    let output = Command::new(python())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg(&script)
        .arg(name)
        .env("AIRLOCK_BIN", airlock)
        .env("SCHEMA_DIR", &schema)
        .env("WORK_DIR", work.path())
        .env("REPO_ROOT", repo_root())
        // Sandboxed children must not load libraries from a writable build tree.
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "scenario {name} failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(stdout.contains(&format!("{name}: ok")), "{stdout}");
}

#[test]
fn two_hundred_concurrent_calls_resolve_once_each_with_their_answer() {
    run_scenario("concurrent");
}

#[test]
fn accept_for_session_skips_the_second_prompt_of_that_thread_only() {
    run_scenario("session_cache");
}

#[test]
fn interrupt_kills_the_running_command_and_aborts_only_its_turn() {
    run_scenario("interrupt");
}

#[test]
fn disconnect_mid_approval_leaves_no_process_or_pending_entry() {
    run_scenario("disconnect");
}

#[test]
fn unix_socket_is_private_and_survives_a_client_that_disconnects() {
    run_scenario("unix");
}

#[test]
fn malformed_input_gets_the_right_codes_and_the_server_keeps_serving() {
    run_scenario("malformed");
}

#[test]
fn apply_patch_sends_its_changes_for_approval_and_a_decline_writes_nothing() {
    run_scenario("patch");
}

#[test]
fn a_cached_launch_still_protects_a_repository_created_since_the_last_call() {
    run_scenario("launch_cache");
}

#[test]
fn bubblewrap_gets_only_the_descriptors_of_its_own_launch() {
    run_scenario("descriptors");
}

#[test]
fn a_killed_server_leaves_no_sandbox_running() {
    run_scenario("server_killed");
}

#[test]
fn stdio_serving_works_on_pipes_and_a_socket_pair() {
    run_scenario("stdio_kinds");
}

#[test]
fn a_server_stopped_mid_launch_kills_every_sandbox() {
    run_scenario("stopped_mid_launch");
}

#[test]
fn an_interrupt_mid_launch_kills_every_sandbox() {
    run_scenario("interrupted_mid_launch");
}

#[test]
fn bubblewrap_starts_before_its_plan_and_never_runs_a_failed_one() {
    run_scenario("early_start");
}

#[test]
fn no_command_holds_another_launchs_status_channel() {
    run_scenario("status_channels");
}

#[test]
fn a_plan_too_long_for_any_command_line_is_a_named_set_up_failure() {
    run_scenario("plan_too_long");
}
