//! Issue 11 item 1: a `.git` *file* sends git to another directory (`gitdir:`), and a linked
//! worktree's git directory takes `config` and `hooks/` from the main repository
//! (`commondir`). Each test builds one real layout with real git, runs the attack inside the
//! real sandbox (`airlock sandbox -P :workspace`, real bubblewrap), then runs git on the host
//! as the user would next and asserts the planted command never ran and nothing was moved.
//! Each ends with the control: the same script run without the sandbox does plant a command
//! the host's git runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod attack_support;

use std::path::Path;

use attack_support::{
    Marker, assert_attack_works_unsandboxed, assert_host_git_is_clean, commit_readme, git, git_ok,
    plant_in_git_dir, sandboxed, snapshot, temp_in, text,
};

/// The reproduction: `gitdir: ./.bare` next to a bare repository used as a
/// working tree. Also tries to swap the pointer file and the bare directory themselves.
#[test]
fn bare_repository_behind_a_gitdir_pointer() {
    let _serial = attack_support::serial();
    let (_dir, ws) = temp_in("/var/tmp", "airlock-attack-bare-");
    git_ok(&ws, &["init", "-q", "--bare", ".bare"]);
    std::fs::write(ws.join(".git"), "gitdir: ./.bare\n").unwrap();
    git_ok(
        &ws,
        &["config", "--file", ".bare/config", "core.bare", "false"],
    );
    commit_readme(&ws);
    let bare = ws.join(".bare");
    let before = snapshot(&bare);
    let marker = Marker::new();
    let plant = plant_in_git_dir(&bare, &marker);

    let swap = "mv .git .git.old; rm -f .git; echo 'gitdir: /tmp/evil.git' > .git; \
                rm -rf .bare; mv .bare .bare.old";
    let out = sandboxed(&ws, &[], &format!("{plant}; {swap}"));
    let all = text(&out);
    assert!(all.contains("Read-only file system"), "{all}");
    assert!(all.contains("Device or resource busy"), "{all}");
    assert_eq!(
        snapshot(&bare),
        before,
        "the bare repository changed: {all}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".git")).unwrap(),
        "gitdir: ./.bare\n"
    );
    assert!(!ws.join(".git.old").exists() && !ws.join(".bare.old").exists());
    assert_host_git_is_clean(&ws, &marker);
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}

/// `git clone --separate-git-dir`: the workspace's `.git` names an absolute git directory in
/// another writable root (`/tmp`).
#[test]
fn separate_git_dir_in_another_writable_root() {
    let _serial = attack_support::serial();
    let (_src_dir, src) = temp_in("/var/tmp", "airlock-attack-src-");
    git_ok(&src, &["init", "-q"]);
    commit_readme(&src);
    let (_sep_dir, sep) = temp_in("/tmp", "airlock-attack-sep-");
    let (_ws_dir, base) = temp_in("/var/tmp", "airlock-attack-clone-");
    let git_dir = sep.join("repo.git");
    git_ok(
        &base,
        &[
            "clone",
            "-q",
            "--separate-git-dir",
            git_dir.to_str().unwrap(),
            src.to_str().unwrap(),
            "ws",
        ],
    );
    let ws = base.join("ws");
    assert!(ws.join(".git").is_file());
    let before = snapshot(&git_dir);
    let marker = Marker::new();
    let plant = plant_in_git_dir(&git_dir, &marker);
    // Also: move the directory holding the git directory away and build a fake one there.
    let rename = format!(
        "mv '{sep}' '{sep}.moved' && git init -q --bare '{git}' && \
         git config --file '{git}/config' core.fsmonitor '{cmd}'",
        sep = sep.display(),
        git = git_dir.display(),
        cmd = marker.command()
    );
    let out = sandboxed(&ws, &[], &format!("{plant}; {rename}"));
    let all = text(&out);
    assert!(all.contains("Read-only file system"), "{all}");
    assert!(all.contains("Device or resource busy"), "{all}");
    assert!(!Path::new(&format!("{}.moved", sep.display())).exists());
    assert_eq!(snapshot(&git_dir), before, "{all}");
    assert_host_git_is_clean(&ws, &marker);
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}

