//! `airlock doctor` reports git's `safe.bareRepository` (what `:workspace` does not protect:
//! a directory a sandboxed command turned into a bare repository, used later by the user's
//! own git there). The real binary, with a global git configuration of the test's own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use exec_support::Dirs;
use exec_support::airlock_bin;

fn bare_repository_line(dirs: &Dirs, global_config: &str) -> serde_json::Value {
    let config = dirs.home.join("gitconfig");
    std::fs::write(&config, global_config).unwrap();
    let out = std::process::Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH")
        .args(["doctor", "--json"])
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .env("GIT_CONFIG_GLOBAL", &config)
        .env("GIT_CONFIG_SYSTEM", "/dev/null")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    report
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {report}"))
        .iter()
        .find(|c| c["check"] == "git bare-repository discovery")
        .cloned()
        .unwrap_or_else(|| panic!("no git line in {report}"))
}

#[test]
fn doctor_says_whether_git_uses_planted_bare_repositories() {
    let dirs = Dirs::new();
    let unset = bare_repository_line(&dirs, "");
    assert_eq!(unset["ok"], true, "informational: {unset}");
    let detail = unset["detail"].as_str().unwrap();
    assert!(detail.contains("unset (git's default, all)"), "{detail}");
    assert!(
        detail.contains("git config --global safe.bareRepository explicit"),
        "{detail}"
    );

    let all = bare_repository_line(&dirs, "[safe]\n\tbareRepository = all\n");
    assert!(
        all["detail"].as_str().unwrap().contains("is `all`"),
        "{all}"
    );

    let explicit = bare_repository_line(&dirs, "[safe]\n\tbareRepository = explicit\n");
    let detail = explicit["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("safe.bareRepository = explicit"),
        "{detail}"
    );
}
