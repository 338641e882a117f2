//! `[permissions.<id>.network]` managed network keys (spec 12 §Config).

use airlock_permissions::network::NetworkMode;
use airlock_permissions::network::UnixSocketPermission;
use pretty_assertions::assert_eq;

use crate::support::error;
use crate::support::select;

const BASE: &str = "default_permissions = \"dev\"\n[permissions.dev]\nextends = \":workspace\"\n";

#[test]
fn domains_mode_local_binding_and_unix_sockets_compile() {
    let text = format!(
        "{BASE}[permissions.dev.network]\nenabled = true\nmode = \"limited\"\nallow_local_binding = true\n\
         [permissions.dev.network.domains]\n\"github.com:443\" = \"allow\"\n\"**.pypi.org\" = \"allow\"\n\"evil.test\" = \"deny\"\n\
         [permissions.dev.network.unix_sockets]\n\"/run/docker.sock\" = \"allow\"\n\"/run/other.sock\" = \"deny\"\n"
    );
    let selected = select(&text, None, "/work/project");
    let managed = selected
        .compiled
        .managed_network
        .clone()
        .expect("managed network");
    let allow: Vec<&str> = managed.allow.iter().map(|e| e.pattern.source()).collect();
    let deny: Vec<&str> = managed.deny.iter().map(|e| e.pattern.source()).collect();
    assert_eq!(allow, ["**.pypi.org", "github.com:443"]);
    assert_eq!(deny, ["evil.test"]);
    assert_eq!(managed.mode, NetworkMode::Limited);
    assert!(managed.allow_local_binding);
    assert_eq!(
        managed
            .unix_sockets
            .get(std::path::Path::new("/run/docker.sock")),
        Some(&UnixSocketPermission::Allow)
    );
    assert!(selected.symbolic().network().is_enabled());
}

#[test]
fn no_domains_table_means_full_network_and_off_means_off() {
    let full = format!("{BASE}[permissions.dev.network]\nenabled = true\n");
    assert_eq!(
        select(&full, None, "/work/project")
            .compiled
            .managed_network,
        None
    );
    let off = format!(
        "{BASE}[permissions.dev.network]\nenabled = false\n[permissions.dev.network.domains]\n\"a.test\" = \"allow\"\n"
    );
    let selected = select(&off, None, "/work/project");
    assert_eq!(selected.compiled.managed_network, None);
    assert!(!selected.symbolic().network().is_enabled());
    assert!(
        selected
            .warnings
            .iter()
            .any(|w| w.contains("network.domains` has no effect")),
        "{:?}",
        selected.warnings
    );
}

#[test]
fn unix_sockets_without_domains_warn_what_they_do() {
    for (enabled, effect) in [
        (
            "true",
            "every Unix socket stays reachable with the full network",
        ),
        (
            "false",
            "no Unix socket is reachable while the network is off",
        ),
    ] {
        let text = format!(
            "{BASE}[permissions.dev.network]\nenabled = {enabled}\n\
             [permissions.dev.network.unix_sockets]\n\"/run/docker.sock\" = \"allow\"\n"
        );
        let selected = select(&text, None, "/work/project");
        assert_eq!(selected.compiled.managed_network, None);
        assert!(
            selected.warnings.iter().any(|w| w
                .contains("network.unix_sockets` is enforced only with a managed network")
                && w.contains(effect)),
            "{:?}",
            selected.warnings
        );
    }
    let only_denies = format!(
        "{BASE}[permissions.dev.network]\nenabled = true\n\
         [permissions.dev.network.unix_sockets]\n\"/run/docker.sock\" = \"deny\"\n"
    );
    assert!(
        !select(&only_denies, None, "/work/project")
            .warnings
            .iter()
            .any(|w| w.contains("unix_sockets"))
    );
}

#[test]
fn invalid_entries_are_load_errors_naming_the_entry() {
    for (entry, needle) in [
        (
            "\"example.com:0\" = \"allow\"",
            "port must be a number from 1 to 65535",
        ),
        ("\"http://example.com\" = \"allow\"", "invalid host pattern"),
        (
            "\"*\" = \"deny\"",
            "a bare `*` is allowed only in the allow list",
        ),
        (
            "\"a.*.example.com\" = \"allow\"",
            "wildcards are allowed only",
        ),
        ("\"example.com\" = \"maybe\"", "invalid value `maybe`"),
        ("\"1.2.3.4.5\" = \"allow\"", "not a valid one"),
    ] {
        let text = format!(
            "{BASE}[permissions.dev.network]\nenabled = true\n[permissions.dev.network.domains]\n{entry}\n"
        );
        let message = error(&text, None);
        assert!(message.contains(needle), "{entry}: {message}");
        assert!(
            message.contains("permissions.dev.network.domains."),
            "{entry}: {message}"
        );
    }
    let mode = format!("{BASE}[permissions.dev.network]\nenabled = true\nmode = \"open\"\n");
    assert!(error(&mode, None).contains("permissions.dev.network.mode"));
    let socket = format!(
        "{BASE}[permissions.dev.network]\nenabled = true\n[permissions.dev.network.unix_sockets]\n\"relative.sock\" = \"allow\"\n"
    );
    assert!(error(&socket, None).contains("must be absolute"));
}
