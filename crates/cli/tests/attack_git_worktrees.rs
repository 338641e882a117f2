//! Issue 11 item 1, linked worktrees: a worktree's git directory takes `config` and
//! `hooks/` from the main repository (`commondir`), which may lie in another writable root
//! (`/tmp`, a deeper root of a custom profile), and the `.git` files of the other worktrees
//! name where each one's git directory is. Each test builds the layout with real git, runs
//! the attack inside the real sandbox, runs git on the host as the user would next, and
//! asserts the planted command never ran; each ends with the control that the same script
//! run without the sandbox does plant a command the host's git runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod attack_support;

use attack_support::{
    Marker, assert_attack_works_unsandboxed, assert_host_git_is_clean, commit_readme, git_ok,
    plant_in_git_dir, sandboxed, snapshot, temp_in, text,
};

/// A bare repository with linked worktrees (`git worktree add`): each worktree's git
/// directory is `.bare/worktrees/<name>` and its common directory `.bare`. Attacked from the
/// project directory (worktrees nested in the workspace), and from one worktree while the
/// project lives under the writable `/tmp`.
#[test]
fn bare_repository_with_linked_worktrees() {
    let _serial = attack_support::serial();
    for parent in ["/var/tmp", "/tmp"] {
        let (_dir, project) = temp_in(parent, "airlock-attack-worktrees-");
        git_ok(&project, &["init", "-q", "--bare", ".bare"]);
        std::fs::write(project.join(".git"), "gitdir: ./.bare\n").unwrap();
        git_ok(&project, &["worktree", "add", "-q", "-b", "main", "main"]);
        let main = project.join("main");
        commit_readme(&main);
        git_ok(
            &project,
            &["worktree", "add", "-q", "-b", "feature", "feature"],
        );
        let feature = project.join("feature");
        let bare = project.join(".bare");
        let before = snapshot(&bare);
        let marker = Marker::new();
        let plant = plant_in_git_dir(&bare, &marker);
        let worktree_admin = bare.join("worktrees/feature");
        let extra = format!(
            "git config --file '{admin}/config.worktree' core.fsmonitor '{cmd}'; \
             echo 'gitdir: /tmp/evil.git' > feature/.git; echo 'gitdir: /tmp/evil.git' > .git; \
             mv feature/.git feature/.git.old; mv feature feature.old",
            admin = worktree_admin.display(),
            cmd = marker.command()
        );
        // From the project directory, and from the `feature` worktree.
        for ws in [&project, &feature] {
            let out = sandboxed(
                ws,
                &[],
                &format!("cd {}; {plant}; {extra}", project.display()),
            );
            let all = text(&out);
            assert!(all.contains("Read-only file system"), "{parent}: {all}");
            assert_eq!(snapshot(&bare), before, "{parent}: {all}");
            assert!(!worktree_admin.join("config.worktree").exists(), "{all}");
            assert!(!project.join("feature.old").exists(), "{all}");
            assert!(
                std::fs::read_to_string(feature.join(".git"))
                    .unwrap()
                    .contains(".bare/worktrees/feature"),
                "{all}"
            );
            for worktree in [&main, &feature] {
                assert_host_git_is_clean(worktree, &marker);
            }
        }
        assert_attack_works_unsandboxed(&feature, &plant, &marker);
    }
}

/// A linked worktree in the workspace whose main repository is under `/tmp`: the common
/// directory (`config`, `hooks/`) lies outside the workspace, in another writable root.
#[test]
fn worktree_whose_main_repository_is_under_tmp() {
    let _serial = attack_support::serial();
    let (_main_dir, main) = temp_in("/tmp", "airlock-attack-main-");
    git_ok(&main, &["init", "-q"]);
    commit_readme(&main);
    let (_ws_dir, base) = temp_in("/var/tmp", "airlock-attack-wt-");
    let ws = base.join("wt");
    git_ok(
        &main,
        &["worktree", "add", "-q", "-b", "wt", ws.to_str().unwrap()],
    );
    let common = main.join(".git");
    let admin = common.join("worktrees/wt");
    let before = snapshot(&common);
    let marker = Marker::new();
    let plant = format!(
        "{}; git config --file '{}/config.worktree' core.fsmonitor '{}'",
        plant_in_git_dir(&common, &marker),
        admin.display(),
        marker.command()
    );
    let out = sandboxed(&ws, &[], &plant);
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert_eq!(snapshot(&common), before, "{}", text(&out));
    assert!(!admin.join("config.worktree").exists());
    assert_host_git_is_clean(&ws, &marker);
    assert_host_git_is_clean(&main, &marker);
    assert_attack_works_unsandboxed(&ws, &plant, &marker);
}

