//! Issue 11 item 2: a workspace inside another writable root (anything under `/tmp`, or a
//! nested writable root of a custom profile) used to be movable from inside the sandbox:
//! renaming one of its parents moves the bind mounts along, the old path is free, and the
//! sandbox builds a fake repository there whose planted command the user's next `git status`
//! runs. Each test runs the rename attack in the real sandbox and asserts on the host that
//! the workspace was not moved and the planted command never ran; each ends with the control
//! (the same script run without the sandbox succeeds and plants the command).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod attack_support;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use attack_support::{
    Marker, assert_attack_works_unsandboxed, assert_host_git_is_clean, git_ok, sandboxed,
    sandboxed_with, temp_in, text,
};

/// A repository with one commit at `ws` (created with its parents).
fn repository(ws: &Path) {
    std::fs::create_dir_all(ws).unwrap();
    git_ok(ws, &["init", "-q"]);
    std::fs::write(ws.join("README"), "the user's\n").unwrap();
    git_ok(ws, &["add", "README"]);
    git_ok(ws, &["commit", "-qm", "init"]);
}

/// Moves `victim` away and builds a repository with `marker`'s command as `core.fsmonitor` at
/// the workspace's old path `ws`.
fn rename_and_fake(victim: &Path, ws: &Path, marker: &Marker) -> String {
    format!(
        "cd /; mv '{victim}' '{victim}.moved' && mkdir -p '{ws}' && cd '{ws}' && git init -q && \
         git config core.fsmonitor '{cmd}' && echo FAKED",
        victim = victim.display(),
        ws = ws.display(),
        cmd = marker.command()
    )
}

/// The workspace is still the user's: same directory, same repository, nothing moved.
fn assert_not_moved(ws: &Path, inode: u64, victims: &[PathBuf]) {
    assert_eq!(
        std::fs::metadata(ws).unwrap().ino(),
        inode,
        "{ws:?} was replaced"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("README")).unwrap(),
        "the user's\n"
    );
    for victim in victims {
        let moved = PathBuf::from(format!("{}.moved", victim.display()));
        assert!(!moved.exists(), "{victim:?} was moved");
    }
}

/// `/tmp/X/outer/inner/ws` under `:workspace` (`/tmp` writable): the workspace itself, its
/// parent, the parent two and three levels up cannot be renamed.
#[test]
fn parents_of_a_workspace_under_tmp_cannot_be_renamed() {
    let _serial = attack_support::serial();
    let (_dir, base) = temp_in("/tmp", "airlock-attack-rename-");
    let ws = base.join("outer/inner/ws");
    repository(&ws);
    let inode = std::fs::metadata(&ws).unwrap().ino();
    let marker = Marker::new();
    let victims = [
        ws.clone(),
        base.join("outer/inner"),
        base.join("outer"),
        base.clone(),
    ];
    for victim in &victims {
        let out = sandboxed(&ws, &[], &rename_and_fake(victim, &ws, &marker));
        let all = text(&out);
        assert!(!all.contains("FAKED"), "{victim:?}: {all}");
        assert!(all.contains("Device or resource busy"), "{victim:?}: {all}");
        assert_not_moved(&ws, inode, &victims);
        assert_host_git_is_clean(&ws, &marker);
    }
    // Replacing a parent by another directory fails the same way.
    let out = sandboxed(
        &ws,
        &[],
        &format!(
            "mkdir /tmp/airlock-empty.$$ && mv -T /tmp/airlock-empty.$$ '{}'; rmdir '{}'",
            base.join("outer").display(),
            base.join("outer/inner").display()
        ),
    );
    assert!(
        text(&out).contains("Device or resource busy"),
        "{}",
        text(&out)
    );
    assert_not_moved(&ws, inode, &victims);
    assert_attack_works_unsandboxed(
        &ws,
        &rename_and_fake(&base.join("outer"), &ws, &marker),
        &marker,
    );
}

