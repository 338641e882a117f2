#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use airlock_protocol::{FileSystemAccessMode, FileSystemSandboxEntry, FileSystemSandboxKind};

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// A policy writing only `root` (its `.git` protected, as every writable root's).
fn writing(root: &Path) -> FileSystemSandboxPolicy {
    FileSystemSandboxPolicy {
        kind: FileSystemSandboxKind::Restricted,
        glob_scan_max_depth: None,
        entries: vec![
            FileSystemSandboxEntry::path("/", FileSystemAccessMode::Read),
            FileSystemSandboxEntry::path(root, FileSystemAccessMode::Write),
        ],
    }
}

fn review(words: &[&str], cwd: &Path, policy: &FileSystemSandboxPolicy) -> UnsandboxedReview {
    let parsed = airlock_shell::parse_command(&argv(words)).unwrap();
    let env = BTreeMap::new();
    review_command(
        &parsed,
        &ReviewContext {
            cwd,
            env: &env,
            fs_policy: policy,
            pins_git: true,
        },
    )
}

fn git_init(dir: &Path) {
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn nested_repositories_in_writable_roots_are_refused_and_cd_is_tracked() {
    let ws = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(ws.path()).unwrap();
    git_init(&ws);
    git_init(&ws.join("sub"));
    // `cd sub/link/..` is `sub` for the shell, `/` for the kernel.
    std::os::unix::fs::symlink("/usr", ws.join("sub/link")).unwrap();
    let policy = writing(&ws);
    assert_eq!(review(&["git", "status"], &ws, &policy).refused, None);
    for command in [
        &["git", "-C", "sub", "status"][..],
        &["bash", "-lc", "cd sub && git status"],
        &["bash", "-lc", "cd \"$X\" && git status"],
        &["bash", "-lc", "cd sub/link/.. && git status"],
        &["env", "-C", "sub", "git", "status"],
        &["env", "GIT_DIR=sub/.git", "git", "status"],
        &[
            "find", ".", "-name", "sub", "-execdir", "git", "status", ";",
        ],
        &[
            "find", ".", "-name", "sub", "-exec", "git", "-C", "{}", "status", ";",
        ],
    ] {
        let found = review(command, &ws, &policy);
        assert!(found.refused.is_some(), "{command:?}");
    }
    assert!(
        review(&["git", "-C", "sub", "status"], &ws, &policy)
            .refused
            .unwrap()
            .contains("sub/.git is writable")
    );
}

#[test]
fn git_runs_are_pinned_to_the_one_repository_reviewed() {
    let ws = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(ws.path()).unwrap();
    git_init(&ws.join("a"));
    git_init(&ws.join("b"));
    std::fs::create_dir_all(ws.join("a/sub")).unwrap();
    // Nothing the sandbox can write here: only the pin is at stake.
    let policy = writing(Path::new("/nonexistent-root"));
    let expected: BTreeMap<String, String> = [
        (
            "GIT_DIR".to_owned(),
            ws.join("a/.git").display().to_string(),
        ),
        (
            "GIT_WORK_TREE".to_owned(),
            ws.join("a").display().to_string(),
        ),
    ]
    .into();
    for command in [
        &["git", "status"][..],
        &["bash", "-lc", "cd sub && git status"],
        &["bash", "-lc", "git log | head -1"],
    ] {
        let found = review(command, &ws.join("a"), &policy);
        assert_eq!(found.refused, None, "{command:?}");
        assert_eq!(found.git_env, expected, "{command:?}");
    }
    let found = review(&["git", "-C", "../b", "log"], &ws.join("a"), &policy);
    assert_eq!(found.refused, None, "{found:?}");
    assert_eq!(
        found.git_env.get("GIT_DIR"),
        Some(&ws.join("b/.git").display().to_string())
    );
    // No repository: git is kept from finding one planted meanwhile.
    std::fs::create_dir_all(ws.join("plain")).unwrap();
    let mut env = BTreeMap::new();
    env.insert(
        "GIT_CEILING_DIRECTORIES".to_owned(),
        ws.display().to_string(),
    );
    let parsed = airlock_shell::parse_command(&argv(&["git", "status"])).unwrap();
    let found = review_command(
        &parsed,
        &ReviewContext {
            cwd: &ws.join("plain"),
            env: &env,
            fs_policy: &policy,
            pins_git: true,
        },
    );
    assert_eq!(
        found.git_env.get("GIT_DIR").map(String::as_str),
        Some("/dev/null")
    );
    // `git clone` is not pinned; one pin cannot serve two repositories, a clone, or
    // a build tool that runs git itself.
    let found = review(&["git", "clone", "a", "c"], &ws, &policy);
    assert!(found.refused.is_none() && found.git_env.is_empty());
    for (command, why) in [
        (
            "git -C a status && git -C b status",
            "different repositories",
        ),
        (
            "git -C a pull && git clone a c",
            "cannot run with git pinned",
        ),
        ("git -C a pull && npm install", "would inherit the pin"),
    ] {
        let found = review(&["bash", "-lc", command], &ws, &policy);
        assert!(
            found.refused.as_deref().is_some_and(|r| r.contains(why)),
            "{command}: {found:?}"
        );
    }
}

#[test]
fn mercurial_repositories_are_checked_too() {
    let ws = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::create_dir_all(ws.join("sub/.hg")).unwrap();
    let policy = writing(&ws);
    let found = review(&["hg", "status"], &ws.join("sub"), &policy);
    assert!(
        found
            .refused
            .unwrap()
            .contains("writable inside the sandbox")
    );
    let outside = writing(Path::new("/nonexistent-root"));
    assert_eq!(
        review(&["hg", "status"], &ws.join("sub"), &outside).refused,
        None
    );
    for command in [
        &["hg", "status", "--config", "hooks.pre-status=x"][..],
        &["hg", "status", "--config=extensions.x=/tmp/x.py"],
        &["hg", "log", "-Rother"],
    ] {
        assert!(
            review(command, &ws.join("sub"), &outside).refused.is_some(),
            "{command:?}"
        );
    }
    std::fs::write(
        ws.join("sub/.hg/hgrc"),
        "[hooks]
update = x
",
    )
    .unwrap();
    assert!(
        review(&["hg", "status"], &ws.join("sub"), &outside)
            .refused
            .is_some()
    );
}

#[test]
fn build_tools_get_a_note_and_config_can_turn_bypass_off() {
    let ws = tempfile::tempdir().unwrap();
    let policy = writing(ws.path());
    let found = review(&["bash", "-lc", "cargo build && make"], ws.path(), &policy);
    assert_eq!(found.notes.len(), 2, "{found:?}");
    let mut skip = airlock_protocol::ExecApprovalRequirement::Skip {
        bypass_sandbox: true,
        proposed_execpolicy_amendment: None,
    };
    let applied = apply_review(&mut skip, found.clone(), false, false);
    assert!(applied.bypass_disabled_by_config && applied.notes.is_empty());
    assert!(matches!(
        skip,
        airlock_protocol::ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            ..
        }
    ));
    let mut skip = airlock_protocol::ExecApprovalRequirement::Skip {
        bypass_sandbox: true,
        proposed_execpolicy_amendment: None,
    };
    assert_eq!(apply_review(&mut skip, found, true, false).notes.len(), 2);
}
