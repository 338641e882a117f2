//! `airlock instructions` as a process (spec 10 §CLI, spec 08): the text for the configured or
//! given policy / profile / reviewer / rules, `--json` with the snapshot, and `--diff` against a
//! previous snapshot (saved-prefix fragment, full text, or nothing). Bad input exits 1 or 2.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::PathBuf;
use std::process::{Command, Output};

use pretty_assertions::assert_eq;

const WORKSPACE_SENTENCE: &str = "Filesystem sandboxing defines which files can be read or written. `sandbox_mode` is `workspace-write`: The sandbox permits reading files, and editing files in `cwd` and `writable_roots`. Editing files in other directories requires approval. Network access is restricted.";

struct Setup {
    _dir: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("ws")).unwrap();
        std::fs::create_dir_all(base.join("home")).unwrap();
        Self {
            home: base.join("home"),
            base,
            _dir: dir,
        }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.base.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .arg("instructions")
            .args(args)
            .current_dir(self.base.join("ws"))
            .env("AIRLOCK_HOME", &self.home)
            .env("HOME", &self.base)
            .env_remove("TMPDIR")
            .env_remove("RUST_BACKTRACE")
            .output()
            .unwrap()
    }

    fn stdout(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }
}

const GIT_PULL: &str = "prefix_rule(pattern=[\"git\", \"pull\"], decision=\"allow\")\n";
const TOUCH: &str = "prefix_rule(pattern=[\"touch\", \"allow-prefix.txt\"], decision=\"allow\")\n";

#[test]
fn default_is_the_embedded_workspace_profile_on_request_and_user() {
    let setup = Setup::new();
    let text = setup.stdout(&[]);
    assert!(text.starts_with(&format!(
        "<permissions instructions>\n{WORKSPACE_SENTENCE}\n\n# Approvals\nApproval policy is `on-request`"
    )));
    assert!(text.ends_with("</permissions instructions>\n"));
    // Roots are listed sorted; the temporary directory may sort before or after `/tmp`.
    let mut roots = [setup.base.join("ws"), PathBuf::from("/tmp")];
    roots.sort();
    assert!(text.contains(&format!(
        "The writable roots are `{}`, `{}`.",
        roots[0].display(),
        roots[1].display()
    )));
    assert!(text.contains("ask the user for approval"));
    assert!(!text.contains("## Approved command prefixes"));
}

#[test]
fn options_select_policy_reviewer_profile_features_and_rules() {
    let setup = Setup::new();
    let rules = setup.write("a.rules", GIT_PULL);
    let rules = rules.to_str().unwrap();
    let never = setup.stdout(&["-a", "never", "--reviewer", "auto_review", "-r", rules]);
    assert!(never.contains("Approval policy is `never`"));
    assert!(!never.contains("automatic reviewer"));
    assert!(never.contains("## Approved command prefixes"));
    assert!(never.contains("- [\"git\", \"pull\"]"));

    let read_only = setup.stdout(&["-P", ":read-only", "--reviewer", "auto_review"]);
    assert!(read_only.contains("`sandbox_mode` is `read-only`"));
    assert!(read_only.contains("## Automatic review"));

    let features = setup.stdout(&[
        "--enable",
        "exec_permission_approvals",
        "--enable",
        "request_permissions_tool",
    ]);
    assert!(features.contains("## Asking for additional permissions"));
    assert!(features.contains("# The `request_permissions` tool"));

    let legacy_alias = setup.stdout(&["-a", "on-failure"]);
    assert_eq!(legacy_alias, setup.stdout(&["-a", "on-request"]));

    let other_dir = setup.base.join("other");
    std::fs::create_dir_all(&other_dir).unwrap();
    let moved = setup.stdout(&["-C", other_dir.to_str().unwrap()]);
    assert!(moved.contains(&format!("`{}`", other_dir.display())));
}

#[test]
fn config_supplies_policy_reviewer_and_rules_files() {
    let setup = Setup::new();
    setup.write(
        "home/config.toml",
        "approval_policy = { granular = { sandbox_approval = false, rules = true, mcp_elicitations = false } }\n\
         approvals_reviewer = \"auto_review\"\n",
    );
    setup.write("home/rules/default.rules", GIT_PULL);
    let text = setup.stdout(&[]);
    assert!(text.contains("Approval policy is `granular`"));
    assert!(text.contains("These kinds of request may ask the automatic reviewer:\n- `rules`:"));
    assert!(text.contains("- [\"git\", \"pull\"]"));
    // -r replaces the configured files; -a and --reviewer win over the config.
    let empty_rules = setup.write("empty.rules", "");
    let text = setup.stdout(&[
        "-a",
        "untrusted",
        "--reviewer",
        "user",
        "-r",
        empty_rules.to_str().unwrap(),
    ]);
    assert!(text.contains("Approval policy is `untrusted`"));
    assert!(!text.contains("automatic reviewer"));
    assert!(!text.contains("## Approved command prefixes"));
}