/// A submodule: its `.git` is `gitdir: ../.git/modules/sub`. The workspace is the
/// submodule's directory and the superproject lives under the writable `/tmp`, so both the
/// submodule's git directory and the superproject's `.git` would be writable.
#[test]
fn submodule_with_its_superproject_under_tmp() {
    let _serial = attack_support::serial();
    let (_lib_dir, lib) = temp_in("/var/tmp", "airlock-attack-lib-");
    git_ok(&lib, &["init", "-q"]);
    commit_readme(&lib);
    let (_super_dir, superproject) = temp_in("/tmp", "airlock-attack-super-");
    git_ok(&superproject, &["init", "-q"]);
    git_ok(
        &superproject,
        &["submodule", "add", "-q", lib.to_str().unwrap(), "sub"],
    );
    git_ok(&superproject, &["commit", "-qm", "add sub"]);
    let ws = superproject.join("sub");
    assert!(
        std::fs::read_to_string(ws.join(".git"))
            .unwrap()
            .contains("modules/sub")
    );
    let module_dir = superproject.join(".git/modules/sub");
    let super_git = superproject.join(".git");
    let (before_module, before_super) = (snapshot(&module_dir), snapshot(&super_git));
    let marker = Marker::new();
    let plant = format!(
        "{}; {}",
        plant_in_git_dir(&module_dir, &marker),
        plant_in_git_dir(&super_git, &marker)
    );
    let out = sandboxed(&ws, &[], &plant);
    let all = text(&out);
    assert!(all.contains("Read-only file system"), "{all}");
    assert_eq!(snapshot(&module_dir), before_module, "{all}");
    assert_eq!(snapshot(&super_git), before_super, "{all}");
    assert_host_git_is_clean(&ws, &marker);
    assert_host_git_is_clean(&superproject, &marker);
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}

/// A dangling pointer (`gitdir: ./.bare`, no `.bare`): the sandbox must not be able to
/// create the repository git would then use; afterwards nothing is left behind.
#[test]
fn dangling_pointer_target_cannot_be_created() {
    let _serial = attack_support::serial();
    let (_dir, ws) = temp_in("/var/tmp", "airlock-attack-dangling-");
    std::fs::write(ws.join(".git"), "gitdir: ./.bare\n").unwrap();
    std::fs::write(ws.join("README"), "hello\n").unwrap();
    let marker = Marker::new();
    let plant = format!(
        "git init -q --bare .bare && git config --file .bare/config core.bare false && \
         git config --file .bare/config core.fsmonitor '{}'",
        marker.command()
    );
    let out = sandboxed(&ws, &[], &plant);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert!(
        !ws.join(".bare").exists(),
        "placeholder or planted repository left behind"
    );
    assert_host_git_is_clean(&ws, &marker);
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}

/// A `.git` directory whose `config` and `hooks` are symlinks into another repository under
/// `/tmp` (`git-new-workdir`): git follows them, so their targets stay read-only too.
#[test]
fn symlinked_config_and_hooks_of_a_git_directory() {
    let _serial = attack_support::serial();
    let (_main_dir, main) = temp_in("/tmp", "airlock-attack-linked-");
    git_ok(&main, &["init", "-q"]);
    commit_readme(&main);
    let (_ws_dir, ws) = temp_in("/var/tmp", "airlock-attack-workdir-");
    let dot_git = ws.join(".git");
    std::fs::create_dir(&dot_git).unwrap();
    // As `git-new-workdir` does: everything shared by symlink, `HEAD` copied.
    for name in [
        "config",
        "hooks",
        "info",
        "refs",
        "objects",
        "logs",
        "packed-refs",
    ] {
        let target = main.join(".git").join(name);
        if target.exists() {
            std::os::unix::fs::symlink(&target, dot_git.join(name)).unwrap();
        }
    }
    std::fs::copy(main.join(".git/HEAD"), dot_git.join("HEAD")).unwrap();
    git_ok(&ws, &["checkout", "-qf", "HEAD"]);
    let before = snapshot(&main.join(".git"));
    let marker = Marker::new();
    let plant = plant_in_git_dir(&main.join(".git"), &marker);
    let out = sandboxed(&ws, &[], &plant);
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert_eq!(snapshot(&main.join(".git")), before, "{}", text(&out));
    assert_host_git_is_clean(&ws, &marker);
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}

