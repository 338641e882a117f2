#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Red-team review of issue 11 item 4: ways an allow rule's bypass of the sandbox could
//! still run something a confined command planted. Each test plants from inside the real
//! sandbox (`airlock exec -a never`, `:workspace`), then runs an allow-listed git command
//! through `airlock exec -r RULES`, asserts the planted command never ran on the host and
//! the run stayed sandboxed, and ends with the control: the same git command run directly
//! on the host does run the planted command, so the attack is real.

mod exec_support;

mod redteam_support;

use std::process::{Command, Output};

use exec_support::{Dirs, airlock_bin, exists, stderr};
use redteam_support::{assert_kept_in_sandbox, host_git, host_git_ok, plant, workspace};

/// A `.git` pointer file names `../.git ` (trailing blank): git reads the path up to the
/// newline and uses the sibling directory `.git ` the sandbox made, while a lenient reader
/// would check the protected `.git`. Same with an embedded newline (`../.git\n/../evil`).
#[test]
fn pointer_files_are_read_as_git_reads_them() {
    let (dirs, rules) = workspace();
    let marker = dirs.outside_path_str("pointer-ran");
    for (sub, planted_dir, pointer) in [
        ("sub", ".git ", "../.git "),
        ("sub2", "evil", "../.git\\n/../evil"),
    ] {
        let script = format!(
            "mkdir -p {sub} '.git\n' && git init -q --bare '{planted_dir}' && \
             git --git-dir='{planted_dir}' config core.bare false && \
             git --git-dir='{planted_dir}' config core.worktree \"$PWD/{sub}\" && \
             git --git-dir='{planted_dir}' config core.fsmonitor 'touch {marker}' && \
             printf 'gitdir: {pointer}\\n' > {sub}/.git"
        );
        plant(&dirs, &script);
        assert_kept_in_sandbox(
            &dirs,
            &rules,
            &["bash", "-c", &format!("cd {sub} && git status")],
            &[],
            &marker,
            &format!("{sub}/.git points to"),
        );
        let _ = host_git(&dirs.ws.join(sub), &["status"]);
        assert!(
            exists(&marker),
            "control: {pointer:?} did not work on the host"
        );
        std::fs::remove_file(&marker).unwrap();
    }
}

/// The sandbox turns `sub` into a git directory git accepts but a strict check would not
/// (`HEAD` a dangling symlink to a ref), with `core.worktree` and `core.fsmonitor`.
#[test]
fn a_half_made_git_directory_the_sandbox_wrote_counts() {
    let (dirs, rules) = workspace();
    let marker = dirs.outside_path_str("bare-ran");
    plant(
        &dirs,
        &format!(
            "git init -q --bare sub && cd sub && rm HEAD && ln -s refs/heads/none HEAD && \
             git --git-dir=. config core.bare false && git --git-dir=. config core.worktree \"$PWD\" && \
             git --git-dir=. config core.fsmonitor 'touch {marker}'"
        ),
    );
    assert_kept_in_sandbox(
        &dirs,
        &rules,
        &["git", "-C", "sub", "status"],
        &[],
        &marker,
        "sub is writable inside the sandbox",
    );
    let _ = host_git(&dirs.ws.join("sub"), &["status"]);
    assert!(
        exists(&marker),
        "control: the half-made repository did not work"
    );
}

/// `sub` is a symlink to `real/d`; `sub/.git` says `gitdir: ../.git`. git works in the
/// physical directory, so it uses `real/.git` (planted), not the workspace's `.git`.
#[test]
fn a_symlinked_working_directory_is_resolved_as_git_resolves_it() {
    let (dirs, rules) = workspace();
    let marker = dirs.outside_path_str("symlink-ran");
    plant(
        &dirs,
        &format!(
            "mkdir -p real/d && ln -s real/d sub && git init -q real/evil && \
             git -C real/evil config core.worktree \"$PWD/real/d\" && \
             git -C real/evil config core.fsmonitor 'touch {marker}' && \
             mv real/evil/.git real/.git && printf 'gitdir: ../.git\\n' > sub/.git"
        ),
    );
    assert_kept_in_sandbox(
        &dirs,
        &rules,
        &["git", "-C", "sub", "status"],
        &[],
        &marker,
        "real/.git is writable",
    );
    assert_kept_in_sandbox(
        &dirs,
        &rules,
        &["bash", "-c", "cd sub && git status"],
        &[],
        &marker,
        "real/.git is writable",
    );
    let _ = host_git(&dirs.ws.join("sub"), &["status"]);
    assert!(
        exists(&marker),
        "control: the symlinked pointer did not work"
    );
}