/// A custom profile whose writable roots nest (`BASE` and the workspace `BASE/a/ws`), away
/// from `/tmp`.
#[test]
fn parents_between_nested_writable_roots_of_a_custom_profile() {
    let _serial = attack_support::serial();
    let (_dir, base) = temp_in("/var/tmp", "airlock-attack-nested-roots-");
    let ws = base.join("a/ws");
    repository(&ws);
    let inode = std::fs::metadata(&ws).unwrap().ino();
    let marker = Marker::new();
    let filesystem = format!(
        "permissions.p.filesystem={{\"{}\"=\"write\"}}",
        base.display()
    );
    let profile = [
        "-c",
        "permissions.p.extends=\":workspace\"",
        "-c",
        filesystem.as_str(),
        "-P",
        "p",
    ];
    // The profile really makes BASE writable.
    let out = sandboxed_with(&ws, &profile, &format!("touch '{}/ok'", base.display()));
    assert!(out.status.success(), "{}", text(&out));
    assert!(base.join("ok").exists());
    let victims = [base.join("a"), ws.clone()];
    for victim in &victims {
        let out = sandboxed_with(&ws, &profile, &rename_and_fake(victim, &ws, &marker));
        let all = text(&out);
        assert!(all.contains("Device or resource busy"), "{victim:?}: {all}");
        assert_not_moved(&ws, inode, &victims);
        assert_host_git_is_clean(&ws, &marker);
    }
    assert_attack_works_unsandboxed(
        &ws,
        &rename_and_fake(&base.join("a"), &ws, &marker),
        &marker,
    );
}

/// A nested repository `vendor/lib`: renaming `vendor` would free the path for a fake
/// `vendor/lib/.git`.
#[test]
fn parents_of_a_nested_repository_cannot_be_renamed() {
    let _serial = attack_support::serial();
    let (_dir, ws) = temp_in("/var/tmp", "airlock-attack-nested-repo-");
    repository(&ws);
    let lib = ws.join("vendor/lib");
    repository(&lib);
    let inode = std::fs::metadata(&lib).unwrap().ino();
    let marker = Marker::new();
    let victims = [ws.join("vendor"), lib.clone()];
    for victim in &victims {
        let out = sandboxed(&ws, &[], &rename_and_fake(victim, &lib, &marker));
        let all = text(&out);
        assert!(all.contains("Device or resource busy"), "{victim:?}: {all}");
        assert_not_moved(&lib, inode, &victims);
        assert_host_git_is_clean(&lib, &marker);
    }
    assert_attack_works_unsandboxed(
        &lib,
        &rename_and_fake(&ws.join("vendor"), &lib, &marker),
        &marker,
    );
}

/// A workspace that is no repository of its own, under `/tmp`: git run in it later walks up,
/// so the sandbox must not create a repository in a parent (nor change one that is there).
#[test]
fn no_repository_can_be_planted_above_the_workspace() {
    let _serial = attack_support::serial();
    let (_dir, base) = temp_in("/tmp", "airlock-attack-above-");
    let ws = base.join("project/ws");
    std::fs::create_dir_all(&ws).unwrap();
    let marker = Marker::new();
    let plant = format!(
        "cd ..; git init -q && git config core.fsmonitor '{}' && echo PLANTED",
        marker.command()
    );
    let out = sandboxed(&ws, &[], &plant);
    assert!(!text(&out).contains("PLANTED"), "{}", text(&out));
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert!(
        !base.join("project/.git").exists(),
        "placeholder or repository left behind"
    );
    let _ = attack_support::git(&ws, &["status"]);
    assert!(
        !marker.fired(),
        "git status in the workspace ran the planted command"
    );
    // An existing enclosing repository stays as it is.
    repository(&base.join("project"));
    let out = sandboxed(
        &ws,
        &[],
        &format!(
            "git config --file ../.git/config core.fsmonitor '{}'",
            marker.command()
        ),
    );
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert_host_git_is_clean(&base.join("project"), &marker);
    std::fs::remove_dir_all(base.join("project/.git")).unwrap();
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}
