//! Resolution, writable and unreadable roots, protected metadata, the read-deny matcher and
//! materialisation (reference §5–6, spec 04).

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ReadDenyMatcher;
use airlock_permissions::ResolveContext;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::materialize_entries;
use airlock_protocol::FileSystemAccessMode::Deny;
use airlock_protocol::FileSystemAccessMode::Read;
use airlock_protocol::FileSystemAccessMode::Write;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;
use pretty_assertions::assert_eq;

use crate::support::select;

fn ctx(cwd: &Path) -> ResolveContext {
    ResolveContext::with_tmpdir(cwd, None)
}

fn root(access: airlock_protocol::FileSystemAccessMode) -> FileSystemSandboxEntry {
    FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, access)
}

#[test]
fn most_specific_wins_and_ties_prefer_deny() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root(Read),
        FileSystemSandboxEntry::path("/a", Write),
        FileSystemSandboxEntry::path("/a/b", Read),
        FileSystemSandboxEntry::path("/a/b/c", Write),
        FileSystemSandboxEntry::path("/t", Write),
        FileSystemSandboxEntry::path("/t", Deny),
    ]);
    let ctx = ctx(Path::new("/a"));
    assert_eq!(policy.resolve_access(Path::new("/etc/passwd"), &ctx), Read);
    assert_eq!(policy.resolve_access(Path::new("/a/x"), &ctx), Write);
    assert_eq!(policy.resolve_access(Path::new("/a/b/x"), &ctx), Read);
    assert_eq!(policy.resolve_access(Path::new("/a/b/c/d"), &ctx), Write);
    assert_eq!(policy.resolve_access(Path::new("/t/x"), &ctx), Deny);
    assert_eq!(
        policy.resolve_access(Path::new("x"), &ctx),
        Write,
        "relative to cwd /a"
    );
    let empty = FileSystemSandboxPolicy::restricted(Vec::new());
    assert_eq!(
        empty.resolve_access(Path::new("/a"), &ctx),
        Deny,
        "no entry means deny"
    );
}

#[test]
fn full_disk_queries() {
    let read = FileSystemSandboxPolicy::default();
    assert!(read.has_full_disk_read_access());
    assert!(!read.has_full_disk_write_access());
    let write = FileSystemSandboxPolicy::restricted(vec![
        root(Write),
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Minimal, Read),
    ]);
    assert!(write.has_full_disk_write_access());
    let narrowed = FileSystemSandboxPolicy::restricted(vec![
        root(Write),
        FileSystemSandboxEntry::path("/etc", Read),
    ]);
    assert!(!narrowed.has_full_disk_write_access());
    let shadowed = FileSystemSandboxPolicy::restricted(vec![
        root(Write),
        FileSystemSandboxEntry::path("/etc", Read),
        FileSystemSandboxEntry::path("/etc", Write),
    ]);
    assert!(shadowed.has_full_disk_write_access());
    let globbed = FileSystemSandboxPolicy::restricted(vec![
        root(Write),
        FileSystemSandboxEntry::deny_glob("/**/*.env"),
    ]);
    assert!(!globbed.has_full_disk_write_access());
    assert!(!globbed.has_full_disk_read_access());
    assert!(!globbed.unsandboxed_execution_allowed());
    assert!(FileSystemSandboxPolicy::unrestricted().has_full_disk_write_access());
    let minimal = FileSystemSandboxPolicy::restricted(vec![FileSystemSandboxEntry::special(
        FileSystemSpecialPath::Minimal,
        Read,
    )]);
    assert!(minimal.include_platform_defaults());
    assert!(!read.include_platform_defaults());
}

/// Issue 11: a linked worktree's common directory, a dangling pointer and the repository
/// above a root are read-only subpaths too; an explicit write entry for a git location wins.
#[test]
fn git_locations_and_the_repository_above_are_read_only_subpaths() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let main = base.join("main/.git");
    let admin = main.join("worktrees/wt");
    let ws = base.join("outer/wt");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    std::fs::write(ws.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
    let policy = |extra: Vec<FileSystemSandboxEntry>| {
        let mut entries = vec![
            root(Read),
            FileSystemSandboxEntry::path(&ws, Write),
            FileSystemSandboxEntry::path(&base, Write),
        ];
        entries.extend(extra);
        FileSystemSandboxPolicy::restricted(entries)
    };
    let roots = policy(Vec::new()).get_writable_roots(&ctx(&ws));
    assert_eq!(
        roots[0].read_only_subpaths,
        vec![
            ws.join(".git"),
            admin.clone(),
            main.clone(),
            ws.join(".agents"),
            ws.join(".codex"),
            ws.join(".aws"),
            ws.join(".airlock"),
            base.join("outer/.git"),
            base.join(".git"),
        ],
        "git dir, common dir, then the missing `.git` names above inside the writable base"
    );
    // The user makes the main repository writable on purpose: it stays so.
    let roots =
        policy(vec![FileSystemSandboxEntry::path(&main, Write)]).get_writable_roots(&ctx(&ws));
    assert!(!roots[0].read_only_subpaths.contains(&main));
    assert!(roots[0].read_only_subpaths.contains(&admin));
    // A dangling pointer lists its first missing component.
    std::fs::write(ws.join(".git"), "gitdir: ./.bare/x\n").unwrap();
    let roots = policy(Vec::new()).get_writable_roots(&ctx(&ws));
    assert_eq!(roots[0].read_only_subpaths[1], ws.join(".bare"));
}