/// `permissions show` names the resolved git directory and common directory, for people and
/// in `--json`.
#[test]
fn permissions_show_lists_the_git_locations() {
    let _serial = attack_support::serial();
    let (_main_dir, main) = temp_in("/var/tmp", "airlock-show-main-");
    git_ok(&main, &["init", "-q"]);
    commit_readme(&main);
    let (_ws_dir, base) = temp_in("/var/tmp", "airlock-show-wt-");
    let ws = base.join("wt");
    git_ok(
        &main,
        &["worktree", "add", "-q", "-b", "wt", ws.to_str().unwrap()],
    );
    let out = attack_support::airlock(&["permissions", "show", "-P", ":workspace"], &ws);
    let summary = text(&out);
    let admin = main.join(".git/worktrees/wt");
    for expected in [
        format!(
            "    read-only: {}/.git\n    read-only: {} (git directory of {}/.git)\n",
            ws.display(),
            admin.display(),
            ws.display()
        ),
        format!(
            "    read-only: {} (git common directory of {}/.git)\n",
            main.join(".git").display(),
            ws.display()
        ),
    ] {
        assert!(
            summary.contains(&expected),
            "missing {expected:?} in\n{summary}"
        );
    }
    // The repository above a workspace under `/tmp`, and the `.git` names on the way.
    let (_tmp_dir, tmp_base) = temp_in("/tmp", "airlock-show-above-");
    git_ok(&tmp_base, &["init", "-q"]);
    let inner = tmp_base.join("a/ws");
    std::fs::create_dir_all(&inner).unwrap();
    let out = attack_support::airlock(&["permissions", "show", "-P", ":workspace"], &inner);
    let above = text(&out);
    for expected in [
        format!(
            "    read-only: {}/a/.git (missing: must not be created, git would find it from this root)\n",
            tmp_base.display()
        ),
        format!(
            "    read-only: {}/.git (the repository git finds above this root)\n",
            tmp_base.display()
        ),
    ] {
        assert!(
            above.contains(&expected),
            "missing {expected:?} in\n{above}"
        );
    }
    let out = attack_support::airlock(&["permissions", "show", "-P", ":workspace", "--json"], &ws);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = json["file_system"]["entries"].as_array().unwrap();
    for path in [admin, main.join(".git")] {
        assert!(
            entries
                .iter()
                .any(|e| e["path"]["path"] == path.to_str().unwrap() && e["access"] == "read"),
            "{path:?} not in {json}"
        );
    }
}

/// The repository's config includes a file in the working tree (`include.path =
/// ../project.gitconfig`, a common way to share settings) and, conditionally, one that does
/// not exist yet: git reads both, so neither may be written or created.
#[test]
fn included_configuration_files_in_the_workspace() {
    let _serial = attack_support::serial();
    let (_dir, ws) = temp_in("/var/tmp", "airlock-attack-include-");
    git_ok(&ws, &["init", "-q"]);
    commit_readme(&ws);
    std::fs::write(ws.join("project.gitconfig"), "[core]\n\tautocrlf = false\n").unwrap();
    git_ok(&ws, &["config", "include.path", "../project.gitconfig"]);
    git_ok(
        &ws,
        &[
            "config",
            "includeIf.onbranch:main.path",
            "../later.gitconfig",
        ],
    );
    let marker = Marker::new();
    let plant = format!(
        "printf '[core]\\n\\tfsmonitor = {cmd}\\n' >> project.gitconfig; \
         printf '[core]\\n\\tfsmonitor = {cmd}\\n' > later.gitconfig; \
         mv project.gitconfig gone.gitconfig; true",
        cmd = marker.command()
    );
    let out = sandboxed(&ws, &[], &plant);
    let all = text(&out);
    assert!(all.contains("Read-only file system"), "{all}");
    assert_eq!(
        std::fs::read_to_string(ws.join("project.gitconfig")).unwrap(),
        "[core]\n\tautocrlf = false\n"
    );
    assert!(!ws.join("later.gitconfig").exists() && !ws.join("gone.gitconfig").exists());
    assert_host_git_is_clean(&ws, &marker);
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}

/// `core.hooksPath` names a shared hooks directory under `/tmp` (outside the working
/// tree): the sandbox must not plant a hook there, nor create the directory if missing.
#[test]
fn hooks_path_outside_the_working_tree() {
    let _serial = attack_support::serial();
    let (_ws_dir, ws) = temp_in("/var/tmp", "airlock-attack-hookspath-");
    git_ok(&ws, &["init", "-q"]);
    commit_readme(&ws);
    let (_hooks_dir, hooks_base) = temp_in("/tmp", "airlock-attack-hooks-");
    for hooks in [hooks_base.join("shared"), hooks_base.join("not-yet")] {
        git_ok(&ws, &["config", "core.hooksPath", hooks.to_str().unwrap()]);
        let marker = Marker::new();
        let plant = format!(
            "mkdir -p '{hooks}' && printf '#!/bin/sh\\n{cmd}\\n' > '{hooks}/pre-commit' && \
             chmod +x '{hooks}/pre-commit'",
            hooks = hooks.display(),
            cmd = marker.command()
        );
        if hooks.ends_with("shared") {
            std::fs::create_dir_all(&hooks).unwrap();
        }
        let out = sandboxed(&ws, &[], &plant);
        assert!(!out.status.success(), "{}", text(&out));
        assert!(
            text(&out).contains("Read-only file system"),
            "{}",
            text(&out)
        );
        assert!(!hooks.join("pre-commit").exists());
        assert_host_git_is_clean(&ws, &marker);
        assert_attack_works_unsandboxed(&ws, &plant, &marker);
    }
}