#[test]
fn json_prints_the_text_and_the_snapshot() {
    let setup = Setup::new();
    let rules = setup.write("a.rules", GIT_PULL);
    let rules = rules.to_str().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&setup.stdout(&["-r", rules, "--json"])).unwrap();
    assert_eq!(
        format!("{}\n", json["text"].as_str().unwrap()),
        setup.stdout(&["-r", rules])
    );
    let snapshot = &json["snapshot"];
    assert!(
        snapshot["instructions"]
            .as_str()
            .unwrap()
            .starts_with("sha1:")
    );
    assert_eq!(
        snapshot["approved_command_prefixes"],
        serde_json::json!([["git", "pull"]])
    );
}

#[test]
fn diff_prints_only_what_would_be_sent() {
    let setup = Setup::new();
    let before_rules = setup.write("before.rules", GIT_PULL);
    let after_rules = setup.write("after.rules", &format!("{GIT_PULL}{TOUCH}"));
    let previous = setup.base.join("previous.json");
    std::fs::write(
        &previous,
        setup.stdout(&["-r", before_rules.to_str().unwrap(), "--json"]),
    )
    .unwrap();
    let previous = previous.to_str().unwrap();

    // A prefix added: only the saved-prefix fragment.
    assert_eq!(
        setup.stdout(&["-r", after_rules.to_str().unwrap(), "--diff", previous]),
        "Approved command prefix saved:\n- [\"touch\", \"allow-prefix.txt\"]\n"
    );
    // Nothing changed: nothing printed.
    assert_eq!(
        setup.stdout(&["-r", before_rules.to_str().unwrap(), "--diff", previous]),
        ""
    );
    // A bare snapshot file works too; a removal re-sends the full text.
    let after_snapshot = setup.base.join("after.json");
    let after_json: serde_json::Value =
        serde_json::from_str(&setup.stdout(&["-r", after_rules.to_str().unwrap(), "--json"]))
            .unwrap();
    std::fs::write(&after_snapshot, after_json["snapshot"].to_string()).unwrap();
    assert_eq!(
        setup.stdout(&[
            "-r",
            before_rules.to_str().unwrap(),
            "--diff",
            after_snapshot.to_str().unwrap()
        ]),
        setup.stdout(&["-r", before_rules.to_str().unwrap()])
    );
    // Another policy: the full text.
    let changed = setup.stdout(&[
        "-a",
        "never",
        "-r",
        before_rules.to_str().unwrap(),
        "--diff",
        previous,
    ]);
    assert!(changed.starts_with("<permissions instructions>\n"));
    // JSON form names the kind of update.
    let json: serde_json::Value = serde_json::from_str(&setup.stdout(&[
        "-r",
        after_rules.to_str().unwrap(),
        "--diff",
        previous,
        "--json",
    ]))
    .unwrap();
    assert_eq!(json["update"], "prefixes_saved");
    assert_eq!(
        json["text"],
        "Approved command prefix saved:\n- [\"touch\", \"allow-prefix.txt\"]"
    );
    assert_eq!(json["snapshot"], after_json["snapshot"]);
    let none: serde_json::Value = serde_json::from_str(&setup.stdout(&[
        "-r",
        before_rules.to_str().unwrap(),
        "--diff",
        previous,
        "--json",
    ]))
    .unwrap();
    assert_eq!(none["update"], "none");
    assert_eq!(none["text"], "");
}

#[test]
fn bad_input_fails_with_a_reason() {
    let setup = Setup::new();
    let bad = setup.write("bad.json", "{\"enabled\": false}");
    let output = setup.run(&["--diff", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not a permissions snapshot"), "{stderr}");

    let output = setup.run(&["--diff", setup.base.join("missing.json").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read the previous snapshot"));

    let output = setup.run(&["-a", "sometimes"]);
    assert_eq!(output.status.code(), Some(2));

    setup.write("home/config.toml", "approvals_reviewer = \"robot\"\n");
    let output = setup.run(&[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("approvals_reviewer") && stderr.contains("auto_review"),
        "{stderr}"
    );
}
