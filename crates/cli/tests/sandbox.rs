//! `airlock sandbox` runs real commands under the real sandbox (issue 4). Each test
//! builds its own workspace in a temporary directory and checks both what the command
//! saw inside and what landed on the host.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[path = "exec_support/outside.rs"]
mod outside;

use std::path::Path;
use std::process::{Command, Output};

use airlock_sandbox::{ExecOutput, SandboxType, is_likely_sandbox_denied};

fn airlock(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(cwd)
        .env("AIRLOCK_HOME", cwd.join(".airlock-home-unused"))
        .env("OPENAI_API_KEY", "sk-canary")
        .output()
        .unwrap()
}

fn sh(profile: &str, ws: &Path, script: &str) -> Output {
    airlock(
        &[
            "sandbox",
            "-P",
            profile,
            "-C",
            ws.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ],
        ws,
    )
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn denied(out: &Output) -> bool {
    let output = ExecOutput {
        exit_code: out.status.code().unwrap_or(1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        ..ExecOutput::default()
    };
    is_likely_sandbox_denied(SandboxType::LinuxSeccomp, &output)
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

fn git_workspace() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("airlock-sbx-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let ok = Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::write(dir.path().join("README"), "hello\n").unwrap();
    dir
}

#[test]
fn workspace_profile_allows_the_workspace_and_nothing_else() {
    let ws = git_workspace();
    let out = sh(
        ":workspace",
        ws.path(),
        "echo new > created.txt && cat README",
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("created.txt")).unwrap(),
        "new\n"
    );

    let Some(outside) = outside::outside_dir(ws.path()) else {
        return;
    };
    let target = outside.path().join("escape.txt");
    let out = sh(
        ":workspace",
        ws.path(),
        &format!("echo x > {}", target.display()),
    );
    assert!(!out.status.success());
    assert!(
        !target.exists(),
        "write outside the workspace landed on the host"
    );
    assert!(denied(&out), "{}", text(&out));
}

#[test]
fn protected_metadata_stays_read_only_and_placeholders_are_removed() {
    let ws = git_workspace();
    for target in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".codex/x",
        ".agents/x",
    ] {
        let out = sh(
            ":workspace",
            ws.path(),
            &format!("mkdir -p $(dirname {target}) 2>/dev/null; echo evil > {target}"),
        );
        assert!(!out.status.success(), "{target}: {}", text(&out));
        assert!(denied(&out), "{target}: {}", text(&out));
    }
    assert!(!ws.path().join(".git/hooks/pre-commit").exists());
    assert!(
        !ws.path().join(".codex").exists(),
        "placeholder left behind"
    );
    assert!(
        !ws.path().join(".agents").exists(),
        "placeholder left behind"
    );
}

#[test]
fn read_only_profile_writes_nothing() {
    let ws = git_workspace();
    let out = sh(":read-only", ws.path(), "touch new.txt");
    assert!(!out.status.success());
    assert!(denied(&out), "{}", text(&out));
    assert!(!ws.path().join("new.txt").exists());
}

#[test]
fn exit_status_is_the_commands() {
    let ws = git_workspace();
    assert_eq!(sh(":workspace", ws.path(), "exit 7").status.code(), Some(7));
    assert_eq!(sh(":read-only", ws.path(), "exit 0").status.code(), Some(0));
}

#[test]
fn network_is_off_unless_enabled_and_socketpairs_still_work() {
    let ws = git_workspace();
    let connect = "exec 3<>/dev/tcp/127.0.0.1/9";
    let out = airlock(
        &[
            "sandbox",
            "-P",
            ":workspace",
            "-C",
            ws.path().to_str().unwrap(),
            "--",
            "bash",
            "-c",
            connect,
        ],
        ws.path(),
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("Operation not permitted"),
        "{}",
        text(&out)
    );
    let out = sh(
        ":workspace",
        ws.path(),
        "echo $AIRLOCK_SANDBOX $CODEX_SANDBOX_NETWORK_DISABLED",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "linux 1\n");
}

#[test]
fn kernel_knobs_are_read_only_even_for_root() {
    let ws = git_workspace();
    let out = sh(
        ":workspace",
        ws.path(),
        "printf '' >> /proc/sys/kernel/core_pattern",
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
}

#[test]
fn secrets_are_not_inherited() {
    let ws = git_workspace();
    let out = sh(
        ":workspace",
        ws.path(),
        "echo \"key=${OPENAI_API_KEY:-unset}\"",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "key=unset\n");
}

#[test]
fn deny_read_paths_and_globs_are_masked() {
    let ws = git_workspace();
    std::fs::create_dir_all(ws.path().join("a/b/c")).unwrap();
    std::fs::write(ws.path().join("a/b/c/deep.env"), "SECRET=1").unwrap();
    std::fs::write(ws.path().join("private.txt"), "secret").unwrap();
    let wsp = ws.path().to_str().unwrap();
    let private = format!(
        "permissions.deny.filesystem={{\"{wsp}/private.txt\"=\"deny\", \":workspace_roots\"={{\".\"=\"write\", \"**/*.env\"=\"deny\"}}}}"
    );
    let args = [
        "sandbox",
        "-c",
        "permissions.deny.extends=\":workspace\"",
        "-c",
        private.as_str(),
        "-P",
        "deny",
        "-C",
        wsp,
        "--",
        "sh",
        "-c",
        "cat private.txt; cat a/b/c/deep.env; cat README",
    ];
    let out = airlock(&args, ws.path());
    let all = text(&out);
    assert!(
        !all.contains("secret") && !all.contains("SECRET=1"),
        "{all}"
    );
    assert!(all.contains("Permission denied"), "{all}");
    assert!(all.contains("hello"), "{all}");
}

#[test]
fn missing_bubblewrap_fails_before_running_anything() {
    let ws = git_workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "sandbox",
            "-c",
            "sandbox.bwrap_path=\"/nonexistent/bwrap\"",
            "-P",
            ":workspace",
            "-C",
            ws.path().to_str().unwrap(),
            "--",
            "/bin/touch",
            "ran.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out).contains("apt-get install bubblewrap"),
        "{}",
        text(&out)
    );
    assert!(!ws.path().join("ran.txt").exists());
}

#[test]
fn legacy_landlock_refuses_what_it_cannot_express() {
    let ws = git_workspace();
    let wsp = ws.path().to_str().unwrap();
    let out = airlock(
        &[
            "sandbox",
            "--use-legacy-landlock",
            "-P",
            ":workspace",
            "-C",
            wsp,
            "--",
            "true",
        ],
        ws.path(),
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out).contains("legacy Landlock sandbox cannot enforce this profile"),
        "{}",
        text(&out)
    );
    let out = airlock(
        &[
            "sandbox",
            "--use-legacy-landlock",
            "-P",
            ":read-only",
            "-C",
            wsp,
            "--",
            "touch",
            "x",
        ],
        ws.path(),
    );
    assert!(!out.status.success());
    assert!(!ws.path().join("x").exists());
    if is_root() {
        // Landlock cannot take a root launcher's capabilities away: refused, nothing ran.
        assert_eq!(out.status.code(), Some(125));
        assert!(text(&out).contains("holds capabilities"), "{}", text(&out));
    }
}