/// The workspace has an uninitialised submodule `lib` (a gitlink in the index, an empty
/// directory). The sandbox creates `lib/.git` with a `core.fsmonitor`; the superproject's
/// `git status` recurses into it.
#[test]
fn a_repository_planted_at_an_uninitialised_submodule_is_checked() {
    let (dirs, rules) = workspace();
    let upstream = dirs.outside_path().join("upstream");
    host_git_ok(dirs.outside_path(), &["init", "-q", "upstream"]);
    host_git_ok(&upstream, &["commit", "-q", "--allow-empty", "-m", "u"]);
    host_git_ok(
        &dirs.ws,
        &["submodule", "-q", "add", upstream.to_str().unwrap(), "lib"],
    );
    host_git_ok(&dirs.ws, &["commit", "-qm", "submodule"]);
    host_git_ok(&dirs.ws, &["submodule", "-q", "deinit", "-f", "lib"]);
    let marker = dirs.outside_path_str("submodule-ran");
    plant(
        &dirs,
        &format!("git init -q lib && git -C lib config core.fsmonitor 'touch {marker}'"),
    );
    assert_kept_in_sandbox(
        &dirs,
        &rules,
        &["git", "status"],
        &[],
        &marker,
        "its submodule",
    );
    let _ = host_git(&dirs.ws, &["status"]);
    assert!(exists(&marker), "control: the submodule plant did not work");
}

/// `PATH` lists a directory under `/tmp` (writable in `:workspace`) before `/usr/bin`. The
/// sandbox plants `ssh` there; `git` itself is the real one, but the allow-listed
/// `git fetch ssh://…` would run the planted `ssh` unconfined.
#[test]
fn a_writable_path_entry_keeps_every_command_in_the_sandbox() {
    let (dirs, rules) = workspace();
    let bin = tempfile::Builder::new()
        .prefix("airlock-redteam-bin-")
        .tempdir_in("/tmp")
        .unwrap();
    let bin = bin.path().display().to_string();
    let marker = dirs.outside_path_str("ssh-ran");
    plant(
        &dirs,
        &format!("printf '#!/bin/sh\\ntouch {marker}\\n' > {bin}/ssh && chmod +x {bin}/ssh"),
    );
    let path = format!("{bin}:{}", std::env::var("PATH").unwrap());
    assert_kept_in_sandbox(
        &dirs,
        &rules,
        &["git", "fetch", "ssh://example.invalid/repo"],
        &[("PATH", &path)],
        &marker,
        &format!("PATH lists {bin}, which is writable"),
    );
    let control = Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["fetch", "ssh://example.invalid/repo"])
        .current_dir(&dirs.ws)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(exists(&marker), "control: {}", stderr(&control));
}

/// Red-team F10: a directory that is itself a git directory (bare-form: what `git init
/// --bare` makes, or anything git's `is_git_directory` accepts — here a `HEAD` symlink to
/// a ref that does not exist, `objects` an executable file, or `objects`/`refs` from a
/// `commondir`) is the repository git uses from inside it. A `:workspace` run plants
/// such directories with `core.fsmonitor`, `core.worktree` and a shell alias; a later
/// session whose profile no longer lets the sandbox write them (`:read-only`) must still
/// find them as git does and keep the allow-listed git in the sandbox.
#[test]
fn bare_form_repositories_are_found_as_git_finds_them() {
    let (dirs, _) = workspace();
    let rules = any_git_rules(&dirs);
    let marker = dirs.outside_path_str("bare-form-ran");
    let config = |tree: &str| {
        format!(
            "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = %s\\n\\tfsmonitor = touch {marker}\\n[alias]\\n\\tst = !touch {marker}\\n' \"$PWD/{tree}\""
        )
    };
    plant(
        &dirs,
        &format!(
            "mkdir -p tree1 tree2 tree3 linked/objects linked/refs exec/refs shared/objects shared/refs common && \
             ln -s refs/heads/none linked/HEAD && {} > linked/config && \
             echo 'ref: refs/heads/main' > exec/HEAD && : > exec/objects && chmod +x exec/objects && {} > exec/config && \
             echo 'ref: refs/heads/main' > common/HEAD && echo ../shared > common/commondir && {} > shared/config",
            config("tree1"),
            config("tree2"),
            config("tree3"),
        ),
    );
    dirs.config("default_permissions = \":read-only\"\n");
    for planted in ["linked", "exec", "common"] {
        for command in [
            vec!["git", "-C", planted, "status"],
            vec!["bash", "-c", &format!("cd {planted} && git status")],
        ] {
            let command: Vec<&str> = command.iter().map(|s| &**s).collect();
            assert_kept_in_sandbox(
                &dirs,
                &rules,
                &command,
                &[],
                &marker,
                "sets `core.fsmonitor`",
            );
        }
        // git uses it: its fsmonitor or (a linked worktree's common `core.worktree`
        // being ignored, so no working tree) its alias runs.
        let _ = host_git(&dirs.ws.join(planted), &["status"]);
        let _ = host_git(&dirs.ws.join(planted), &["st"]);
        assert!(
            exists(&marker),
            "control: {planted} did not work on the host"
        );
        std::fs::remove_file(&marker).unwrap();
    }
}

