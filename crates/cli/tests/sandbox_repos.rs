//! `airlock sandbox` with repositories in and around the workspace (issues 4 and 11): real
//! git and cargo work under `:workspace`, while every nested, deep or `/tmp` repository's
//! metadata stays read-only under the real sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[path = "exec_support/outside.rs"]
mod outside;
mod sandbox_support;

use sandbox_support::{airlock, denied, git_workspace, sh, text};
use std::process::Command;

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