#[test]
fn writable_roots_carry_metadata_and_narrower_entries() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("{error}"),
    };
    let ws = dir.path().join("ws");
    let gitdir = dir.path().join("realgit/worktrees/x");
    for path in [&ws, &gitdir] {
        if let Err(error) = std::fs::create_dir_all(path) {
            panic!("{error}");
        }
    }
    // A worktree: `.git` is a pointer file with a relative gitdir.
    if let Err(error) = std::fs::write(ws.join(".git"), "gitdir: ../realgit/worktrees/x\n") {
        panic!("{error}");
    }
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root(Read),
        FileSystemSandboxEntry::path(&ws, Write),
        FileSystemSandboxEntry::path(ws.join("docs"), Read),
        FileSystemSandboxEntry::path(ws.join(".codex"), Write),
        FileSystemSandboxEntry::path(ws.join("keys"), Deny),
    ]);
    let roots = policy.get_writable_roots(&ctx(&ws));
    assert_eq!(roots.len(), 2);
    assert_eq!(roots[0].root, ws);
    assert_eq!(
        roots[0].read_only_subpaths,
        vec![
            ws.join(".git"),
            gitdir.clone(),
            ws.join(".agents"),
            ws.join(".aws"),
            ws.join(".airlock"),
            ws.join("docs"),
            ws.join("keys"),
        ],
        "explicit `.codex` write entry overrides the carve-out; `.airlock` is always protected"
    );
    assert!(roots[0].is_path_writable(&ws.join("src/main.rs")));
    assert!(!roots[0].is_path_writable(&ws.join(".git/config")));
    assert_eq!(
        policy.get_unreadable_roots(&ctx(&ws)),
        vec![ws.join("keys")]
    );
}

#[test]
fn denied_write_root_is_not_writable() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root(Read),
        FileSystemSandboxEntry::path("/w", Write),
        FileSystemSandboxEntry::path("/w", Deny),
    ]);
    assert!(policy.get_writable_roots(&ctx(Path::new("/"))).is_empty());
}

#[test]
fn unreadable_roots_and_globs() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root(Deny),
        FileSystemSandboxEntry::path("/s", Deny),
        FileSystemSandboxEntry::path("/s", Read),
        FileSystemSandboxEntry::path("/p", Deny),
        FileSystemSandboxEntry::deny_glob("/z/*.env"),
        FileSystemSandboxEntry::deny_glob("*.key"),
        FileSystemSandboxEntry::deny_glob("/z/*.env"),
    ]);
    let cwd = Path::new("/w");
    assert_eq!(
        policy.get_unreadable_roots(&ctx(cwd)),
        vec![PathBuf::from("/s"), PathBuf::from("/p")]
    );
    assert_eq!(
        policy.get_unreadable_globs_with_cwd(cwd),
        vec!["/w/*.key".to_owned(), "/z/*.env".to_owned()]
    );
}

#[test]
fn read_deny_matcher_is_git_style_and_fails_closed() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root(Read),
        FileSystemSandboxEntry::path("/s/secret", Deny),
        FileSystemSandboxEntry::deny_glob("/w/*.env"),
        FileSystemSandboxEntry::deny_glob("/w/**/*.pem"),
        FileSystemSandboxEntry::deny_glob("/w/odd[name"),
    ]);
    let matcher = ReadDenyMatcher::new(&policy, &ctx(Path::new("/w")));
    assert!(!matcher.denies_everything());
    for denied in [
        "/s/secret",
        "/s/secret/a/b",
        "/w/.env",
        "/w/a.env",
        "/w/x/y/k.pem",
        "/w/k.pem",
        "/w/odd[name",
        "a.env",
    ] {
        assert!(matcher.is_read_denied(Path::new(denied)), "{denied}");
    }
    for allowed in ["/s/secretive", "/w/sub/a.env", "/w/readme", "/etc/hosts"] {
        assert!(!matcher.is_read_denied(Path::new(allowed)), "{allowed}");
    }
    let bad = FileSystemSandboxPolicy::restricted(vec![
        root(Read),
        FileSystemSandboxEntry::deny_glob("/w/{a"),
    ]);
    assert!(ReadDenyMatcher::try_new(&bad, &ctx(Path::new("/w"))).is_err());
    let closed = ReadDenyMatcher::new(&bad, &ctx(Path::new("/w")));
    assert!(closed.denies_everything());
    assert!(closed.is_read_denied(Path::new("/etc/hosts")));
}

