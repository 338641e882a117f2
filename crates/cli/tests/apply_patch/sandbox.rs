//! The sandbox cases of issue 12: links, protected metadata, deny-read, approved and refused
//! outside writes, and the denial → re-approval → retry flow.

use std::fs;

use pretty_assertions::assert_eq;

use crate::exec_support::Dirs;
use crate::exec_support::stderr;
use crate::support::apply;
use crate::support::audit_text;
use crate::support::code;
use crate::support::patch;

#[test]
fn a_hard_link_to_an_outside_file_is_not_written_through() {
    let dirs = Dirs::new();
    dirs.config("");
    fs::write(dirs.outside_path().join("target"), "outside\n").unwrap();
    fs::hard_link(dirs.outside_path().join("target"), dirs.ws.join("link")).unwrap();
    let out = apply(
        &dirs,
        &[],
        patch("*** Update File: link\n-outside\n+inside\n").as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("target")).unwrap(),
        "outside\n"
    );
    assert_eq!(
        fs::read_to_string(dirs.ws.join("link")).unwrap(),
        "inside\n"
    );
}

/// The folder is judged where it really leads (issue 11, finding F6): the lexical check
/// says "inside", the resolved path is outside every writable root, so the patch needs an
/// approval before anything runs; with nobody to ask, nothing runs.
#[test]
fn a_symlinked_directory_to_outside_needs_an_approval_first() {
    let dirs = Dirs::new();
    dirs.config("");
    std::os::unix::fs::symlink(dirs.outside_path(), dirs.ws.join("door")).unwrap();
    let out = apply(
        &dirs,
        &[],
        patch("*** Add File: door/planted.txt\n+x\n").as_bytes(),
    );
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    // Then the cause (no terminal) and the ways forward (issue 17).
    assert!(
        stderr(&out).starts_with(
            "airlock: approval required but no reviewer is available\n  no terminal to ask on:"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!dirs.outside_path().join("planted.txt").exists());
    let record = dirs.audit().pop().unwrap();
    assert_eq!(
        record["attempts"].as_array().map(Vec::len),
        Some(0),
        "{record}"
    );
}

/// Approved, a write through a symlinked folder lands where the approval said, still inside
/// the sandbox (the real folder is added as writable, as for any approved outside write).
#[test]
fn an_approved_write_through_a_symlinked_folder_lands_sandboxed() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    std::os::unix::fs::symlink(dirs.outside_path(), dirs.ws.join("door")).unwrap();
    let out = apply(
        &dirs,
        &[],
        patch("*** Add File: door/approved.txt\n+ok\n").as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("retried without the sandbox"));
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("approved.txt")).unwrap(),
        "ok\n"
    );
    let requests = dirs.requests("hook");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["tool_name"], "apply_patch");
}

#[test]
fn git_hooks_are_refused_before_asking() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    fs::create_dir_all(dirs.ws.join(".git/hooks")).unwrap();
    for body in [
        "*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+touch /pwned\n",
        "*** Add File: nested/repo/.git/hooks/post-checkout\n+x\n",
        "*** Add File: .airlock/rules/allow.rules\n+prefix_rule(pattern=[\"rm\"], decision=\"allow\")\n",
    ] {
        let out = apply(&dirs, &[], patch(body).as_bytes());
        assert_eq!(code(&out), 125, "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with("airlock: patch rejected: refusing to write "),
            "{}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("is protected metadata"));
    }
    assert!(dirs.requests("hook").is_empty(), "a reviewer was asked");
    assert!(!dirs.ws.join(".git/hooks/pre-commit").exists());
    assert!(!dirs.ws.join("nested").exists());
    assert!(!dirs.ws.join(".airlock").exists());
}

#[test]
fn a_deny_read_file_is_never_read_nor_shown() {
    let dirs = Dirs::new();
    dirs.config(&format!(
        "{}{}",
        dirs.deny_read_profile_toml(),
        dirs.hook("allow")
    ));
    fs::create_dir_all(dirs.outside_path().join("secret")).unwrap();
    fs::write(dirs.outside_path().join("secret/token"), "TOKEN-VALUE-42\n").unwrap();
    std::os::unix::fs::symlink(
        dirs.outside_path().join("secret/token"),
        dirs.ws.join("alias"),
    )
    .unwrap();
    std::os::unix::fs::symlink(dirs.outside_path().join("secret"), dirs.ws.join("door")).unwrap();
    let direct = format!(
        "*** Update File: {}\n-TOKEN-VALUE-42\n+x\n",
        dirs.outside_path_str("secret/token")
    );
    for body in [
        direct.as_str(),
        "*** Update File: alias\n-TOKEN-VALUE-42\n+x\n",
        "*** Delete File: alias\n",
        "*** Update File: door/token\n-TOKEN-VALUE-42\n+x\n",
    ] {
        let out = apply(&dirs, &[], patch(body).as_bytes());
        assert_eq!(code(&out), 125, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("the permission profile denies reading it"),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("TOKEN-VALUE-42"));
    }
    assert!(dirs.requests("hook").is_empty(), "a reviewer was asked");
    assert!(!audit_text(&dirs).contains("TOKEN-VALUE-42"));
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("secret/token")).unwrap(),
        "TOKEN-VALUE-42\n"
    );
    assert!(dirs.ws.join("alias").is_symlink());
}

