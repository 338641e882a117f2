//! Unit tests of the root judge.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::symlink;

use super::*;
use crate::builtins::built_in_profile;
use crate::materialize::materialize_project_roots_with_workspace_roots;
use crate::queries::FileSystemPolicyQueries;
use crate::runtime::file_system_sandbox_policy;
use airlock_protocol::FileSystemSandboxEntry;

/// `:workspace` at `ws` plus `extra` entries, without `/tmp` (the checkout, and so these
/// directories, may lie under it).
fn policy(ws: &Path, extra: &[(&Path, FileSystemAccessMode)]) -> FileSystemSandboxPolicy {
    let profile = built_in_profile(":workspace").unwrap();
    let mut policy = file_system_sandbox_policy(&materialize_project_roots_with_workspace_roots(
        &profile,
        &[ws.to_path_buf()],
    ));
    policy.entries.retain(|e| {
        !matches!(
            &e.path,
            FileSystemPath::Special {
                value: FileSystemSpecialPath::SlashTmp
            }
        )
    });
    for (path, access) in extra {
        policy.entries.push(FileSystemSandboxEntry {
            path: FileSystemPath::Path {
                path: path.to_path_buf(),
            },
            access: *access,
            missing_path_behavior: None,
        });
    }
    policy
}

fn base() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("airlock-judge-")
        .tempdir_in(env!("CARGO_MANIFEST_DIR"))
        .unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

fn roots(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> Vec<PathBuf> {
    policy
        .get_writable_roots(ctx)
        .into_iter()
        .map(|r| r.root)
        .collect()
}

#[test]
fn a_tmpdir_inside_protected_metadata_or_a_denied_path_is_refused() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join("vendor/lib/.git")).unwrap();
    let secret = base.join("secret");
    std::fs::create_dir_all(secret.join("sub")).unwrap();
    let deny = [(secret.as_path(), FileSystemAccessMode::Deny)];
    for (tmpdir, extra, reason) in [
        (ws.join(".git"), &[][..], "protected metadata"),
        (ws.join(".git/hooks"), &[][..], "protected metadata"),
        (ws.join("vendor/lib/.git"), &[][..], "protected metadata"),
        (secret.join("sub"), &deny[..], "which the profile denies"),
    ] {
        let policy = policy(&ws, extra);
        let ctx = ResolveContext::with_tmpdir(&ws, Some(tmpdir.clone()));
        assert!(!roots(&policy, &ctx).contains(&tmpdir), "{tmpdir:?}");
        let refused = policy.get_refused_writable_roots(&ctx);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].from_tmpdir);
        assert!(refused[0].reason.contains(reason), "{}", refused[0].reason);
        assert!(refused[0].to_string().starts_with("ignoring TMPDIR="));
        // `.git` keeps its carve-out under the workspace root.
        let ws_root = policy
            .get_writable_roots(&ctx)
            .into_iter()
            .find(|r| r.root == ws)
            .unwrap();
        assert!(ws_root.read_only_subpaths.contains(&ws.join(".git")));
    }
    // An ordinary TMPDIR stays a writable root.
    let tmp = base.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let policy = policy(&ws, &[]);
    let ctx = ResolveContext::with_tmpdir(&ws, Some(tmp.clone()));
    assert!(roots(&policy, &ctx).contains(&tmp));
    assert!(policy.get_refused_writable_roots(&ctx).is_empty());
}

/// A git directory that is not named `.git` (`gitdir: ./.bare`) is judged by the
/// carve-outs of the root that holds its pointer.
#[test]
fn a_tmpdir_in_a_pointed_to_git_directory_is_refused() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    let bare = ws.join(".bare");
    for dir in ["hooks", "objects", "refs"] {
        std::fs::create_dir_all(bare.join(dir)).unwrap();
    }
    std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(bare.join("config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(ws.join(".git"), "gitdir: ./.bare\n").unwrap();
    let policy = policy(&ws, &[]);
    for tmpdir in [bare.clone(), bare.join("hooks")] {
        let ctx = ResolveContext::with_tmpdir(&ws, Some(tmpdir.clone()));
        assert!(!roots(&policy, &ctx).contains(&tmpdir), "{tmpdir:?}");
        let refused = policy.get_refused_writable_roots(&ctx);
        assert!(
            refused[0]
                .reason
                .contains("protected (read-only) under the writable root"),
            "{refused:?}"
        );
        let ws_root = policy
            .get_writable_roots(&ctx)
            .into_iter()
            .find(|r| r.root == ws)
            .unwrap();
        assert!(ws_root.read_only_subpaths.contains(&bare), "{ws_root:?}");
    }
}

#[test]
fn a_tmpdir_spelling_the_filesystem_root_is_never_a_root() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let link = base.join("to-root");
    symlink("/", &link).unwrap();
    let policy = policy(&ws, &[]);
    for tmpdir in [PathBuf::from("/"), PathBuf::from("/tmp/.."), link] {
        let ctx = ResolveContext::with_tmpdir(&ws, Some(tmpdir.clone()));
        let all = roots(&policy, &ctx);
        assert!(
            !all.iter()
                .any(|r| canonical_or_lexical(r).parent().is_none()),
            "{tmpdir:?}: {all:?}"
        );
    }
}

