//! Issue 17, the new-user trial's findings after the first round: `exec --json` routed to
//! `apply_patch` prints one JSON object of the usual shape; `apply-patch` calls get unique
//! call ids (and `-v` prints them); and the small messages (`sandbox -- ""`, EPIPE, an empty
//! HOME, a config that is not UTF-8, a snapshot of the wrong shape). Each test runs the real
//! binary and checks the exact exit code and the key words.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use exec_support::Dirs;
use exec_support::airlock_bin;
use exec_support::stderr;
use exec_support::stdout;
use pretty_assertions::assert_eq;

/// `airlock` in the workspace with this `$AIRLOCK_HOME`, stdin closed.
fn command(dirs: &Dirs, args: &[&str]) -> Command {
    let mut command = Command::new(airlock_bin());
    command
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(Stdio::null());
    command
}

fn airlock(dirs: &Dirs, args: &[&str]) -> Output {
    command(dirs, args).output().unwrap()
}

fn add_patch(name: &str) -> String {
    format!("*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch\n")
}

/// stdout parsed as exactly one JSON object (trailing newline allowed, nothing else).
fn one_object(out: &Output) -> serde_json::Value {
    let text = stdout(out);
    let value: serde_json::Value = serde_json::from_str(text.trim_end())
        .unwrap_or_else(|error| panic!("stdout is not one JSON object ({error}): {text:?}"));
    assert!(value.is_object(), "{text}");
    value
}

#[test]
fn exec_json_routed_to_apply_patch_prints_one_full_object() {
    let dirs = Dirs::new();
    dirs.config("");
    let patch = add_patch("routed4.txt");
    let out = airlock(&dirs, &["exec", "--json", "--", "apply_patch", &patch]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let applied = one_object(&out);
    assert_eq!(applied["status"], "applied");
    assert_eq!(applied["exit_code"], 0);
    assert_eq!(
        applied["stdout"],
        "Success. Updated the following files:\nA routed4.txt\n"
    );
    assert!(applied["call_id"].as_str().unwrap().starts_with("call-"));
    assert_eq!(applied["call_id"], applied["record"]["call_id"]);
    assert_eq!(applied["record"]["tool"], "apply_patch");
    assert_eq!(applied["record"]["outcome"]["status"], "ran");
    assert_eq!(
        std::fs::read_to_string(dirs.ws.join("routed4.txt")).unwrap(),
        "x\n"
    );

    // A refusal has the same shape; `rejected` at the top and in the record.
    let patch = add_patch("refused.txt");
    let out = airlock(
        &dirs,
        &[
            "exec",
            "--json",
            "-P",
            ":read-only",
            "--",
            "apply_patch",
            &patch,
        ],
    );
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    let refused = one_object(&out);
    assert_eq!(refused["status"], "rejected");
    assert_eq!(refused["exit_code"], 125);
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("no reviewer is available"),
        "{refused}"
    );
    assert_eq!(refused["call_id"], refused["record"]["call_id"]);
    assert_eq!(refused["record"]["outcome"]["status"], "rejected");
    assert!(!dirs.ws.join("refused.txt").exists());

    // A patch that does not apply: 1, `patch_failed`, the reason in `message`.
    let bad = "*** Begin Patch\n*** Update File: missing.txt\n-a\n+b\n*** End Patch\n";
    let out = airlock(&dirs, &["exec", "--json", "--", "apply_patch", bad]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let failed = one_object(&out);
    assert_eq!(failed["status"], "patch_failed");
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("apply_patch verification failed"),
        "{failed}"
    );
}

#[test]
fn exec_json_command_refusal_says_rejected_like_its_record() {
    let dirs = Dirs::new();
    dirs.config("");
    let rules = dirs.rules(
        "no.rules",
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no rm\")\n",
    );
    let out = airlock(
        &dirs,
        &[
            "exec",
            "--json",
            "-r",
            rules.to_str().unwrap(),
            "--",
            "rm",
            "x",
        ],
    );
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    let refused = one_object(&out);
    assert_eq!(refused["status"], "rejected");
    assert_eq!(refused["record"]["outcome"]["status"], "rejected");
}

