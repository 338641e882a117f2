//! Golden files: `tests/golden/seatbelt/<case>.sbpl` (the policy text) and
//! `<case>.argv.json` (the argv with the policy replaced by a reference to that file, and the
//! added environment). `UPDATE_GOLDEN=1` rewrites them.

use std::path::PathBuf;

use airlock_protocol::NetworkSandboxPolicy;
use airlock_sandbox::SeatbeltCommand;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::check::check_command;
use crate::fixtures::built_in;
use crate::fixtures::command;
use crate::fixtures::configured;
use crate::fixtures::configured_with_network;
use crate::fixtures::generate;
use crate::fixtures::options;
use crate::fixtures::proxy_options;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/seatbelt")
}

/// Checks the command's structure, then compares (or with `UPDATE_GOLDEN=1` rewrites) both
/// golden files of `case`.
fn assert_golden(case: &str, generated: &SeatbeltCommand) {
    assert_eq!(
        check_command(generated, &command()),
        Vec::<String>::new(),
        "{case}"
    );
    let policy_file = format!("{case}.sbpl");
    let mut argv = generated.argv.clone();
    argv[2] = format!("<policy: {policy_file}>");
    let mut argv_json =
        serde_json::to_string_pretty(&json!({ "argv": argv, "env": generated.env })).unwrap();
    argv_json.push('\n');
    let files = [
        (
            golden_dir().join(&policy_file),
            generated.policy().to_owned(),
        ),
        (golden_dir().join(format!("{case}.argv.json")), argv_json),
    ];
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|value| value == "1") {
        for (path, text) in &files {
            std::fs::write(path, text).unwrap();
        }
        return;
    }
    for (path, text) in &files {
        let expected = std::fs::read_to_string(path).unwrap_or_else(|error| {
            panic!("{}: {error}; run with UPDATE_GOLDEN=1", path.display())
        });
        assert_eq!(*text, expected, "{} differs", path.display());
    }
}

#[test]
fn read_only() {
    assert_golden(
        "read_only",
        &generate(&built_in(":read-only"), None, &options()),
    );
}

#[test]
fn workspace() {
    assert_golden(
        "workspace",
        &generate(&built_in(":workspace"), None, &options()),
    );
}

#[test]
fn workspace_with_network() {
    let profile = built_in(":workspace");
    let generated = generate(&profile, Some(NetworkSandboxPolicy::Enabled), &options());
    assert_golden("workspace_network", &generated);
}

#[test]
fn danger_full_access() {
    let generated = generate(&built_in(":danger-full-access"), None, &options());
    assert_golden("danger_full_access", &generated);
}

/// Custom 1: a deny path inside the workspace, one outside it (`~`), and a deny glob.
#[test]
fn custom_deny_path_and_glob() {
    let profile = configured(
        r#"
[permissions.guarded]
extends = ":workspace"
[permissions.guarded.filesystem]
"~/.ssh" = "deny"
[permissions.guarded.filesystem.":workspace_roots"]
"secrets" = "deny"
"**/*.env" = "deny"
"#,
        "guarded",
    );
    assert_golden("custom_deny", &generate(&profile, None, &options()));
}

/// Custom 2: restricted reads — the platform defaults, a toolchain and the workspace.
#[test]
fn custom_minimal_read() {
    let profile = configured(
        r#"
[permissions.minimal]
[permissions.minimal.filesystem]
":minimal" = "read"
"/opt/toolchain" = "read"
":workspace_roots" = "write"
":tmpdir" = "write"
"#,
        "minimal",
    );
    assert_golden("custom_minimal", &generate(&profile, None, &options()));
}

/// Custom 3: an extra writable root with a narrower read-only directory inside it.
#[test]
fn custom_extra_writable_root() {
    let profile = configured(
        r#"
[permissions.shared]
extends = ":workspace"
[permissions.shared.filesystem]
"~/shared" = { "." = "write", "docs" = "read" }
"#,
        "shared",
    );
    assert_golden("custom_extra_root", &generate(&profile, None, &options()));
}

/// Custom 4: `:workspace` behind a managed loopback proxy with local binding and a socket.
#[test]
fn custom_managed_proxy() {
    let generated = generate(&built_in(":workspace"), None, &proxy_options());
    assert_golden("custom_proxy", &generated);
}

/// A `:workspace` profile with a managed network (spec 12): hosts, a socket directory
/// granted with one socket inside it refused, and a socket outside it refused.
const MANAGED_NETWORK: &str = r#"
[permissions.managed]
extends = ":workspace"
[permissions.managed.network]
enabled = true
[permissions.managed.network.domains]
"github.com" = "allow"
[permissions.managed.network.unix_sockets]
"/Users/airlock/.colima/default" = "allow"
"/Users/airlock/.colima/default/private.sock" = "deny"
"/Users/airlock/other.sock" = "deny"
"#;

/// Custom 5: a managed network without a reachable proxy endpoint (what macOS launches get
/// today): no IP network at all, only the granted sockets.
#[test]
fn managed_network_without_endpoints() {
    let (profile, network) = configured_with_network(MANAGED_NETWORK, "managed");
    let options = options().with_managed_network(network.as_ref(), None);
    assert_golden(
        "managed_network_closed",
        &generate(&profile, None, &options),
    );
}

/// Custom 6: the same behind proxy endpoints on loopback: their two ports only.
#[test]
fn managed_network_with_endpoints() {
    let (profile, network) = configured_with_network(MANAGED_NETWORK, "managed");
    let endpoints = airlock_sandbox::ProxyEndpoints {
        http: "127.0.0.1:41001".parse().unwrap(),
        socks: "127.0.0.1:41002".parse().unwrap(),
    };
    let options = options().with_managed_network(network.as_ref(), Some(&endpoints));
    assert_golden("managed_network_proxy", &generate(&profile, None, &options));
}