#[test]
fn protected_homes_are_read_only_and_roots_inside_them_refused() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    let home = ws.join("sub/airlock-home");
    std::fs::create_dir_all(&home).unwrap();
    let missing = ws.join("codex-home");
    let policy = policy(&ws, &[]);
    let ctx = ResolveContext::with_tmpdir(&ws, None)
        .with_protected_homes(vec![home.clone(), missing.clone()]);
    let root = policy.get_writable_roots(&ctx);
    let ws_root = root.iter().find(|r| r.root == ws).unwrap();
    assert!(ws_root.read_only_subpaths.contains(&home));
    assert!(ws_root.read_only_subpaths.contains(&missing));
    // The workspace inside a home: refused whatever the entry.
    let inner = home.join("project");
    std::fs::create_dir(&inner).unwrap();
    let policy = policy_at(&inner);
    let ctx = ResolveContext::with_tmpdir(&inner, None).with_protected_homes(vec![home.clone()]);
    assert!(!roots(&policy, &ctx).contains(&inner));
    let refused = policy.get_refused_writable_roots(&ctx);
    assert!(
        refused[0].reason.contains("always read-only"),
        "{refused:?}"
    );
    assert!(!refused[0].from_tmpdir);
}

fn policy_at(ws: &Path) -> FileSystemSandboxPolicy {
    policy(ws, &[])
}

#[test]
fn symlinked_roots_are_judged_by_their_targets() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("vendor/real")).unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let outside = base.join("outside");
    std::fs::create_dir_all(outside.join("target")).unwrap();
    // Planted by a command: into an outside directory, into `.git`, into the workspace.
    let to_outside = ws.join("vendor/out");
    symlink(outside.join("target"), &to_outside).unwrap();
    let to_git = ws.join("vendor/git");
    symlink("../.git", &to_git).unwrap();
    let to_inside = ws.join("vendor/in");
    symlink("real", &to_inside).unwrap();
    let write = FileSystemAccessMode::Write;
    let planted = policy(
        &ws,
        &[(&to_outside, write), (&to_git, write), (&to_inside, write)],
    );
    let ctx = ResolveContext::with_tmpdir(&ws, None);
    let all = roots(&planted, &ctx);
    assert!(all.contains(&to_inside), "{all:?}");
    assert!(
        !all.contains(&to_outside) && !all.contains(&to_git),
        "{all:?}"
    );
    let refused = planted.get_refused_writable_roots(&ctx);
    let reason = |root: &Path| {
        refused
            .iter()
            .find(|r| r.root == root)
            .map(|r| r.reason.clone())
            .unwrap()
    };
    assert!(reason(&to_outside).contains("could have made it"));
    assert!(reason(&to_git).contains("protected metadata"));

    // The host's own symlink (outside every writable root): a `:root = read` entry
    // covers the spelling too, so the write entry wins; an entry naming the target
    // read-only does not cover the spelling, so it is kept read-only.
    let host_link = base.join("host-link");
    symlink(outside.join("target"), &host_link).unwrap();
    let trusted = policy(&ws, &[(&host_link, write)]);
    assert!(roots(&trusted, &ctx).contains(&host_link));
    let read = FileSystemAccessMode::Read;
    let target = outside.join("target");
    let narrowed = policy(&ws, &[(&host_link, write), (&target, read)]);
    assert!(!roots(&narrowed, &ctx).contains(&host_link));
    let refused = narrowed.get_refused_writable_roots(&ctx);
    assert!(refused[0].reason.contains("read-only"), "{refused:?}");
}

/// Within one resolution memo (one launch's plan) the judgement is made once for each
/// policy and context: a later question with the same ones gets the same answer, one with
/// another context or policy is judged for itself, and the next memo (the next launch)
/// judges again from the file system as it is then.
#[test]
fn one_plan_judges_each_policy_and_context_once() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join(".bare")).unwrap();
    std::fs::create_dir_all(ws.join(".other")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: ./.bare\n").unwrap();
    let (tmp_a, tmp_b) = (base.join("tmp-a"), base.join("tmp-b"));
    std::fs::create_dir_all(&tmp_a).unwrap();
    std::fs::create_dir_all(&tmp_b).unwrap();
    let plain = policy(&ws, &[]);
    let denying = policy(&ws, &[(tmp_a.as_path(), FileSystemAccessMode::Deny)]);
    let ctx_a = ResolveContext::with_tmpdir(&ws, Some(tmp_a.clone()));
    let ctx_b = ResolveContext::with_tmpdir(&ws, Some(tmp_b.clone()));
    let carved = |ctx: &ResolveContext| {
        plain
            .get_writable_roots(ctx)
            .into_iter()
            .find(|r| r.root == ws)
            .unwrap()
            .read_only_subpaths
    };
    {
        let _memo = crate::resolution_memo::ResolutionMemo::begin();
        assert!(carved(&ctx_a).contains(&ws.join(".bare")));
        std::fs::write(ws.join(".git"), "gitdir: ./.other\n").unwrap();
        // The same question: the plan's answer.
        assert!(carved(&ctx_a).contains(&ws.join(".bare")));
        // Another context or policy: judged for itself.
        assert!(roots(&plain, &ctx_a).contains(&tmp_a));
        assert!(roots(&plain, &ctx_b).contains(&tmp_b));
        assert!(!roots(&plain, &ctx_b).contains(&tmp_a));
        assert!(!roots(&denying, &ctx_a).contains(&tmp_a));
    }
    // The next plan sees the pointer as it is now.
    let now = carved(&ctx_a);
    assert!(
        now.contains(&ws.join(".other")) && !now.contains(&ws.join(".bare")),
        "{now:?}"
    );
}
