#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Red-team review of issue 11 item 4: ways an allow rule's bypass of the sandbox could
//! still run something a confined command planted. Each test plants from inside the real
//! sandbox (`airlock exec -a never`, `:workspace`), then runs an allow-listed git command
//! through `airlock exec -r RULES`, asserts the planted command never ran on the host and
//! the run stayed sandboxed, and ends with the control: the same git command run directly
//! on the host does run the planted command, so the attack is real.

mod exec_support;

use std::path::Path;
use std::process::{Command, Output};

use exec_support::{Dirs, airlock_bin, exists, stderr};

/// Rules allowing the git commands the attacks use, plus `cd`.
const RULES: &str = "prefix_rule(pattern=[\"git\", \"status\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"-C\", \"sub\", \"status\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"fetch\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"clone\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"log\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"push\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"git\", \"commit\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"cd\"], decision=\"allow\")\n";

/// Host git in `dir` with no global or system config.
fn host_git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

fn host_git_ok(dir: &Path, args: &[&str]) {
    let out = host_git(dir, args);
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

/// A workspace that is a git repository with one commit, and the rules file.
fn workspace() -> (Dirs, String) {
    let dirs = Dirs::new();
    dirs.config("");
    host_git_ok(&dirs.ws, &["init", "-q"]);
    host_git_ok(&dirs.ws, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let rules = dirs.rules("git.rules", RULES).display().to_string();
    (dirs, rules)
}

/// Runs `script` inside the sandbox (it must succeed).
fn plant(dirs: &Dirs, script: &str) {
    let out = dirs.exec(&["-a", "never", "--", "sh", "-c", script]);
    assert_eq!(out.status.code(), Some(0), "plant: {}", stderr(&out));
}

/// The allow-listed `command` through `airlock exec -v -r RULES` with `env` added; asserts
/// it stayed in the sandbox, that `-v` says why (`why` in the reason) and that `marker`
/// does not exist.
fn assert_kept_in_sandbox(
    dirs: &Dirs,
    rules: &str,
    command: &[&str],
    env: &[(&str, &str)],
    marker: &str,
    why: &str,
) {
    let mut run = Command::new(airlock_bin());
    run.args(["exec", "-v", "-r", rules, "-a", "never", "--"])
        .args(command)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        // cargo's own search path for the test (the target directory, writable when the
        // checkout is under /tmp) would be a reason of its own to stay in the sandbox.
        .env_remove("LD_LIBRARY_PATH")
        .stdin(std::process::Stdio::null());
    for (key, value) in env {
        run.env(key, value);
    }
    let out = run.output().unwrap();
    assert!(
        !exists(marker),
        "{command:?}: the planted command ran on the host"
    );
    let text = stderr(&out);
    assert!(
        text.contains("kept in the sandbox: ") && text.contains(why),
        "{command:?}: -v says why ({why}): {text}"
    );
    let last = dirs.audit().last().unwrap().clone();
    assert_eq!(last["attempts"][0]["sandbox"], "linuxSeccomp", "{last}");
}

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

/// Issue 11: when `$HOME` lies inside a writable root (the agent started in `~`, so the
/// workspace *is* `$HOME`; `$HOME` deeper inside the workspace; or `HOME` under `/tmp` as in
/// many containers), a confined command must not plant anything that runs on the host later:
/// appending to `~/.bashrc`, creating `~/.bash_profile` or `~/.gitconfig`, writing
/// `~/.ssh/config` (`ProxyCommand`), `~/.local/bin/x` or `~/.config/git/config`, and
/// removing or renaming the protected entries (or `$HOME` itself) all fail, the host's files
/// are untouched and nothing is left behind — while the user's other files in `$HOME` stay
/// writable. Inside the sandbox the stand-ins have the expected type: a login `bash` and `git`
/// run without complaints about them.
#[test]
fn startup_files_of_a_home_inside_a_writable_root_stay_read_only() {
    let dirs = Dirs::new();
    // The agent started in `~`.
    let home = dirs.ws.join("home");
    attack_home(&dirs, &home, &home, SANDBOX);
    // `$HOME` deeper inside the workspace, through `airlock exec` (the helper then runs
    // with the command's environment and learns the launcher's `$HOME` from its arguments).
    let nested = dirs.ws.join("users/me");
    attack_home(&dirs, &nested, &dirs.ws, EXEC);
    // `HOME` under `/tmp` (a container): writable through `:slash_tmp`.
    if Path::new("/tmp").is_dir() {
        let tmp_home = tempfile::Builder::new()
            .prefix("airlock-home-")
            .tempdir_in("/tmp")
            .unwrap();
        attack_home(
            &dirs,
            &tmp_home.path().canonicalize().unwrap(),
            &dirs.ws,
            SANDBOX,
        );
    }
}

/// `airlock sandbox` with the default profile.
const SANDBOX: &[&str] = &["sandbox", "-P", ":workspace", "--"];
/// `airlock exec`, never asking (the command runs in the sandbox or not at all).
const EXEC: &[&str] = &["exec", "-a", "never", "--"];

/// The attacks of [`startup_files_of_a_home_inside_a_writable_root_stay_read_only`] with
/// `HOME=home`, from `cwd` (the workspace), run through `airlock VIA sh -c SCRIPT`.
fn attack_home(dirs: &Dirs, home: &Path, cwd: &Path, via: &[&str]) {
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".config")).unwrap();
    std::fs::write(home.join(".bashrc"), "# user's\n").unwrap();
    std::fs::write(home.join(".ssh/known_hosts"), "# user's\n").unwrap();
    std::fs::write(home.join("notes.txt"), "before\n").unwrap();
    let before = listing(home);
    let marker = dirs.outside_path_str("home-planted");
    let script = format!(
        r#"m='{marker}'
echo "touch $m" >> "$HOME/.bashrc" && echo 'wrote .bashrc'
echo "touch $m" > "$HOME/.bash_profile" && echo 'wrote .bash_profile'
printf '[core]\n\tfsmonitor = touch %s\n' "$m" > "$HOME/.gitconfig" && echo 'wrote .gitconfig'
printf 'Host *\n  ProxyCommand touch %s\n' "$m" > "$HOME/.ssh/config" && echo 'wrote .ssh/config'
mkdir -p "$HOME/.local/bin" && printf '#!/bin/sh\ntouch %s\n' "$m" > "$HOME/.local/bin/x" && echo 'wrote .local/bin/x'
mkdir -p "$HOME/.config/git" && printf '[core]\n\tfsmonitor = touch %s\n' "$m" > "$HOME/.config/git/config" && echo 'wrote .config/git/config'
rm "$HOME/.bashrc" 2>/dev/null; rm -r "$HOME/.ssh" 2>/dev/null; mv "$HOME/.config" "$HOME/config-moved" 2>/dev/null && echo 'moved .config'
mv "$HOME" "$HOME.moved" 2>/dev/null && mkdir -p "$HOME" && echo "touch $m" > "$HOME/.bashrc" && echo 'replaced $HOME'
bash -lc true 2>&1 | sed 's/^/login bash: /'
git config --global --get core.fsmonitor 2>&1 | sed 's/^/git: /'
echo after > "$HOME/notes.txt" && mkdir -p "$HOME/project" && echo x > "$HOME/project/main.c" && echo 'wrote own files'
true
"#
    );
    let out = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(via)
        .args(["sh", "-c", &script])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .env("AIRLOCK_HOME", &dirs.home)
        .env("HOME", home)
        // Airlock's own probe cache (written on the host, by the launcher) goes elsewhere,
        // so that the listing below shows only what the sandbox could have left.
        .env("XDG_CACHE_HOME", dirs.home.join("cache"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let context = format!("HOME={}: {said}{}", home.display(), stderr(&out));
    assert!(out.status.success(), "{context}");
    assert_eq!(said.trim_end(), "wrote own files", "{context}");
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# user's\n",
        "the sandbox rewrote ~/.bashrc: {context}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".ssh/known_hosts")).unwrap(),
        "# user's\n",
        "{context}"
    );
    for planted in [
        ".bash_profile",
        ".gitconfig",
        ".ssh/config",
        ".local",
        ".config/git",
        "config-moved",
    ] {
        assert!(
            !exists(home.join(planted)),
            "the sandbox created ~/{planted}: {context}"
        );
    }
    assert!(!exists(&marker), "a planted command ran: {context}");
    // Nothing left behind: the stand-ins for missing names are gone after the run, and the
    // user's own files were written.
    let mut expected = before;
    expected.push("project".into());
    expected.sort();
    assert_eq!(listing(home), expected, "{context}");
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).unwrap(),
        "after\n"
    );
    assert!(exists(home.join("project/main.c")));
    assert!(!exists(home.with_extension("moved")), "{context}");
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