/// The main repository of the workspace's worktree lies in a writable root of a custom
/// profile that is deeper than the workspace: its read-only binds must come after that
/// root's bind, or the bind would cover them.
#[test]
fn worktree_whose_main_repository_is_in_a_deeper_writable_root() {
    let _serial = attack_support::serial();
    let (_data_dir, data) = temp_in("/var/tmp", "airlock-attack-deep-");
    let deep = data.join("a/b/c");
    let main = deep.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git_ok(&main, &["init", "-q"]);
    commit_readme(&main);
    let (_ws_dir, ws) = temp_in("/var/tmp", "airlock-attack-shallow-");
    let wt = ws.join("wt");
    git_ok(
        &main,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    let filesystem = format!(
        "permissions.p.filesystem={{\"{}\"=\"write\"}}",
        deep.display()
    );
    let profile = [
        "-c",
        "permissions.p.extends=\":workspace\"",
        "-c",
        filesystem.as_str(),
        "-P",
        "p",
    ];
    let common = main.join(".git");
    let before = snapshot(&common);
    let marker = Marker::new();
    let plant = plant_in_git_dir(&common, &marker);
    let out = attack_support::sandboxed_with(
        &wt,
        &profile,
        &format!("touch '{}/ok'; {plant}", deep.display()),
    );
    let all = text(&out);
    assert!(
        deep.join("ok").exists(),
        "the profile does not make {deep:?} writable: {all}"
    );
    assert!(all.contains("Read-only file system"), "{all}");
    assert_eq!(snapshot(&common), before, "{all}");
    assert_host_git_is_clean(&wt, &marker);
    assert_attack_works_unsandboxed(&wt, &plant, &marker);
}

/// The workspace is the main repository; one of its linked worktrees lives under the
/// writable `/tmp`. Re-pointing that worktree's `.git` file at a fake repository would make
/// the user's next `git status` there run the fake's config.
#[test]
fn linked_worktree_elsewhere_cannot_be_re_pointed() {
    let _serial = attack_support::serial();
    let (_ws_dir, ws) = temp_in("/var/tmp", "airlock-attack-mainws-");
    git_ok(&ws, &["init", "-q"]);
    commit_readme(&ws);
    let (_wt_dir, wt_base) = temp_in("/tmp", "airlock-attack-otherwt-");
    let wt = wt_base.join("wt");
    git_ok(
        &ws,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    let pointer = std::fs::read_to_string(wt.join(".git")).unwrap();
    let marker = Marker::new();
    let fake = wt_base.join("fake.git");
    let plant = format!(
        "git init -q --bare '{fake}' && git config --file '{fake}/config' core.bare false && \
         git config --file '{fake}/config' core.fsmonitor '{cmd}'; \
         echo 'gitdir: {fake}' > '{wt}/.git'; \
         mv '{wt}/.git' '{wt}/.git.old' && echo 'gitdir: {fake}' > '{wt}/.git'; \
         mv '{wt}' '{wt}.old' && mkdir '{wt}' && echo 'gitdir: {fake}' > '{wt}/.git'; true",
        fake = fake.display(),
        wt = wt.display(),
        cmd = marker.command()
    );
    let out = sandboxed(&ws, &[], &plant);
    let all = text(&out);
    assert!(all.contains("Read-only file system"), "{all}");
    assert!(all.contains("Device or resource busy"), "{all}");
    assert_eq!(
        std::fs::read_to_string(wt.join(".git")).unwrap(),
        pointer,
        "{all}"
    );
    assert!(!wt_base.join("wt.old").exists());
    assert_host_git_is_clean(&wt, &marker);
    attack_support::assert_attack_works_unsandboxed_at(&ws, &wt, &plant, &marker);
}