#[test]
fn read_deny_matcher_sees_through_symlinks() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("{error}"),
    };
    let secret = dir.path().join("secret");
    let link = dir.path().join("link");
    if let Err(error) =
        std::fs::create_dir(&secret).and_then(|()| std::os::unix::fs::symlink(&secret, &link))
    {
        panic!("{error}");
    }
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root(Read),
        FileSystemSandboxEntry::path(&secret, Deny),
    ]);
    let matcher = ReadDenyMatcher::new(&policy, &ctx(dir.path()));
    assert!(matcher.is_read_denied(&link.join("file")));
}

#[test]
fn materialisation_order_matches_codex() {
    let pr = |sub: Option<&str>, access| {
        FileSystemSandboxEntry::special(
            FileSystemSpecialPath::ProjectRoots {
                subpath: sub.map(PathBuf::from),
            },
            access,
        )
    };
    let entries = vec![
        root(Read),
        FileSystemSandboxEntry::deny_glob("**/*.env"),
        pr(None, Write),
        FileSystemSandboxEntry::path("/z", Read),
        pr(Some("docs"), Read),
    ];
    let roots = [
        PathBuf::from("/a"),
        PathBuf::from("/b"),
        PathBuf::from("/a"),
    ];
    assert_eq!(
        materialize_entries(&entries, &roots),
        vec![
            root(Read),
            FileSystemSandboxEntry::deny_glob("/a/**/*.env"),
            FileSystemSandboxEntry::path("/a", Write),
            FileSystemSandboxEntry::path("/z", Read),
            FileSystemSandboxEntry::path("/a/docs", Read),
            FileSystemSandboxEntry::deny_glob("/b/**/*.env"),
            FileSystemSandboxEntry::path("/b", Write),
            FileSystemSandboxEntry::path("/b/docs", Read),
        ]
    );
    assert_eq!(
        materialize_entries(&entries, &[]),
        vec![root(Read), FileSystemSandboxEntry::path("/z", Read)]
    );
}

#[test]
fn materialise_then_resolve_equals_resolve_with_cwd_root() {
    let selected = select("", Some(":workspace"), "/ws");
    let symbolic = file_system_sandbox_policy(selected.symbolic());
    let concrete = file_system_sandbox_policy(&selected.materialized());
    let ctx = ctx(Path::new("/ws"));
    for path in [
        "/ws",
        "/ws/src/a.rs",
        "/ws/.git/HEAD",
        "/ws/.codex",
        "/etc",
        "/",
    ] {
        assert_eq!(
            symbolic.resolve_access(Path::new(path), &ctx),
            concrete.resolve_access(Path::new(path), &ctx),
            "{path}"
        );
    }
    assert_eq!(
        concrete.resolve_access(Path::new("/ws/.git/HEAD"), &ctx),
        Read
    );
}

#[test]
fn readable_roots_skip_denied_and_keep_writes() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Minimal, Read),
        FileSystemSandboxEntry::path("/usr", Read),
        FileSystemSandboxEntry::path("/w", Write),
        FileSystemSandboxEntry::path("/w/secret", Deny),
        FileSystemSandboxEntry::path("/usr", Read),
        FileSystemSandboxEntry::path("/opt", Deny),
    ]);
    assert_eq!(
        policy.get_readable_roots(&ctx(Path::new("/w"))),
        vec![PathBuf::from("/usr"), PathBuf::from("/w")]
    );
    let full = FileSystemSandboxPolicy::restricted(vec![
        root(Read),
        FileSystemSandboxEntry::path("/etc/ssl", Deny),
    ]);
    assert_eq!(
        full.get_readable_roots(&ctx(Path::new("/w"))),
        vec![PathBuf::from("/")]
    );
    assert!(
        FileSystemSandboxPolicy::unrestricted()
            .get_readable_roots(&ctx(Path::new("/w")))
            .is_empty()
    );
}
