//! `airlock permissions show` as a process (spec 10 §CLI, spec 04): `--json` equals Codex 0.169's
//! helper argument for the same config and cwd (golden files in
//! `crates/permissions/tests/golden`, with `/srv/golden` moved into a temporary directory), the
//! summary names writable roots, protected subpaths, denied reads and network, and bad input
//! fails with exit 1 and a message naming the file, key and fix.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::Path;
use std::path::PathBuf;
use std::process::{Command, Output};

use pretty_assertions::assert_eq;

const GOLDEN_BASE: &str = "/srv/golden";

/// A `$HOME` outside every writable root of these tests (missing: nothing is listed for it).
const OUTSIDE_HOME: &str = "/nonexistent-airlock-test-home";

struct Setup {
    _dir: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
}

impl Setup {
    /// `base/{ws,ws2,secret}` and an Airlock home holding `config` (with `/srv/golden` → base).
    fn new(config: Option<&str>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for sub in ["ws", "ws2", "secret", "home"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        let home = base.join("home");
        if let Some(name) = config {
            let text = golden(name).replace(GOLDEN_BASE, base.to_str().unwrap());
            std::fs::write(home.join("config.toml"), text).unwrap();
        }
        Self {
            _dir: dir,
            base,
            home,
        }
    }

    /// `airlock ARGS` in `ws`, with a `$HOME` that lies in no writable root (a `$HOME`
    /// inside one adds its startup entries, see [`home_inside_the_workspace_is_listed`]).
    fn run(&self, args: &[&str]) -> Output {
        self.run_with_home(args, Path::new(OUTSIDE_HOME))
    }

    fn run_with_home(&self, args: &[&str], home: &Path) -> Output {
        Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(self.base.join("ws"))
            .env("AIRLOCK_HOME", &self.home)
            .env("HOME", home)
            .env_remove("TMPDIR")
            .env_remove("RUST_BACKTRACE")
            .output()
            .unwrap()
    }

    fn golden_json(&self, name: &str) -> String {
        format!(
            "{}\n",
            golden(name)
                .trim_end()
                .replace(GOLDEN_BASE, self.base.to_str().unwrap())
        )
    }
}

fn golden(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../permissions/tests/golden")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `json` without what Airlock adds for its own home when that home lies in a writable root
/// (these tests keep it under the system's temporary directory, which `:workspace` makes
/// writable): a read entry for it and the `protected_policy_paths` key, the last one (issue
/// 11, finding F5). The rest must stay byte for byte Codex's.
fn without_home_protection(json: &str, home: &Path) -> String {
    let entry = format!(
        ",{{\"path\":{{\"type\":\"path\",\"path\":\"{}\"}},\"access\":\"read\",\"missing_path_behavior\":\"skip\"}}",
        home.display()
    );
    let mut out = json.replacen(&entry, "", 1);
    if let Some(at) = out.find(",\"protected_policy_paths\":") {
        let listed = out.get(at..).unwrap_or_default().to_owned();
        assert!(listed.contains(&home.display().to_string()), "{listed}");
        out.replace_range(at.., "}\n");
    }
    out
}

#[test]
fn json_equals_codex_for_built_ins() {
    let setup = Setup::new(None);
    for (id, file) in [
        (":read-only", "read_only.json"),
        (":workspace", "workspace.json"),
    ] {
        let out = setup.run(&["permissions", "show", "-P", id, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(
            without_home_protection(&text(&out.stdout), &setup.home),
            setup.golden_json(file),
            "{id}"
        );
    }
    // No config at all: the embedded default is `:workspace`.
    let out = setup.run(&["permissions", "show", "--json"]);
    assert_eq!(
        without_home_protection(&text(&out.stdout), &setup.home),
        setup.golden_json("workspace.json")
    );
}

#[test]
fn json_equals_codex_for_workspace_extension() {
    let setup = Setup::new(Some("dev.config.toml"));
    let ws = setup.base.join("ws");
    let out = setup.run(&["permissions", "show", "-C", ws.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        without_home_protection(&text(&out.stdout), &setup.home),
        setup.golden_json("dev.json")
    );
    assert!(
        text(&out.stderr).contains("warning: "),
        "the `**` glob warns"
    );
}

#[test]
fn summary_lists_roots_protected_paths_denied_reads_and_network() {
    let setup = Setup::new(Some("dev.config.toml"));
    let out = setup.run(&["permissions", "show"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    let base = setup.base.display();
    for expected in [
        "profile: dev (extends :workspace)".to_owned(),
        format!("workspace roots: {base}/ws, {base}/ws2"),
        format!("  {base}/ws2\n    read-only: {base}/ws2/.git\n"),
        format!("    read-only: {base}/ws/.codex\n"),
        format!("  path {base}/secret\n"),
        format!("  glob {base}/ws/**/*.env\n"),
        "unsandboxed execution allowed: no".to_owned(),
        "network: enabled\n".to_owned(),
    ] {
        assert!(
            summary.contains(&expected),
            "missing {expected:?} in\n{summary}"
        );
    }
}

#[test]
fn overrides_select_and_define_profiles() {
    let setup = Setup::new(None);
    let secret = setup.base.join("secret");
    let out = setup.run(&[
        "permissions",
        "show",
        "--json",
        "-c",
        "default_permissions=p",
        "-c",
        "permissions.p.extends=\":read-only\"",
        "-c",
        &format!("permissions.p.filesystem.\"{}\"=deny", secret.display()),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{{\"type\":\"managed\",\"file_system\":{{\"type\":\"restricted\",\"entries\":[{{\"path\":{{\"type\":\"path\",\"path\":\"{}\"}},\"access\":\"deny\"}},{{\"path\":{{\"type\":\"special\",\"value\":{{\"kind\":\"root\"}}}},\"access\":\"read\"}}]}},\"network\":\"restricted\"}}\n",
            secret.display()
        )
    );
}

#[test]
fn danger_full_access_is_disabled() {
    let setup = Setup::new(None);
    let out = setup.run(&["permissions", "show", "-P", ":danger-full-access", "--json"]);
    assert_eq!(text(&out.stdout), "{\"type\":\"disabled\"}\n");
}

#[test]
fn bad_config_fails_with_file_key_and_fix() {
    let setup = Setup::new(None);
    std::fs::write(
        setup.home.join("config.toml"),
        "default_permissions = \"x\"\n[permissions.x]\nextends = \":danger-full-access\"\n",
    )
    .unwrap();
    let out = setup.run(&["permissions", "show"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("Error: permissions profile `x` cannot extend unsupported built-in profile `:danger-full-access`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("config.toml")
            && stderr.contains("key `permissions.x.extends`")
            && stderr.contains("fix:")
    );

    std::fs::write(setup.home.join("config.toml"), "default_permissions = [\n").unwrap();
    let out = setup.run(&["permissions", "show"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("Error: invalid TOML in "));
}

#[test]
fn bad_arguments() {
    let setup = Setup::new(None);
    let out = setup.run(&["permissions", "show", "-C", "/nonexistent/dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("does not exist"));
    // A malformed -c is a usage error (issue 17), naming the expected form.
    let out = setup.run(&["permissions", "show", "-c", "no-equals-sign"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("invalid value 'no-equals-sign'"));
    assert!(text(&out.stderr).contains("missing `=`; expected `-c key=value`"));
    let out = setup.run(&["permissions", "show", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let out = setup.run(&["permissions", "show", "-P", ":nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown built-in profile `:nope`"));
}

/// Issue 11: a `$HOME` inside the workspace lists its dot entries and missing startup names
/// as read-only, each with why, in the summary and as `read` entries in `--json`.
#[test]
fn home_inside_the_workspace_is_listed() {
    let setup = Setup::new(None);
    let home = setup.base.join("ws/me");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".bashrc"), "").unwrap();
    std::fs::write(home.join("notes.txt"), "").unwrap();
    let out = setup.run_with_home(&["permissions", "show", "-P", ":workspace"], &home);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    let home_text = home.display();
    for expected in [
        format!(
            "    read-only: {home_text}/.bashrc (startup or configuration entry of the home directory {home_text}, which lies in this writable root)\n"
        ),
        format!("    read-only: {home_text}/.ssh (startup or configuration entry"),
        format!(
            "    read-only: {home_text}/.profile (missing startup name of the home directory {home_text}, read by sh, dash and bash login shells: must not be created)\n"
        ),
        format!("    read-only: {home_text}/.config (missing startup name"),
    ] {
        assert!(
            summary.contains(&expected),
            "missing {expected:?} in\n{summary}"
        );
    }
    assert!(!summary.contains("notes.txt"), "{summary}");
    let out = setup.run_with_home(
        &["permissions", "show", "-P", ":workspace", "--json"],
        &home,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = json["file_system"]["entries"].as_array().unwrap();
    for name in [".bashrc", ".ssh", ".profile", ".gitconfig"] {
        let path = home.join(name).display().to_string();
        assert!(
            entries.iter().any(|e| e["path"]["path"] == path.as_str()
                && e["access"] == "read"
                && e["missing_path_behavior"] == "skip"),
            "{name} missing in {json}"
        );
    }
}