/// Issue 4 "real workload": everyday git and a cargo build work under `:workspace`,
/// while anything that writes repository metadata fails with a read-only error that
/// denial detection attributes to the sandbox.
#[test]
fn real_workload_git_and_cargo_under_workspace() {
    let ws = git_workspace();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(ws.path())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["add", "README"]);
    git(&["commit", "-qm", "init"]);
    std::fs::write(ws.path().join("README"), "hello\nchanged\n").unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("src/main.rs"),
        "fn main() { println!(\"built-inside\"); }\n",
    )
    .unwrap();

    let out = sh(
        ":workspace",
        ws.path(),
        "git status --short && git diff --stat && git log --oneline && \
         CARGO_HOME=$PWD/.cargo-home CARGO_TARGET_DIR=$PWD/target cargo build --offline -q && ./target/debug/small",
    );
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("README") && all.contains("init") && all.contains("built-inside"),
        "{all}"
    );

    let out = sh(
        ":workspace",
        ws.path(),
        "git -c user.email=t@example.com -c user.name=t commit -qam change",
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert!(denied(&out));
    let out = sh(
        ":workspace",
        ws.path(),
        "echo 'echo pwned' > .git/hooks/post-checkout",
    );
    assert!(!out.status.success());
    assert!(denied(&out), "{}", text(&out));
    assert!(!ws.path().join(".git/hooks/post-checkout").exists());
}

#[test]
fn nested_repository_metadata_is_protected() {
    let ws = git_workspace();
    let nested = ws.path().join("vendor/lib");
    std::fs::create_dir_all(&nested).unwrap();
    assert!(
        Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["init", "-q"])
            .current_dir(&nested)
            .status()
            .unwrap()
            .success()
    );
    let out = sh(
        ":workspace",
        ws.path(),
        "echo evil > vendor/lib/.git/hooks/pre-commit; echo '[core]' >> vendor/lib/.git/config",
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert!(!nested.join(".git/hooks/pre-commit").exists());
}

