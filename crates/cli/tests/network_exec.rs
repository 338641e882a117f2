//! `airlock exec` behind the managed network (spec 12): runs behind the proxy, asks the
//! session's reviewers (hooks) about an unlisted host, refuses it when they deny or under
//! `never`; `doctor` checks the path.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod network_support;

use network_support::Setup;
use network_support::airlock_in;
use network_support::origin;
use network_support::setup;

#[test]
fn exec_runs_behind_the_proxy_and_hints_when_a_program_bypasses_it() {
    let port = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let url = format!("http://localhost:{port}/");
    let (out, err, code) = airlock_in(&setup, &["exec", "--", "curl", "-sS", "-m", "10", &url]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(out, format!("origin {port}\n"));
    let (out, err, _) = airlock_in(
        &setup,
        &[
            "exec",
            "--",
            "curl",
            "-sS",
            "-m",
            "10",
            "--noproxy",
            "*",
            &url,
        ],
    );
    assert!(!out.contains("origin"), "{out}");
    assert!(
        err.contains("airlock: hint: the command seems to have failed reaching the network; under this profile the sandbox reaches the network only through Airlock's proxy"),
        "{err}"
    );
}

/// A `PermissionRequest` hook that logs its input and answers `behavior`.
fn hook(setup: &Setup, behavior: &str) -> (String, std::path::PathBuf) {
    let log = setup.home.path().join("hook.log");
    let script = setup.home.path().join("hook.sh");
    std::fs::write(
        &script,
        format!(
            "tr -d '\\n' >> '{log}'\necho >> '{log}'\necho '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{{\"behavior\":\"{behavior}\",\"message\":\"hook says {behavior}\"}}}}}}'\n",
            log = log.display()
        ),
    )
    .unwrap();
    (
        format!(
            "[[hooks.permission_request]]\nmatcher = \"*\"\ncommand = \"sh '{}'\"\ntimeout = 20\n",
            script.display()
        ),
        log,
    )
}

fn exec_setup(port_allowed_by_hook: bool) -> (Setup, std::path::PathBuf, u16) {
    let port = origin();
    // `allow_local_binding` lets a loopback origin stand in for an unlisted public host.
    let setup = setup(
        "allow_local_binding = true\n[permissions.net.network.domains]\n\"unused.test\" = \"allow\"\n",
    );
    let (hooks, log) = hook(
        &setup,
        if port_allowed_by_hook {
            "allow"
        } else {
            "deny"
        },
    );
    let config = std::fs::read_to_string(setup.home.path().join("config.toml")).unwrap();
    std::fs::write(
        setup.home.path().join("config.toml"),
        format!("{config}{hooks}"),
    )
    .unwrap();
    (setup, log, port)
}

#[test]
fn exec_asks_the_session_reviewers_about_an_unlisted_host() {
    let (setup, log, port) = exec_setup(true);
    let url = format!("http://localhost:{port}/");
    let (out, err, code) = airlock_in(
        &setup,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            &format!("curl -sS -m 20 {url}; curl -sS -m 20 {url}"),
        ],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(out, format!("origin {port}\norigin {port}\n"), "{err}");
    let asked = std::fs::read_to_string(&log).unwrap();
    let network_questions: Vec<&str> = asked
        .lines()
        .filter(|line| line.contains(&format!("network-access http://localhost:{port}")))
        .collect();
    assert_eq!(
        network_questions.len(),
        2,
        "`approved` is once per request: {asked}"
    );
    let audit = std::fs::read_to_string(setup.home.path().join("log/audit.jsonl")).unwrap();
    let network: Vec<serde_json::Value> = audit
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["type"] == "network_request")
        .collect();
    assert_eq!(network.len(), 2, "{audit}");
    for entry in &network {
        assert_eq!(entry["host"], "localhost");
        assert_eq!(entry["port"], port);
        assert_eq!(entry["protocol"], "http");
        assert_eq!(entry["decision"], "Approved");
    }
    assert!(
        network
            .iter()
            .all(|entry| !entry.to_string().contains("http://")),
        "no URL in the network entries: {network:?}"
    );
}

#[test]
fn exec_refuses_an_unlisted_host_the_reviewer_denies_and_never_asks_under_never() {
    let (setup, log, port) = exec_setup(false);
    let url = format!("http://localhost:{port}/");
    let (out, err, _) = airlock_in(&setup, &["exec", "--", "curl", "-sS", "-m", "20", &url]);
    assert!(
        out.contains("the reviewer denied access (not_allowed)"),
        "{out}\n{err}"
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("network-access")
    );
    let audit = std::fs::read_to_string(setup.home.path().join("log/audit.jsonl")).unwrap();
    assert!(
        audit
            .lines()
            .any(|line| line.contains("\"type\":\"network_request\"")
                && line.contains("\"decision\":\"blocked\"")),
        "{audit}"
    );
    std::fs::remove_file(&log).unwrap();
    let (out, err, _) = airlock_in(
        &setup,
        &["exec", "-a", "never", "--", "curl", "-sS", "-m", "20", &url],
    );
    assert!(out.contains("(not_allowed)"), "{out}\n{err}");
    let asked = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !asked.contains("network-access"),
        "never asks under `never`: {asked}"
    );
}

#[test]
fn doctor_checks_the_managed_network_path() {
    let setup = setup("");
    let (out, err, _) = airlock_in(&setup, &["doctor", "--json"]);
    let checks: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let network = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "managed network (proxy, bridge, network namespace)")
        .expect("the check is listed");
    assert_eq!(network["ok"], true, "{network}");
}
