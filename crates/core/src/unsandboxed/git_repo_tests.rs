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
        found: Found::DotGit {
            top: dir.to_path_buf(),
        },
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

/// Real git in `dir` with no user or system configuration, `env` added.
fn real_git(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = std::process::Command::new("git");
    command
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_SYSTEM", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_CEILING_DIRECTORIES");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn real_git_ok(dir: &Path, args: &[&str]) {
    let out = real_git(
        dir,
        &[
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "-c",
                "init.defaultBranch=main",
            ][..],
            args,
        ]
        .concat(),
        &[],
    );
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// What `discover` finds from `cwd` with `ceiling`, and what git itself uses there.
fn ours_and_gits(cwd: &Path, ceiling: &Path) -> (Option<PathBuf>, Option<PathBuf>) {
    let ceiling_text = ceiling.display().to_string();
    let env = |name: &str| (name == "GIT_CEILING_DIRECTORIES").then(|| ceiling_text.clone());
    let location = locate_with_env(&argv(&["git", "status"]), cwd, &env);
    let ours = discover(&location, &never)
        .unwrap()
        .map(|repo| resolve(&repo.git_dir));
    let out = real_git(
        cwd,
        &["rev-parse", "--absolute-git-dir"],
        &[("GIT_CEILING_DIRECTORIES", &ceiling_text)],
    );
    let gits = out.status.success().then(|| {
        resolve(Path::new(
            String::from_utf8_lossy(&out.stdout).trim_end_matches('\n'),
        ))
    });
    (ours, gits)
}

#[test]
fn discovery_finds_what_git_finds_bare_forms_included() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let make = |name: &str, head: Option<&str>| {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        std::fs::create_dir_all(dir.join("refs/heads")).unwrap();
        if let Some(head) = head {
            std::fs::write(dir.join("HEAD"), head).unwrap();
        }
        dir
    };
    real_git_ok(&root, &["init", "-q", "--bare", "bare.git"]);
    make("symref", Some("ref: refs/heads/x\n"));
    make(
        "detached",
        Some("0123456789abcdef0123456789abcdef01234567\n"),
    );
    make("garbage", Some("garbage\n"));
    make("no-head", None);
    std::os::unix::fs::symlink("refs/heads/none", make("linked", None).join("HEAD")).unwrap();
    let exec_objects = make("exec-objects", Some("ref: refs/heads/x\n"));
    std::fs::remove_dir(exec_objects.join("objects")).unwrap();
    std::fs::write(exec_objects.join("objects"), "").unwrap();
    std::fs::set_permissions(
        exec_objects.join("objects"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // A `.git` that is no git directory inside a directory that is one.
    let outer = make("outer", Some("ref: refs/heads/x\n"));
    std::fs::create_dir_all(outer.join(".git/refs")).unwrap();
    // Objects and refs from a commondir.
    let shared = make("shared", Some("ref: refs/heads/x\n"));
    let worktree_like = root.join("wt-admin");
    std::fs::create_dir_all(&worktree_like).unwrap();
    std::fs::write(worktree_like.join("HEAD"), "ref: refs/heads/y\n").unwrap();
    std::fs::write(worktree_like.join("commondir"), "../shared\n").unwrap();
    // A work tree with a subdirectory, a pointer file, and a repository above a ceiling.
    real_git_ok(&root, &["init", "-q", "top"]);
    std::fs::create_dir_all(root.join("top/a/b")).unwrap();
    std::fs::create_dir_all(root.join("pointer")).unwrap();
    std::fs::write(root.join("pointer/.git"), "gitdir: ../bare.git\n").unwrap();
    let cases: Vec<(PathBuf, PathBuf)> = vec![
        (root.join("bare.git"), root.clone()),
        (root.join("bare.git/refs/heads"), root.clone()),
        (root.join("symref"), root.clone()),
        (root.join("detached"), root.clone()),
        (root.join("garbage"), root.clone()),
        (root.join("no-head"), root.clone()),
        (root.join("linked"), root.clone()),
        (exec_objects, root.clone()),
        (outer, root.clone()),
        (worktree_like, root.clone()),
        (shared, root.clone()),
        (root.join("top/a/b"), root.clone()),
        (root.join("top/a/b"), root.join("top/a")),
        (root.join("top/a/b"), root.join("top")),
        (root.join("pointer"), root.clone()),
    ];
    for (cwd, ceiling) in cases {
        let (ours, gits) = ours_and_gits(&cwd, &ceiling);
        assert_eq!(ours, gits, "from {cwd:?} with ceiling {ceiling:?}");
    }
    // Found as bare, with no working tree.
    let location = GitLocation {
        cwd: root.join("bare.git"),
        ..GitLocation::default()
    };
    let repo = discover(&location, &never).unwrap().unwrap();
    assert_eq!(repo.found, Found::Bare);
    assert!(repo.work_trees.is_empty());
}

#[test]
fn a_git_dir_naming_a_pointer_file_is_followed() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    init(&root.join("real"));
    std::fs::write(root.join("pointer"), "gitdir: real/.git\n").unwrap();
    let location = locate(
        &argv(&["git", "--git-dir=pointer", "log"]),
        &root,
        None,
        None,
    );
    let repo = discover(&location, &never).unwrap().unwrap();
    assert_eq!(repo.git_dir, root.join("real/.git"));
    assert_eq!(repo.found, Found::Explicit);
}