/// The `call_id`s of the audit log's entries, in order.
fn logged_call_ids(dirs: &Dirs) -> Vec<String> {
    std::fs::read_to_string(dirs.home.join("log/audit.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            entry["call_id"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn apply_patch_calls_get_unique_call_ids_that_explain_finds() {
    let dirs = Dirs::new();
    dirs.config("");
    for name in ["one.txt", "two.txt"] {
        let file = dirs.scripts.join(format!("{name}.patch"));
        std::fs::write(&file, add_patch(name)).unwrap();
        let out = airlock(&dirs, &["apply-patch", "-v", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("airlock: call call-"),
            "{}",
            stderr(&out)
        );
    }
    let ids = logged_call_ids(&dirs);
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    assert!(ids.iter().all(|id| id.starts_with("call-")), "{ids:?}");
    let explained = airlock(&dirs, &["explain", "--from-log", &ids[0]]);
    assert_eq!(explained.status.code(), Some(0), "{}", stderr(&explained));
    assert!(
        !stderr(&explained).contains("entries have this call id"),
        "{}",
        stderr(&explained)
    );
    assert!(
        stdout(&explained).contains(&ids[0]),
        "{}",
        stdout(&explained)
    );

    // `exec -v` routed to the patch path prints the id too, the one the log holds.
    let patch = add_patch("three.txt");
    let out = airlock(&dirs, &["exec", "-v", "--", "apply_patch", &patch]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = logged_call_ids(&dirs).pop().unwrap();
    assert!(
        stderr(&out).contains(&format!(
            "airlock: call {id} (airlock explain --from-log {id})"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn sandbox_with_an_empty_program_is_a_usage_error_like_exec() {
    let dirs = Dirs::new();
    dirs.config("");
    let out = airlock(&dirs, &["sandbox", "--", ""]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("invalid command: empty command"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("command not found"));
    let exec = airlock(&dirs, &["exec", "--", ""]);
    assert_eq!(exec.status.code(), Some(125), "{}", stderr(&exec));
    assert!(stderr(&exec).contains("invalid command: empty command"));
}

#[test]
fn printing_into_a_closed_pipe_exits_quietly() {
    let dirs = Dirs::new();
    dirs.config("");
    // A pipe whose reader is gone before airlock writes (as after `| head -c 500` has
    // read enough): every write fails with EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    for args in [
        &["instructions", "--json"][..],
        &["instructions"][..],
        &["explain", "--", "ls"][..],
        &["permissions", "show"][..],
        &["permissions", "show", "--json"][..],
    ] {
        let out = command(&dirs, args)
            .stdout(writer.try_clone().unwrap())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}

#[test]
fn an_empty_home_is_called_empty() {
    let dirs = Dirs::new();
    let out = command(&dirs, &["permissions", "show"])
        .env("HOME", "")
        .env("AIRLOCK_HOME", "")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("HOME is empty"), "{}", stderr(&out));
    let unset = command(&dirs, &["permissions", "show"])
        .env_remove("HOME")
        .env_remove("AIRLOCK_HOME")
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(1), "{}", stderr(&unset));
    assert!(
        stderr(&unset).contains("HOME is not set"),
        "{}",
        stderr(&unset)
    );
}

#[test]
fn a_relative_home_is_refused_naming_the_variable() {
    let dirs = Dirs::new();
    for name in ["AIRLOCK_HOME", "HOME"] {
        let out = command(&dirs, &["permissions", "show"])
            .env(name, "rel/home")
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains(&format!("{name} is the relative path `rel/home`"))
                && err.contains("must be absolute"),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_config_that_is_not_utf8_says_so_with_the_offset() {
    let dirs = Dirs::new();
    std::fs::write(dirs.home.join("config.toml"), b"a = \"\xff\"\n").unwrap();
    let out = airlock(&dirs, &["permissions", "show"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("config.toml is not valid UTF-8"), "{err}");
    assert!(err.contains("offset 5"), "{err}");
    assert!(!err.contains("permissions"), "{err}");
}

#[test]
fn a_snapshot_of_the_wrong_shape_names_the_expected_one() {
    let dirs = Dirs::new();
    dirs.config("");
    let snapshot = dirs.scripts.join("prev.json");
    std::fs::write(&snapshot, "{}").unwrap();
    let out = airlock(
        &dirs,
        &["instructions", "--diff", snapshot.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("is not a permissions snapshot"), "{err}");
    assert!(err.contains("\"instructions\": \"sha1:"), "{err}");
    assert!(!err.contains("untagged enum"), "{err}");
    assert!(!err.contains("PermissionsSnapshot"), "{err}");
}
