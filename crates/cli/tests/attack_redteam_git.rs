#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Red-team review of issue 11 item 4, continued (see `attack_redteam.rs`): git options and
//! commands that run programs or write files, a push into a repository the sandbox wrote,
//! forbidden commands under `find -exec`, and a relative `core.hooksPath` in the user's
//! config. Each plants from inside the real sandbox, runs the allow-listed command through
//! `airlock exec -r RULES`, asserts it stayed sandboxed and the planted command never ran
//! on the host, and ends with the control that shows the attack is real.

mod exec_support;
mod redteam_support;

use std::process::Command;

use exec_support::{Dirs, exists, stderr};
use redteam_support::{assert_kept_in_sandbox, host_git, host_git_ok, plant, workspace};

/// Allow rules for `git fetch` and `git clone` do not carry the options that name a
/// program (`--upload-pack`) or a directory of hooks the sandbox wrote (`--template`).
#[test]
fn git_options_that_name_programs_keep_git_in_the_sandbox() {
    let (dirs, rules) = workspace();
    let marker = dirs.outside_path_str("option-ran");
    plant(
        &dirs,
        &format!(
            "mkdir -p tpl/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > tpl/hooks/post-checkout && \
             chmod +x tpl/hooks/post-checkout"
        ),
    );
    let upload = format!("--upload-pack=touch {marker}; git-upload-pack");
    for command in [
        vec!["git", "fetch", upload.as_str(), "."],
        vec!["git", "clone", "--template=tpl", ".", "copy"],
    ] {
        assert_kept_in_sandbox(
            &dirs,
            &rules,
            &command,
            &[],
            &marker,
            "which names a program or hook directory",
        );
    }
    let _ = host_git(&dirs.ws, &["clone", "-q", "--template=tpl", ".", "copy2"]);
    assert!(exists(&marker), "control: the template's hook did not run");
}

/// An allow rule for `git log` (read-only, one would think) does not carry `--output`,
/// which writes any file the host user can (here one outside every writable root; it
/// could be `~/.bashrc`, with `--format` choosing the text).
#[test]
fn git_options_that_write_files_keep_git_in_the_sandbox() {
    let (dirs, rules) = workspace();
    let target = dirs.outside_path_str("written-by-git-log");
    let output = format!("--output={target}");
    assert_kept_in_sandbox(
        &dirs,
        &rules,
        &["git", "log", "-1", "--format=format:echo planted", &output],
        &[],
        &target,
        "which names a file git writes",
    );
    host_git_ok(
        &dirs.ws,
        &["log", "-1", "--format=format:echo planted", &output],
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "echo planted");
}

/// The sandbox creates a bare repository `backup.git` with a `pre-receive` hook; an
/// allow-listed `git push` into it (named as a path, or as a remote of the workspace's
/// own, safe, repository) runs `git-receive-pack` *in* it, hooks included.
#[test]
fn a_push_into_a_local_repository_the_sandbox_wrote_stays_in_the_sandbox() {
    let (dirs, rules) = workspace();
    let marker = dirs.outside_path_str("receive-hook-ran");
    plant(
        &dirs,
        &format!(
            "git init -q --bare backup.git && printf '#!/bin/sh\\ntouch {marker}\\n' > backup.git/hooks/pre-receive && \
             chmod +x backup.git/hooks/pre-receive"
        ),
    );
    host_git_ok(&dirs.ws, &["remote", "add", "backup", "./backup.git"]);
    for command in [
        &["git", "push", "./backup.git", "HEAD:refs/heads/a"][..],
        &["git", "push", "backup", "HEAD:refs/heads/b"],
        &["git", "push", "--repo=backup.git"],
    ] {
        assert_kept_in_sandbox(
            &dirs,
            &rules,
            command,
            &[],
            &marker,
            "it would run git-receive-pack or git-upload-pack in",
        );
    }
    let _ = host_git(&dirs.ws, &["push", "backup", "HEAD:refs/heads/c"]);
    assert!(exists(&marker), "control: the receive hook did not run");
}

/// A `forbidden` rule holds through `find -exec`: with `find` allowed (outside the
/// sandbox), `find . -exec touch …` would otherwise run the forbidden `touch` unconfined.
#[test]
fn a_forbidden_command_under_find_exec_is_still_forbidden() {
    let dirs = Dirs::new();
    dirs.config("");
    let rules = dirs.rules(
        "find.rules",
        "prefix_rule(pattern=[\"find\"], decision=\"allow\")\nprefix_rule(pattern=[\"touch\"], decision=\"forbidden\")\n",
    );
    let marker = dirs.outside_path_str("forbidden-ran");
    for action in ["-exec", "-execdir", "-ok"] {
        let out = dirs.exec(&[
            "-r",
            rules.to_str().unwrap(),
            "-a",
            "never",
            "--",
            "find",
            ".",
            "-maxdepth",
            "0",
            action,
            "touch",
            &marker,
            ";",
        ]);
        assert!(!exists(&marker), "{action}: the forbidden touch ran");
        assert!(
            stderr(&out).contains("policy forbids commands starting with `touch`"),
            "{action}: {}",
            stderr(&out)
        );
    }
    let control = Command::new("find")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([".", "-maxdepth", "0", "-exec", "touch", &marker, ";"])
        .current_dir(&dirs.ws)
        .output()
        .unwrap();
    assert!(exists(&marker), "control: {}", stderr(&control));
}

/// The user's global config sets `core.hooksPath = .githooks` (relative: git resolves it
/// in each working tree, a common team setup). The sandbox plants `.githooks/pre-commit`;
/// an allow-listed `git commit` would run it unconfined.
#[test]
fn a_relative_hooks_path_in_the_user_config_keeps_git_in_the_sandbox() {
    let (dirs, rules) = workspace();
    let global = dirs.outside_path().join("gitconfig");
    std::fs::write(
        &global,
        "[core]\n\thooksPath = .githooks\n[user]\n\tname = t\n\temail = t@example.com\n",
    )
    .unwrap();
    let global = global.display().to_string();
    let marker = dirs.outside_path_str("global-hook-ran");
    plant(
        &dirs,
        &format!(
            "mkdir .githooks && printf '#!/bin/sh\\ntouch {marker}\\n' > .githooks/pre-commit && \
             chmod +x .githooks/pre-commit"
        ),
    );
    assert_kept_in_sandbox(
        &dirs,
        &rules,
        &["git", "commit", "--allow-empty", "-qm", "x"],
        &[("GIT_CONFIG_GLOBAL", &global)],
        &marker,
        "the relative path \".githooks\"",
    );
    let control = Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["commit", "--allow-empty", "-qm", "control"])
        .current_dir(&dirs.ws)
        .env("GIT_CONFIG_GLOBAL", &global)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(exists(&marker), "control: {}", stderr(&control));
}