/// Runs `check` on another thread and fails if it takes longer than 10 s (a reader that
/// blocks on a FIFO never returns).
fn within_bounded_time<T: Send + 'static>(check: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(check());
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the check blocked (a FIFO was opened or read)")
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn fifos_devices_and_huge_files_are_unsafe_never_a_hang() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let discover_from = |cwd: PathBuf| {
        within_bounded_time(move || {
            discover(
                &GitLocation {
                    cwd,
                    ..GitLocation::default()
                },
                &never,
            )
            .map(|found| found.map(|repo| repo.git_dir))
        })
    };
    // `.git` a FIFO; a pointer file's target with a FIFO commondir; a FIFO HEAD.
    let fifo_dot_git = root.join("fifo-dot-git");
    std::fs::create_dir_all(&fifo_dot_git).unwrap();
    mkfifo(&fifo_dot_git.join(".git"));
    let error = discover_from(fifo_dot_git).unwrap_err();
    assert!(error.0.contains("not a file or directory"), "{error:?}");
    let admin = root.join("admin");
    std::fs::create_dir_all(&admin).unwrap();
    mkfifo(&admin.join("commondir"));
    let pointed = root.join("pointed");
    std::fs::create_dir_all(&pointed).unwrap();
    std::fs::write(pointed.join(".git"), "gitdir: ../admin\n").unwrap();
    let error = discover_from(pointed.clone()).unwrap_err();
    assert!(error.0.contains("commondir is a FIFO"), "{error:?}");
    let fifo_head = root.join("fifo-head");
    std::fs::create_dir_all(fifo_head.join("objects")).unwrap();
    mkfifo(&fifo_head.join("HEAD"));
    let error = discover_from(fifo_head).unwrap_err();
    assert!(error.0.contains("HEAD is a FIFO"), "{error:?}");
    // A gitfile that is a symlink to /dev/zero, or huge.
    std::fs::remove_file(pointed.join(".git")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", pointed.join(".git")).unwrap();
    assert!(discover_from(pointed.clone()).is_err());
    std::fs::remove_file(pointed.join(".git")).unwrap();
    std::fs::write(pointed.join(".git"), vec![b'x'; 2 << 20]).unwrap();
    let error = discover_from(pointed).unwrap_err();
    assert!(error.0.contains("larger than"), "{error:?}");

    // In a repository: a FIFO config, included file and index; a config that is
    // /dev/zero.
    let repo = init(&root.join("repo"));
    for (name, plant) in [
        ("config", "config"),
        ("include", "included"),
        ("index", "index"),
        ("zero", "config"),
    ] {
        let target = repo.git_dir.join(plant);
        match name {
            "include" => std::fs::write(
                repo.git_dir.join("config"),
                "[include]\n\tpath = included\n",
            )
            .unwrap(),
            _ => {
                let _ = std::fs::remove_file(repo.git_dir.join("config"));
            }
        }
        if name == "zero" {
            std::os::unix::fs::symlink("/dev/zero", &target).unwrap();
        } else {
            mkfifo(&target);
        }
        let repo_copy = repo.clone();
        let result = within_bounded_time(move || check_repository(&repo_copy, &never, None));
        let error = result.unwrap_err();
        assert!(
            error.0.contains(plant) && error.0.contains("not a regular file"),
            "{name}: {error:?}"
        );
        std::fs::remove_file(&target).unwrap();
        let _ = std::fs::remove_file(repo.git_dir.join("config"));
    }
    // A FIFO among the hooks.
    let repo = init(&root.join("hooked"));
    mkfifo(&repo.git_dir.join("hooks/post-checkout"));
    let repo_copy = repo.clone();
    let error =
        within_bounded_time(move || check_repository(&repo_copy, &never, None)).unwrap_err();
    assert!(error.0.contains("not a regular file"), "{error:?}");
    // The user's configuration: a FIFO is unsafe, /dev/null is "no configuration".
    let global = root.join("global-fifo");
    mkfifo(&global);
    let global_text = global.display().to_string();
    let result = within_bounded_time(move || {
        let env = move |name: &str| (name == "GIT_CONFIG_GLOBAL").then(|| global_text.clone());
        check_user_config(&env, &never, None)
    });
    assert!(result.unwrap_err().0.contains("FIFO"));
    let null = |name: &str| {
        matches!(name, "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM").then(|| "/dev/null".to_owned())
    };
    let everything_writable = |_: &Path| true;
    assert_eq!(check_user_config(&null, &never, None), Ok(()));
    assert_eq!(check_user_config(&null, &everything_writable, None), Ok(()));
}
