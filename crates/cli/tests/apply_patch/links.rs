//! Issue 11, red-team finding F6: `apply_patch` through symlinks a sandboxed run planted. A
//! patch names `ws/door/x` where `door` is a symlink the confined command made, pointing at
//! `$AIRLOCK_HOME/rules` (or a trusted project's `.airlock`, or any folder outside the
//! writable roots). The lexical check said "inside the workspace", the sandboxed apply was
//! refused by the kernel, and the approved retry without the sandbox wrote through the link:
//! a rule the next run loads, or a file anywhere on the host, while the reviewer saw only
//! `ws/door/x`.
//!
//! Each link is planted from inside the real sandbox (`airlock sandbox -P :workspace`), the
//! patch goes through the real `airlock apply-patch` with a reviewer that approves
//! everything, and the host is checked afterwards.

use std::fs;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;

use crate::exec_support::Dirs;
use crate::exec_support::airlock_bin;
use crate::exec_support::stderr;
use crate::support::apply;
use crate::support::code;
use crate::support::patch;

/// `ln -s TARGET ws/NAME` from inside the sandbox (the attacker's planting step).
fn plant_link(dirs: &Dirs, target: &Path, name: &str) {
    let out = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["sandbox", "-P", ":workspace", "--", "ln", "-s"])
        .arg(target)
        .arg(name)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(fs::symlink_metadata(dirs.ws.join(name)).is_ok());
}

/// Links into `$AIRLOCK_HOME/rules` and into a trusted project's `.airlock`: every kind of
/// hunk through them (add, update, delete, move source and destination) is refused before
/// anyone is asked, naming the link and where it leads, and nothing is written there even
/// though the reviewer would approve a retry without the sandbox.
#[test]
fn a_planted_link_onto_policy_files_is_refused_even_when_approved() {
    let dirs = Dirs::new();
    let project = dirs.ws.join("vendor/proj");
    fs::create_dir_all(project.join(".airlock/rules")).unwrap();
    fs::write(
        project.join(".airlock/rules/own.rules"),
        "# the project's\n",
    )
    .unwrap();
    dirs.config(&format!(
        "{}[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        dirs.hook("allow"),
        project.display()
    ));
    let rules = dirs.home.join("rules");
    fs::create_dir_all(&rules).unwrap();
    fs::write(rules.join("default.rules"), "# the user's\n").unwrap();
    fs::write(dirs.ws.join("notes.txt"), "notes\n").unwrap();
    plant_link(&dirs, &rules, "door");
    plant_link(&dirs, &project.join(".airlock"), "proj-policy");
    let allow = "+prefix_rule(pattern=[\"sh\"], decision=\"allow\")\n";
    let cases = [
        (
            format!("*** Add File: door/planted.rules\n{allow}"),
            "door",
        ),
        (
            "*** Update File: door/default.rules\n-# the user's\n+prefix_rule(pattern=[\"sh\"], decision=\"allow\")\n".to_owned(),
            "door",
        ),
        ("*** Delete File: door/default.rules\n".to_owned(), "door"),
        (
            "*** Update File: notes.txt\n*** Move to: door/moved.rules\n-notes\n+prefix_rule(pattern=[\"sh\"], decision=\"allow\")\n".to_owned(),
            "door",
        ),
        (
            format!("*** Add File: proj-policy/rules/planted.rules\n{allow}"),
            "proj-policy",
        ),
    ];
    for (body, link) in &cases {
        let out = apply(&dirs, &[], patch(body).as_bytes());
        let err = stderr(&out);
        assert_eq!(code(&out), 125, "{body}: {err}");
        assert!(err.contains("refusing to write"), "{body}: {err}");
        assert!(
            err.contains(&format!("symlink {}", dirs.ws.join(link).display())),
            "{body}: the refusal names the link: {err}"
        );
    }
    assert!(dirs.requests("hook").is_empty(), "a reviewer was asked");
    let names: Vec<String> = fs::read_dir(&rules)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["default.rules"]);
    assert_eq!(
        fs::read_to_string(rules.join("default.rules")).unwrap(),
        "# the user's\n"
    );
    assert_eq!(
        fs::read_dir(project.join(".airlock/rules"))
            .unwrap()
            .count(),
        1
    );
    assert_eq!(
        fs::read_to_string(dirs.ws.join("notes.txt")).unwrap(),
        "notes\n"
    );
}

/// A planted link to a folder outside every writable root (standing for `~`, with its
/// `.bashrc`): the patch needs an approval, the reviewer is told the real path, and once
/// approved the write lands in that folder *inside* the sandbox (no retry without it).
/// Denied, nothing is written.
#[test]
fn a_planted_link_to_outside_needs_an_approval_that_names_the_real_path() {
    let dirs = Dirs::new();
    let outside = dirs.outside_path().to_path_buf();
    fs::write(outside.join(".bashrc"), "# the user's\n").unwrap();
    plant_link(&dirs, &outside, "home");
    let body = "*** Update File: home/.bashrc\n-# the user's\n+touch /tmp/pwned\n";
    dirs.config(&dirs.hook("deny"));
    let out = apply(&dirs, &[], patch(body).as_bytes());
    assert_ne!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(outside.join(".bashrc")).unwrap(),
        "# the user's\n"
    );
    assert_eq!(dirs.requests("hook").len(), 1, "{}", stderr(&out));
    // An automatic reviewer that approves: it is asked once, with the real path.
    dirs.config(&format!(
        "approvals_reviewer = \"auto_review\"\n{}",
        dirs.auto_review("allow")
    ));
    let out = apply(&dirs, &[], patch(body).as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("retried without the sandbox"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(outside.join(".bashrc")).unwrap(),
        "touch /tmp/pwned\n"
    );
    let real = outside.join(".bashrc").display().to_string();
    let reviews = dirs.requests("review");
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    // The reviewer's request names the real path among the files (the terminal prompt shows
    // it as the changed path: `apply_patch_tmux.rs`).
    let action = &reviews[0]["action"];
    assert!(
        action["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == real.as_str()),
        "{action}"
    );
    let record = dirs.audit().pop().unwrap();
    assert_eq!(record["attempts"].as_array().unwrap().len(), 1, "{record}");
}