#[test]
fn an_approved_outside_write_lands_still_sandboxed() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    fs::write(dirs.outside_path().join("o.txt"), "x\n").unwrap();
    let body = format!(
        "*** Update File: {}\n-x\n+y\n",
        dirs.outside_path_str("o.txt")
    );
    let out = apply(&dirs, &[], patch(&body).as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("o.txt")).unwrap(),
        "y\n"
    );
    let requests = dirs.requests("hook");
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]["tool_input"]["command"]
            .as_str()
            .unwrap()
            .contains("*** Update File:")
    );
    let record = dirs.audit().pop().unwrap();
    // One attempt, inside the sandbox, with the target's directory added as writable.
    assert_eq!(record["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(record["attempts"][0]["sandbox"], "linuxSeccomp");
    assert_eq!(record["approvals"][0]["source"], "hook");
}

#[test]
fn never_refuses_an_outside_write_with_the_reference_reason() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    fs::write(dirs.outside_path().join("o.txt"), "x\n").unwrap();
    let body = format!(
        "*** Update File: {}\n-x\n+y\n",
        dirs.outside_path_str("o.txt")
    );
    let out = apply(&dirs, &["-a", "never"], patch(&body).as_bytes());
    assert_eq!(code(&out), 125);
    assert_eq!(
        stderr(&out),
        "airlock: patch rejected: writing outside of the project; rejected by user approval settings\n"
    );
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("o.txt")).unwrap(),
        "x\n"
    );
    assert!(dirs.requests("hook").is_empty());
}

#[test]
fn read_only_profile_with_never_uses_the_read_only_reason() {
    let dirs = Dirs::new();
    dirs.config("");
    let out = apply(
        &dirs,
        &["-a", "never", "-P", ":read-only"],
        patch("*** Add File: a\n+x\n").as_bytes(),
    );
    assert_eq!(code(&out), 125);
    assert_eq!(
        stderr(&out),
        "airlock: patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings\n"
    );
    assert!(!dirs.ws.join("a").exists());
}

#[test]
fn an_approved_add_in_a_new_outside_folder_stays_sandboxed() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    let body = format!(
        "*** Add File: {}\n+x\n",
        dirs.outside_path_str("new/deeper/x.txt")
    );
    let out = apply(&dirs, &[], patch(&body).as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dirs.outside_path().join("new/deeper/x.txt")).unwrap(),
        "x\n"
    );
    let record = dirs.audit().pop().unwrap();
    assert_eq!(record["attempts"].as_array().unwrap().len(), 1, "{record}");
    assert_eq!(record["attempts"][0]["sandbox"], "linuxSeccomp");
}

#[test]
fn the_verifier_is_no_oracle_for_the_parent_s_environment() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    std::os::unix::fs::symlink("/proc/self/environ", dirs.ws.join("env")).unwrap();
    // `AIRLOCK_HOME=` is certainly in the parent's environment: a match would say so.
    for target in ["/proc/self/environ", "env"] {
        for guess in ["AIRLOCK_HOME=", "NO_SUCH_VARIABLE="] {
            let out = apply(
                &dirs,
                &[],
                patch(&format!("*** Update File: {target}\n@@ {guess}\n+x\n")).as_bytes(),
            );
            assert_eq!(
                (code(&out), stderr(&out)),
                (
                    1,
                    format!(
                        "apply_patch verification failed: Failed to read file to update {target}: the permission profile does not allow reading it\n"
                    )
                )
            );
        }
    }
    assert!(dirs.requests("hook").is_empty());
}

#[test]
fn protected_metadata_behind_a_symlinked_folder_is_refused_before_asking() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    fs::create_dir_all(dirs.ws.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(dirs.ws.join(".git"), dirs.ws.join("innocent")).unwrap();
    let out = apply(
        &dirs,
        &[],
        patch("*** Add File: innocent/hooks/pre-commit\n+#!/bin/sh\n").as_bytes(),
    );
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("'.git' is protected metadata"),
        "{}",
        stderr(&out)
    );
    assert!(dirs.requests("hook").is_empty(), "a reviewer was asked");
    assert!(!dirs.ws.join(".git/hooks/pre-commit").exists());
}