/// Fail closed: a pointer through a symlink the sandbox could re-point stops the launch
/// before anything runs (exit 125, the file named). Metadata that is no regular file (a
/// directory, FIFO or device where `commondir` is expected: git cannot use such a
/// repository, and reading it could block, red-team F11) is not followed: the `.git`
/// entry stays protected as it is and the launch goes on.
#[test]
fn unreadable_metadata_and_symlinked_pointers_stop_the_launch() {
    let _serial = attack_support::serial();
    let (_dir, ws) = temp_in("/var/tmp", "airlock-attack-failclosed-");
    let ran = ws.join("ran");
    let script = format!("touch '{}'", ran.display());
    // A `commondir` that is a directory: the launch goes on, `.git` stays read-only.
    std::fs::create_dir_all(ws.join(".git/commondir")).unwrap();
    let out = sandboxed(
        &ws,
        &[],
        &format!("{script}; touch .git/commondir/planted; true"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(ran.exists());
    assert!(
        !ws.join(".git/commondir/planted").exists(),
        "{}",
        text(&out)
    );
    std::fs::remove_file(&ran).unwrap();
    // `gitdir:` through a symlink inside the workspace.
    std::fs::remove_dir_all(ws.join(".git")).unwrap();
    let (_real_dir, real) = temp_in("/var/tmp", "airlock-attack-real-");
    git_ok(&real, &["init", "-q", "--bare", "repo.git"]);
    std::os::unix::fs::symlink(&real, ws.join("link")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: link/repo.git\n").unwrap();
    let out = sandboxed(&ws, &[], &script);
    assert_eq!(out.status.code(), Some(125), "{}", text(&out));
    assert!(
        text(&out).contains("crosses writable symlink"),
        "{}",
        text(&out)
    );
    assert!(!ran.exists());
}

/// Trees managed by `repo` (Android): a nested project's `.git` is a symlink into
/// `.repo/projects/`, which git follows; that git directory stays read-only.
#[test]
fn nested_git_symlink_targets() {
    let _serial = attack_support::serial();
    let (_dir, ws) = temp_in("/var/tmp", "airlock-attack-repotool-");
    git_ok(&ws, &["init", "-q"]);
    let sub = ws.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    git_ok(&sub, &["init", "-q"]);
    commit_readme(&sub);
    let projects = ws.join(".repo/projects");
    std::fs::create_dir_all(&projects).unwrap();
    let git_dir = projects.join("sub.git");
    std::fs::rename(sub.join(".git"), &git_dir).unwrap();
    std::os::unix::fs::symlink("../.repo/projects/sub.git", sub.join(".git")).unwrap();
    git_ok(&sub, &["status", "--short"]);
    let before = snapshot(&git_dir);
    let marker = Marker::new();
    let plant = plant_in_git_dir(&git_dir, &marker);
    let out = sandboxed(&ws, &[], &plant);
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert_eq!(snapshot(&git_dir), before, "{}", text(&out));
    assert_host_git_is_clean(&sub, &marker);
    assert_attack_works_unsandboxed(&sub, &plant, &marker);
}

/// Red-team F10, the sandbox side: a directory that is itself a git directory (here the
/// bare repository `backup.git` the user pushes to from the host) is a repository like a
/// `.git`, found by the nested scan and kept read-only: the sandbox cannot plant a
/// `pre-receive` hook or configuration that the host's `git push backup` would run.
#[test]
fn bare_repository_inside_the_workspace() {
    let _serial = attack_support::serial();
    let (_dir, ws) = temp_in("/var/tmp", "airlock-attack-bare-in-ws-");
    git_ok(&ws, &["init", "-q"]);
    git_ok(&ws, &["commit", "-q", "--allow-empty", "-m", "init"]);
    git_ok(&ws, &["init", "-q", "--bare", "backup.git"]);
    git_ok(&ws, &["remote", "add", "backup", "./backup.git"]);
    let marker = Marker::new();
    let cmd = marker.command();
    let plant = format!(
        "printf '#!/bin/sh\\n{cmd}\\n' > backup.git/hooks/pre-receive; chmod +x backup.git/hooks/pre-receive; \
         git config --file backup.git/config core.hooksPath \"$PWD/hooks2\"; \
         mkdir -p hooks2 && printf '#!/bin/sh\\n{cmd}\\n' > hooks2/pre-receive && chmod +x hooks2/pre-receive; \
         mv backup.git backup.old && cp -a backup.old backup.git; true"
    );
    let out = sandboxed(&ws, &[], &plant);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !ws.join("backup.git/hooks/pre-receive").exists(),
        "{}",
        text(&out)
    );
    let push = git(&ws, &["push", "-q", "backup", "HEAD:refs/heads/a"]);
    assert!(
        !marker.fired(),
        "the host's push ran a planted hook: {}",
        text(&push)
    );
    let ran = std::process::Command::new("sh")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-c", &plant])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran));
    let _ = git(&ws, &["push", "-q", "backup", "HEAD:refs/heads/b"]);
    assert!(marker.fired(), "control: the planted hook did not run");
}