/// Red-team findings C1, C2, M1, M2, M3: each used to let a sandboxed command change
/// something the host later trusts, or read what it must not.
#[test]
fn airlock_project_dir_nested_git_swap_setuid_proc_masks_and_inherited_fds() {
    let ws = git_workspace();
    // C1: `.airlock/` (project rules and config) is as protected as `.codex/`.
    let out = sh(
        ":workspace",
        ws.path(),
        "mkdir -p .airlock/rules && echo 'prefix_rule([\"bash\"])' > .airlock/rules/x.rules",
    );
    assert!(!out.status.success());
    assert!(!ws.path().join(".airlock/rules/x.rules").exists());
    // C2: a nested repository's `.git` cannot be swapped for one with another config.
    let nested = ws.path().join("sub");
    std::fs::create_dir_all(&nested).unwrap();
    assert!(
        Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["init", "-q"])
            .current_dir(&nested)
            .status()
            .unwrap()
            .success()
    );
    let out = sh(":workspace", ws.path(), "mv sub/.git sub/.git.old");
    assert!(!out.status.success(), "{}", text(&out));
    assert!(nested.join(".git").is_dir() && !nested.join(".git.old").exists());
    // M1: no set-user-id files.
    let out = sh(
        ":workspace",
        ws.path(),
        "cp /bin/sh ./suid && chmod 4755 ./suid",
    );
    assert!(!out.status.success());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(ws.path().join("suid"))
            .unwrap()
            .permissions()
            .mode()
            & 0o6000,
        0
    );
    // M2: deny entries under /proc hold (masks come after the fresh /proc).
    let wsp = ws.path().to_str().unwrap();
    let args = [
        "sandbox",
        "-c",
        "permissions.p.extends=\":workspace\"",
        "-c",
        "permissions.p.filesystem={\"/proc/cpuinfo\"=\"deny\"}",
        "-P",
        "p",
        "-C",
        wsp,
        "--",
        "cat",
        "/proc/cpuinfo",
    ];
    let out = airlock(&args, ws.path());
    assert!(
        !out.status.success() && !text(&out).contains("processor"),
        "{}",
        text(&out)
    );
    // M3: descriptors the launcher inherited do not reach the command. A shell opens
    // fd 7 on a file outside the sandbox and starts airlock with it inherited.
    let outside = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
    let script = format!(
        "exec 7>>{}; exec {} sandbox -P :read-only -C {wsp} -- sh -c 'echo leaked >&7'",
        outside.path().display(),
        env!("CARGO_BIN_EXE_airlock")
    );
    let status = Command::new("sh").args(["-c", &script]).status().unwrap();
    assert!(!status.success());
    assert_eq!(std::fs::read_to_string(outside.path()).unwrap(), "");
}

/// New-user findings: a dry run never runs anything, a missing command is 127 (not a
/// confusing bwrap error), and the user's own empty protected directories survive.
#[test]
fn dry_run_missing_command_and_user_directories() {
    let ws = git_workspace();
    let wsp = ws.path().to_str().unwrap();
    let marker = ws.path().join("ran");
    let script = format!("touch {}", marker.display());
    for profile in [":danger-full-access", ":workspace"] {
        let out = airlock(
            &[
                "sandbox",
                "--dry-run",
                "-P",
                profile,
                "-C",
                wsp,
                "--",
                "sh",
                "-c",
                &script,
            ],
            ws.path(),
        );
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            !marker.exists(),
            "--dry-run ran the command under {profile}"
        );
    }
    let out = airlock(
        &["sandbox", "-C", wsp, "--", "no-such-command-xyz"],
        ws.path(),
    );
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out).contains("command not found: no-such-command-xyz"));
    std::fs::create_dir(ws.path().join(".codex")).unwrap();
    for _ in 0..2 {
        assert!(sh(":workspace", ws.path(), "true").status.success());
    }
    assert!(
        ws.path().join(".codex").is_dir(),
        "the user's empty .codex was removed"
    );
    assert!(!ws.path().join(".aws").exists(), "placeholder left behind");
}

