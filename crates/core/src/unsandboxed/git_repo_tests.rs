//! Unit tests of repository discovery and checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn never(_: &Path) -> bool {
    false
}

fn init(dir: &Path) -> Repository {
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(dir.join(".git/objects")).unwrap();
    std::fs::create_dir_all(dir.join(".git/refs")).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(dir.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    Repository {
        git_dir: dir.join(".git"),
        common_dir: dir.join(".git"),
        work_trees: vec![dir.to_path_buf()],
    }
}

#[test]
fn locate_honours_dash_c_git_dir_and_the_environment() {
    let cwd = Path::new("/w");
    let at = |words: &[&str], env| locate(&argv(words), cwd, env, None);
    assert_eq!(
        at(&["git", "-C", "sub", "status"], None).cwd,
        Path::new("/w/sub")
    );
    assert_eq!(
        at(&["git", "-C", "a", "-C", "../b", "status"], None).cwd,
        Path::new("/w/b")
    );
    assert_eq!(
        at(&["git", "--git-dir=x/.git", "status"], None).git_dir,
        Some(PathBuf::from("/w/x/.git"))
    );
    assert_eq!(
        at(&["git", "-C", "s", "--git-dir", "g", "log"], Some("/env")).git_dir,
        Some(PathBuf::from("/w/s/g"))
    );
    assert_eq!(
        at(&["git", "status"], Some("/env/.git")).git_dir,
        Some(PathBuf::from("/env/.git"))
    );
    assert_eq!(
        at(&["git", "--work-tree", "wt", "status"], None).cwd,
        Path::new("/w")
    );
}

#[test]
fn discovery_walks_up_and_follows_pointer_files() {
    let root = tempfile::tempdir().unwrap();
    let top = root.path().join("top");
    init(&top);
    std::fs::create_dir_all(top.join("a/b")).unwrap();
    let found = |cwd: &Path| {
        discover(
            &GitLocation {
                cwd: cwd.to_path_buf(),
                ..GitLocation::default()
            },
            &never,
        )
        .unwrap()
        .unwrap()
    };
    assert_eq!(found(&top.join("a/b")).git_dir, top.join(".git"));
    // A `.git` file pointing elsewhere, and a linked worktree with a commondir.
    let wt = root.path().join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    let admin = top.join(".git/worktrees/wt");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
    let repo = found(&wt);
    assert_eq!(repo.git_dir, admin);
    assert_eq!(repo.common_dir, top.join(".git"));
    std::fs::write(wt.join(".git"), "gitdir: ../top/.git\n").unwrap();
    assert_eq!(found(&wt).git_dir, top.join(".git"));
    std::fs::write(wt.join(".git"), "nonsense\n").unwrap();
    assert!(
        discover(
            &GitLocation {
                cwd: wt,
                ..GitLocation::default()
            },
            &never
        )
        .is_err()
    );
}

#[test]
fn config_keys_that_run_programs_are_unsafe() {
    let root = tempfile::tempdir().unwrap();
    let repo = init(root.path());
    assert_eq!(check_repository(&repo, &never, None), Ok(()));
    for config in [
        "[core]\n\tfsmonitor = \"touch /x\"\n",
        "[Core]\nFSMonitor=./x\n",
        "[core]\nhooksPath = /elsewhere\n",
        "[diff \"x\"]\ntextconv = cat\n",
        "[filter \"lfs\"]\nsmudge = x\n",
        "[alias]\nst = !sh -c 'x'\n",
        "[credential]\nhelper = store\n",
        "[gpg \"ssh\"]\nprogram = x\n",
        "[remote \"o\"]\nuploadpack = x\n",
        "[pager]\nlog = x\n",
        "[protocol \"ext\"]\nallow = user\n",
        "[protocol]\nallow = user\n",
        "[hook \"fmt\"]\ncommand = x\n",
        "[core]\nfsmonitor = \"unterminated\n",
    ] {
        std::fs::write(repo.git_dir.join("config"), config).unwrap();
        assert!(check_repository(&repo, &never, None).is_err(), "{config}");
    }
    for config in [
        "[core]\nfsmonitor = false\nbare = false\n",
        "[alias]\nst = status\n",
    ] {
        std::fs::write(repo.git_dir.join("config"), config).unwrap();
        assert_eq!(check_repository(&repo, &never, None), Ok(()), "{config}");
    }
}

#[test]
fn includes_are_followed_and_bounded() {
    let root = tempfile::tempdir().unwrap();
    let repo = init(root.path());
    std::fs::write(root.path().join("inc1"), "[include]\npath = inc2\n").unwrap();
    std::fs::write(root.path().join("inc2"), "[core]\nsshCommand = x\n").unwrap();
    std::fs::write(repo.git_dir.join("config"), "[include]\npath = ../inc1\n").unwrap();
    let error = check_repository(&repo, &never, None).unwrap_err();
    assert!(
        error.0.contains("inc2") && error.0.contains("core.sshcommand"),
        "{error:?}"
    );
    std::fs::write(root.path().join("inc2"), "[include]\npath = inc1\n").unwrap();
    let error = check_repository(&repo, &never, None).unwrap_err();
    assert!(error.0.contains("deeper than"), "{error:?}");
}

#[test]
fn user_config_is_judged_by_where_it_lives_not_by_its_keys() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::write(home.join(".gitconfig"), "[credential]\nhelper = store\n").unwrap();
    let no_env = |_: &str| None;
    assert_eq!(check_user_config(&no_env, &never, Some(home)), Ok(()));
    let home_writable = |p: &Path| p.starts_with(home);
    let error = check_user_config(&no_env, &home_writable, Some(home)).unwrap_err();
    assert!(
        error.0.contains(".gitconfig") && error.0.contains("writable"),
        "{error:?}"
    );
    std::fs::write(home.join(".gitconfig"), "[core]\nhooksPath = .githooks\n").unwrap();
    assert!(
        check_user_config(&no_env, &never, Some(home))
            .unwrap_err()
            .0
            .contains("relative path")
    );
    std::fs::write(
        home.join(".gitconfig"),
        "[core]\npager = /ws/bin/pager -R\n",
    )
    .unwrap();
    let ws_writable = |p: &Path| p.starts_with("/ws");
    assert!(check_user_config(&no_env, &ws_writable, Some(home)).is_err());
    std::fs::write(home.join(".gitconfig"), "[core]\npager = less -R\n").unwrap();
    assert_eq!(check_user_config(&no_env, &ws_writable, Some(home)), Ok(()));
    let elsewhere = home.join("elsewhere.cfg");
    std::fs::write(&elsewhere, "[core]\npager = less\n").unwrap();
    let global = elsewhere.display().to_string();
    let env = move |name: &str| (name == "GIT_CONFIG_GLOBAL").then(|| global.clone());
    let only_elsewhere = |p: &Path| p.ends_with("elsewhere.cfg");
    assert!(check_user_config(&env, &only_elsewhere, Some(home)).is_err());
}

#[test]
fn hooks_and_writable_git_directories_are_unsafe() {
    let root = tempfile::tempdir().unwrap();
    let repo = init(root.path());
    let hook = repo.git_dir.join("hooks/post-checkout");
    std::fs::write(&hook, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert!(
        check_repository(&repo, &never, None)
            .unwrap_err()
            .0
            .contains("hook")
    );
    std::fs::remove_file(&hook).unwrap();
    let git_dir = repo.git_dir.clone();
    let writable = move |p: &Path| p.starts_with(&git_dir);
    assert!(
        check_repository(&repo, &writable, None)
            .unwrap_err()
            .0
            .contains("writable")
    );
}
