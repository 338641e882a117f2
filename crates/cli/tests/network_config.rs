//! The managed network's configuration end to end (spec 12): `network_rule` lines and
//! `[permissions.<id>.network.domains]` feed the lists that `permissions show` and `explain`
//! print; an invalid entry is a load error naming it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod network_support;

use network_support::airlock_in;
use network_support::origin;
use network_support::run;
use network_support::setup;

#[test]
fn network_rule_lines_feed_the_lists() {
    let port = origin();
    let setup = setup("[permissions.net.network.domains]\n\"unused.test\" = \"allow\"\n");
    std::fs::create_dir_all(setup.home.path().join("rules")).unwrap();
    std::fs::write(
        setup.home.path().join("rules/default.rules"),
        "network_rule(host=\"localhost\", protocol=\"http\", decision=\"allow\")\n\
         network_rule(host=\"blocked.test\", protocol=\"https\", decision=\"deny\")\n",
    )
    .unwrap();
    let (out, err) = run(
        &setup,
        &format!(
            "curl -sS -m 10 http://localhost:{port}/; curl -sS -m 10 http://blocked.test/; echo"
        ),
    );
    assert!(out.contains(&format!("origin {port}")), "{out}\n{err}");
    assert!(
        out.contains("matches deny entry `blocked.test` (denied)"),
        "{out}\n{err}"
    );
}

#[test]
fn permissions_show_and_explain_print_the_effective_network_rules() {
    let setup = setup(
        "mode = \"limited\"\n[permissions.net.network.domains]\n\"github.com:443\" = \"allow\"\n\"evil.test\" = \"deny\"\n",
    );
    std::fs::create_dir_all(setup.home.path().join("rules")).unwrap();
    std::fs::write(
        setup.home.path().join("rules/default.rules"),
        "network_rule(host=\"pypi.org\", protocol=\"https\", decision=\"allow\")\n",
    )
    .unwrap();
    let want = [
        "network: managed proxy (mode limited, local destinations refused unless an IP literal or localhost is allowed by name)",
        "  deny  evil.test (config)",
        "  allow github.com:443 (config)",
        "  allow pypi.org (network_rule)",
    ];
    let (show, err, _) = airlock_in(&setup, &["permissions", "show"]);
    for line in want {
        assert!(
            show.lines().any(|l| l == line),
            "{line:?} missing:\n{show}\n{err}"
        );
    }
    let (explain, err, _) = airlock_in(&setup, &["explain", "--", "curl", "https://github.com"]);
    for line in want {
        assert!(
            explain.lines().any(|l| l == line),
            "{line:?} missing:\n{explain}\n{err}"
        );
    }
}

#[test]
fn an_invalid_domains_entry_is_a_load_error_naming_it() {
    let setup = setup("[permissions.net.network.domains]\n\"github.com:99999\" = \"allow\"\n");
    let (_, err, code) = airlock_in(&setup, &["sandbox", "--", "true"]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains(
            "invalid host pattern `github.com:99999`: port must be a number from 1 to 65535"
        ) && err.contains("permissions.net.network.domains.\"github.com:99999\""),
        "{err}"
    );
}