/// `--dry-run --save-fds DIR` prints a line that runs exactly what Airlock would:
/// run by a shell, it confines the command the same way (seccomp included).
/// `:read-only` has no writable roots, so the by-hand run leaves no placeholder
/// directories behind (nothing would remove them).
#[test]
fn dry_run_with_saved_descriptors_reproduces_the_launch() {
    let ws = git_workspace();
    let wsp = ws.path().to_str().unwrap();
    let fds = tempfile::tempdir().unwrap();
    let outside = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
    // Writes fail (mounts); a TCP socket fails (seccomp, network off).
    let script = format!(
        "echo x > {} 2>/dev/null && echo WROTE; python3 -c 'import socket; socket.socket()' 2>/dev/null && echo SOCKET; echo inside > in.txt 2>/dev/null || echo RAN",
        outside.path().display()
    );
    let out = airlock(
        &[
            "sandbox",
            "--dry-run",
            "--save-fds",
            fds.path().to_str().unwrap(),
            "-P",
            ":read-only",
            "-C",
            wsp,
            "--",
            "sh",
            "-c",
            &script,
        ],
        ws.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let line = String::from_utf8(out.stdout).unwrap();
    let programs: Vec<_> = std::fs::read_dir(fds.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(programs.len(), 3, "{line}");
    for program in &programs {
        let name = program.file_name().unwrap().to_str().unwrap().to_owned();
        let size = std::fs::metadata(program).unwrap().len();
        assert!(size > 0 && size % 8 == 0, "{name}: {size} bytes");
        assert!(line.contains(&format!("<{}", program.display())), "{line}");
    }
    assert!(
        !ws.path().join("in.txt").exists(),
        "--dry-run ran the command"
    );
    let run = Command::new("bash")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("-c")
        .arg(line.trim())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(!stdout.contains("WROTE"), "{stdout}");
    assert!(!stdout.contains("SOCKET"), "{stdout}");
    assert!(stdout.contains("RAN"), "{stdout}");
    assert!(!ws.path().join("in.txt").exists());
    assert_eq!(std::fs::read_to_string(outside.path()).unwrap(), "");
}

/// Issue 11 item 7: a repository nested far below the workspace (no depth limit) keeps a
/// read-only `.git`, and one under `/tmp` (a writable root that used to be skipped) too.
#[test]
fn deeply_nested_and_tmp_repositories_keep_a_read_only_git() {
    let ws = git_workspace();
    let deep = (0..9).fold(ws.path().to_path_buf(), |p, i| p.join(format!("level{i}")));
    std::fs::create_dir_all(&deep).unwrap();
    let in_tmp = tempfile::Builder::new()
        .prefix("airlock-sbx-tmp-repo-")
        .tempdir_in("/tmp")
        .unwrap();
    for repo in [deep.as_path(), in_tmp.path()] {
        let ok = Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["init", "-q"])
            .current_dir(repo)
            .status()
            .unwrap();
        assert!(ok.success());
    }
    for repo in [deep.as_path(), in_tmp.path()] {
        let hook = repo.join(".git/hooks/pre-commit");
        let script = format!(
            "echo evil > '{}'; echo '[core] fsmonitor = evil' >> '{}/.git/config'",
            hook.display(),
            repo.display()
        );
        let out = sh(":workspace", ws.path(), &script);
        assert!(!out.status.success(), "{}", text(&out));
        assert!(
            text(&out).contains("Read-only file system"),
            "{repo:?}: {}",
            text(&out)
        );
        assert!(!hook.exists());
        let config = std::fs::read_to_string(repo.join(".git/config")).unwrap();
        assert!(!config.contains("evil"), "{config}");
    }
    // The working tree around them stays writable.
    let out = sh(
        ":workspace",
        ws.path(),
        &format!("touch '{}/file'", deep.display()),
    );
    assert!(out.status.success(), "{}", text(&out));
}

/// Issue 11 item 7: a profile that makes `/` writable but keeps deny entries (so it still
/// runs under bubblewrap) starts — the scan does not walk `/proc`, `/sys` or `/dev`, and
/// the system bubblewrap is not refused for lying inside the writable `/` — and its deny
/// entry holds.
#[test]
fn root_writable_profile_with_a_deny_entry_starts() {
    let ws = git_workspace();
    let secret = ws.path().join("secret.txt");
    std::fs::write(&secret, "canary\n").unwrap();
    let filesystem = format!(
        "permissions.p.filesystem={{\":root\"=\"write\", \"{}\"=\"deny\"}}",
        secret.display()
    );
    let wsp = ws.path().to_str().unwrap();
    let args = [
        "sandbox",
        "-c",
        filesystem.as_str(),
        "-P",
        "p",
        "-C",
        wsp,
        "--",
        "sh",
        "-c",
        "touch written; cat secret.txt",
    ];
    let out = airlock(&args, ws.path());
    assert!(ws.path().join("written").exists(), "{}", text(&out));
    assert!(!text(&out).contains("canary"), "{}", text(&out));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
}