/// Red-team F11: a sandboxed run leaves FIFOs (and a symlink to `/dev/zero`) where
/// Airlock reads repository metadata before every launch and before every unsandboxed
/// git: a nested repository's `commondir`, `config`, `HEAD` and `index`, an included
/// config file, a `.git` pointer. The next sandboxed `airlock exec` (the nested-repository
/// scan) and the review of an allow-listed `git -C sub status` (as `exec` and `explain`
/// run it) still finish, well within a watchdog of 20 s, and the git run would stay in
/// the sandbox. (git itself blocks on such a `commondir` or `HEAD`, inside the sandbox,
/// so the review is watched through `explain`.)
#[test]
fn fifos_planted_in_repository_metadata_do_not_hang_later_launches() {
    let (dirs, _) = workspace();
    let rules = any_git_rules(&dirs);
    let subs = [
        "commondir",
        "config",
        "head",
        "index",
        "include",
        "zero",
        "pointer",
    ];
    plant(
        &dirs,
        "for s in commondir config head index include zero; do \
           mkdir -p $s/.git/objects $s/.git/refs && echo 'ref: refs/heads/main' > $s/.git/HEAD; done && \
         mkfifo commondir/.git/commondir config/.git/config index/.git/index include/.git/inc && \
         rm head/.git/HEAD && mkfifo head/.git/HEAD && \
         printf '[include]\\n\\tpath = inc\\n' > include/.git/config && \
         ln -s /dev/zero zero/.git/config && \
         mkdir pointer admin && mkfifo admin/commondir && echo 'gitdir: ../admin' > pointer/.git",
    );
    let within = |args: &[&str]| -> Output {
        let mut child = Command::new(airlock_bin())
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(&dirs.ws)
            .env("AIRLOCK_HOME", &dirs.home)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`airlock {args:?}` hung on a planted FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        child.wait_with_output().unwrap()
    };
    // The next sandboxed launch scans the nested repositories.
    let out = within(&["exec", "-a", "never", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The review of an allow-listed git, in this session and in one whose profile no
    // longer lets the sandbox write there (so every file is read, not just judged
    // writable).
    for profile in [":workspace", ":read-only"] {
        for sub in subs {
            let out = within(&[
                "explain", "-P", profile, "-r", &rules, "-a", "never", "--", "git", "-C", sub,
                "status",
            ]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains("never runs outside the sandbox: "),
                "{profile} {sub}: {text}{}",
                stderr(&out)
            );
        }
    }
}

/// Allow-listed git runs outside the sandbox pinned to the reviewed repository
/// (`GIT_DIR`/`GIT_WORK_TREE`); what the user sees is what git shows without the pin:
/// status, diff and log from a subdirectory, with `-C`, in a linked worktree, in a
/// superproject with a modified submodule and inside the submodule.
#[test]
fn allow_listed_git_outside_the_sandbox_behaves_as_before() {
    let (dirs, _) = workspace();
    let rules = any_git_rules(&dirs);
    let ws = &dirs.ws;
    std::fs::create_dir_all(ws.join("sub/deep")).unwrap();
    std::fs::write(ws.join("sub/deep/f"), "one\n").unwrap();
    std::fs::write(ws.join("top"), "top\n").unwrap();
    let upstream = dirs.outside_path().join("upstream");
    host_git_ok(dirs.outside_path(), &["init", "-q", "upstream"]);
    host_git_ok(&upstream, &["commit", "-q", "--allow-empty", "-m", "u"]);
    host_git_ok(
        ws,
        &["submodule", "-q", "add", upstream.to_str().unwrap(), "lib"],
    );
    host_git_ok(ws, &["add", "."]);
    host_git_ok(ws, &["commit", "-qm", "files"]);
    host_git_ok(ws, &["worktree", "add", "-q", "wt"]);
    std::fs::write(ws.join("sub/deep/f"), "two\n").unwrap();
    std::fs::write(ws.join("sub/new"), "x\n").unwrap();
    std::fs::write(ws.join("wt/top"), "changed\n").unwrap();
    std::fs::write(ws.join("lib/untracked"), "x\n").unwrap();
    for (dir, args) in [
        ("sub/deep", &["status", "--porcelain"][..]),
        ("sub/deep", &["diff", "--stat"]),
        ("sub/deep", &["log", "--format=%s"]),
        ("sub/deep", &["ls-files"]),
        (".", &["-C", "sub", "status", "--porcelain"]),
        (".", &["status", "--porcelain"]),
        ("wt", &["status", "--porcelain"]),
        ("wt", &["rev-parse", "--show-toplevel", "--show-prefix"]),
        ("lib", &["status", "--porcelain"]),
    ] {
        let cwd = ws.join(dir);
        let host = host_git(&cwd, args);
        let mut command = vec!["exec", "-v", "-r", &rules, "-a", "never", "--", "git"];
        command.extend_from_slice(args);
        let via = Command::new(airlock_bin())
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(&command)
            .current_dir(&cwd)
            .env("AIRLOCK_HOME", &dirs.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&via.stdout),
            String::from_utf8_lossy(&host.stdout),
            "git {args:?} in {dir}: {}",
            stderr(&via)
        );
        assert_eq!(
            via.status.code(),
            host.status.code(),
            "git {args:?} in {dir}"
        );
        let last = dirs.audit().last().unwrap().clone();
        assert_eq!(last["attempts"][0]["sandbox"], "none", "{args:?}: {last}");
        assert!(
            stderr(&via).contains("git pinned to the reviewed repository: GIT_DIR="),
            "{}",
            stderr(&via)
        );
    }
}

/// Rules allowing every git command and `cd`.
fn any_git_rules(dirs: &Dirs) -> String {
    dirs.rules(
        "any-git.rules",
        "prefix_rule(pattern=[\"git\"], decision=\"allow\")\nprefix_rule(pattern=[\"cd\"], decision=\"allow\")\n",
    )
    .display()
    .to_string()
}

/// The review reads the repository *before* the unsandboxed git starts, and a sandboxed
/// command running at the same time (another tool call of the same agent) can put a
/// planted `sub/.git` in place between the two. Here a confined loop moves a planted git
/// directory in and out of `sub/.git` while the allow-listed `git -C sub status` runs
/// repeatedly; whenever the review sees no `sub/.git` (the workspace's safe `.git` is
/// used), git must not see the planted one either. Closed by running the reviewed git
/// pinned to the reviewed repository (`GIT_DIR` and `GIT_WORK_TREE` of the workspace's
/// `.git`, whose contents the sandbox cannot change): git does no discovery of its own.
/// Without the pin the planted fsmonitor runs within the first few attempts.
#[test]
fn a_repository_swapped_in_after_the_review_is_not_used() {
    let (dirs, rules) = workspace();
    let marker = dirs.outside_path_str("race-ran");
    plant(
        &dirs,
        &format!(
            "mkdir sub && git init -q --bare planted && git --git-dir=planted config core.bare false && \
             git --git-dir=planted config core.worktree \"$PWD/sub\" && \
             git --git-dir=planted config core.fsmonitor 'touch {marker}'"
        ),
    );
    let mut flipper = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["sandbox", "-P", ":workspace", "--", "sh", "-c"])
        .arg("while :; do mv planted sub/.git; mv sub/.git planted; done")
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut attempts = 0;
    while attempts < 150 && std::time::Instant::now() < deadline {
        attempts += 1;
        let _ = Command::new(airlock_bin())
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args([
                "exec", "-r", &rules, "-a", "never", "--", "git", "-C", "sub", "status",
            ])
            .current_dir(&dirs.ws)
            .env("AIRLOCK_HOME", &dirs.home)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        if exists(&marker) {
            break;
        }
    }
    let _ = flipper.kill();
    let _ = flipper.wait();
    assert!(
        !exists(&marker),
        "the planted fsmonitor ran on the host after a swap (attempt {attempts})"
    );
    // The control: without the pin, git in `sub` with the planted `.git` runs it.
    let _ = std::fs::rename(dirs.ws.join("planted"), dirs.ws.join("sub/.git"));
    let _ = host_git(&dirs.ws.join("sub"), &["status"]);
    assert!(
        exists(&marker),
        "control: the planted repository did not work"
    );
}
