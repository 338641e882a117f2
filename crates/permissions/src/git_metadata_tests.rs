#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
use super::*;

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    (dir, base)
}

#[test]
fn pointer_content_is_read_as_git_reads_it() {
    assert_eq!(parse_git_file(b"gitdir: ./.bare\n").unwrap(), "./.bare");
    assert_eq!(parse_git_file(b"gitdir: /abs/x\r\n").unwrap(), "/abs/x");
    assert_eq!(parse_git_file(b"gitdir: a b\r\n\r\n").unwrap(), "a b");
    assert_eq!(parse_git_file(b"gitdir: x\0junk\n").unwrap(), "x");
    // Only trailing newlines go: git takes the rest verbatim.
    assert_eq!(parse_git_file(b"gitdir:  x\n").unwrap(), " x");
    assert_eq!(parse_git_file(b"gitdir: \n").unwrap(), "");
    assert!(parse_git_file(b"gitdir:x\n").is_err());
    assert!(parse_git_file(b" gitdir: x\n").is_err());
    assert!(parse_git_file(b"garbage").is_err());
    assert!(parse_git_file(b"").is_err());
    let huge = [b"gitdir: ".as_slice(), &vec![b'a'; 1 << 20]].concat();
    assert!(parse_git_file(&huge).unwrap_err().contains("larger than"));
    assert_eq!(parse_commondir(b"../..\n").unwrap(), "../..");
    assert_eq!(parse_commondir(b"/main/.git\r\n").unwrap(), "/main/.git");
}

#[test]
fn relative_absolute_and_common_directories_resolve() {
    let (_dir, base) = tmp();
    // Bare repository next to the pointer, with a linked worktree elsewhere.
    let bare = base.join(".bare");
    let wt_admin = bare.join("worktrees/wt");
    std::fs::create_dir_all(&wt_admin).unwrap();
    std::fs::write(base.join(".git"), "gitdir: ./.bare\n").unwrap();
    let found = git_metadata(&base.join(".git")).unwrap();
    assert_eq!(found.invalid, None);
    assert_eq!(
        found.protected_paths().collect::<Vec<_>>(),
        vec![bare.as_path()]
    );
    assert_eq!(found.paths[0].role, GitMetadataRole::GitDir);
    assert_eq!(found.paths[0].lexical, base.join("./.bare"));

    std::fs::write(wt_admin.join("commondir"), "../..\n").unwrap();
    let wt = base.join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(
        wt.join(".git"),
        format!("gitdir: {}\r\n", wt_admin.display()),
    )
    .unwrap();
    let found = git_metadata(&wt.join(".git")).unwrap();
    let roles: Vec<_> = found.paths.iter().map(|p| p.role).collect();
    assert_eq!(
        roles,
        vec![GitMetadataRole::GitDir, GitMetadataRole::CommonDir]
    );
    assert_eq!(
        found.protected_paths().collect::<Vec<_>>(),
        vec![wt_admin.as_path(), bare.as_path()]
    );
}

#[test]
fn missing_targets_report_the_first_missing_component() {
    let (_dir, base) = tmp();
    std::fs::write(base.join(".git"), "gitdir: gone/deeper/repo\n").unwrap();
    let found = git_metadata(&base.join(".git")).unwrap();
    assert_eq!(
        found.paths[0].protect,
        ProtectAt::Missing(base.join("gone"))
    );
    // A file on the way must not be replaced by a directory.
    std::fs::write(base.join("gone"), "").unwrap();
    let found = git_metadata(&base.join(".git")).unwrap();
    assert_eq!(
        found.paths[0].protect,
        ProtectAt::Existing(base.join("gone"))
    );
}

#[test]
fn symlinks_are_judged_by_their_target() {
    let (_dir, base) = tmp();
    let real = base.join("real.git");
    std::fs::create_dir_all(real.join("hooks")).unwrap();
    std::os::unix::fs::symlink(&real, base.join("link")).unwrap();
    std::fs::write(base.join(".git"), "gitdir: link\n").unwrap();
    let found = git_metadata(&base.join(".git")).unwrap();
    assert_eq!(found.paths[0].lexical, base.join("link"));
    assert_eq!(found.paths[0].protect, ProtectAt::Existing(real.clone()));

    // A `.git` directory whose config and hooks are symlinks into another repository.
    let other = base.join("other");
    std::fs::create_dir_all(other.join("hooks")).unwrap();
    std::fs::write(other.join("config"), "").unwrap();
    let dot_git = base.join("ws/.git");
    std::fs::create_dir_all(&dot_git).unwrap();
    std::os::unix::fs::symlink(other.join("config"), dot_git.join("config")).unwrap();
    std::os::unix::fs::symlink("../../other/hooks", dot_git.join("hooks")).unwrap();
    let found = git_metadata(&dot_git).unwrap();
    assert_eq!(
        found.protected_paths().collect::<Vec<_>>(),
        vec![
            other.join("config").as_path(),
            other.join("hooks").as_path()
        ]
    );
    assert!(
        found
            .paths
            .iter()
            .all(|p| p.role == GitMetadataRole::LinkedEntry)
    );
}

#[test]
fn garbage_huge_and_missing_entries_protect_nothing_more() {
    let (_dir, base) = tmp();
    let dot_git = base.join(".git");
    assert_eq!(git_metadata(&dot_git).unwrap(), GitMetadata::default());
    std::fs::write(&dot_git, "not a pointer\n").unwrap();
    let found = git_metadata(&dot_git).unwrap();
    assert!(found.paths.is_empty());
    assert!(found.invalid.unwrap().contains("gitdir: "));
    // Bounded read: a 3 MiB file is not read whole and is rejected like git does.
    let big = vec![b'x'; 3 << 20];
    std::fs::write(&dot_git, [b"gitdir: ".as_slice(), &big].concat()).unwrap();
    let found = git_metadata(&dot_git).unwrap();
    assert!(found.paths.is_empty());
    assert!(found.invalid.unwrap().contains("larger than"));
    // A git directory with an oversized commondir is reported, never followed.
    std::fs::remove_file(&dot_git).unwrap();
    std::fs::create_dir(&dot_git).unwrap();
    std::fs::write(dot_git.join("commondir"), &big).unwrap();
    let found = git_metadata(&dot_git).unwrap();
    assert!(found.paths.is_empty() && found.invalid.is_some());
}

#[test]
fn included_configuration_is_followed_transitively_and_bounded() {
    let (_dir, base) = tmp();
    let dot_git = base.join(".git");
    std::fs::create_dir(&dot_git).unwrap();
    std::fs::write(
        dot_git.join("config"),
        "[core]\n\tbare = false\n[include]\n\tpath = ../project.gitconfig\n\
         [includeIf \"onbranch:main\"]\n\tpath = /nonexistent-dir/missing.gitconfig\n",
    )
    .unwrap();
    std::fs::write(
        base.join("project.gitconfig"),
        "[include]\n\tpath = more/deeper.gitconfig\n",
    )
    .unwrap();
    let found = git_metadata(&dot_git).unwrap();
    let protected: Vec<&Path> = found.protected_paths().collect();
    assert_eq!(
        protected,
        vec![
            base.join("project.gitconfig").as_path(),
            Path::new("/nonexistent-dir"),
            base.join("more").as_path(),
        ]
    );
    assert!(
        found
            .paths
            .iter()
            .all(|p| p.role == GitMetadataRole::IncludedConfig)
    );
    assert!(matches!(found.paths[2].protect, ProtectAt::Missing(_)));
    // A file including itself is read a bounded number of times.
    std::fs::write(dot_git.join("config"), "[include]\npath = config\n").unwrap();
    let found = git_metadata(&dot_git).unwrap();
    assert_eq!(
        found.protected_paths().collect::<Vec<_>>(),
        vec![dot_git.join("config").as_path()]
    );
}

#[test]
fn hooks_outside_the_working_tree_and_other_worktrees_are_listed() {
    let (_dir, base) = tmp();
    let dot_git = base.join("ws/.git");
    std::fs::create_dir_all(dot_git.join("worktrees/other")).unwrap();
    std::fs::create_dir_all(dot_git.join("worktrees/relative")).unwrap();
    std::fs::write(
        dot_git.join("config"),
        "[core]\n\thooksPath = .husky/_\n\thooksPath = ../shared-hooks\n",
    )
    .unwrap();
    let other = base.join("elsewhere/other/.git");
    std::fs::write(
        dot_git.join("worktrees/other/gitdir"),
        format!("{}\n", other.display()),
    )
    .unwrap();
    std::fs::write(
        dot_git.join("worktrees/relative/gitdir"),
        "../../../rel/.git\n",
    )
    .unwrap();
    let found = git_metadata(&dot_git).unwrap();
    let mut got: Vec<(GitMetadataRole, PathBuf)> = found
        .paths
        .iter()
        .map(|p| (p.role, p.protect.path().to_path_buf()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (GitMetadataRole::HooksPath, base.join("shared-hooks")),
            (GitMetadataRole::LinkedWorktree, base.join("elsewhere")),
            (GitMetadataRole::LinkedWorktree, base.join("ws/rel")),
        ],
        "`.husky/_` is inside the working tree and stays writable"
    );
}

#[test]
fn enclosing_repositories_are_found_by_walking_up() {
    let (_dir, base) = tmp();
    let ws = base.join("super/a/b/ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(base.join("super/.git")).unwrap();
    std::fs::write(base.join("super/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    // Not a git directory: git walks past it, so the walk does too.
    std::fs::create_dir_all(base.join("super/a/.git")).unwrap();
    let found = enclosing_git_entries(&ws, std::slice::from_ref(&ws));
    assert_eq!(found.missing, Vec::<PathBuf>::new());
    assert_eq!(found.existing, Some(base.join("super/.git")));
    assert_eq!(found.skipped, Vec::<PathBuf>::new());
    let found = enclosing_git_entries(&ws, &[ws.clone(), base.clone()]);
    assert_eq!(found.missing, vec![base.join("super/a/b/.git")]);
    assert_eq!(found.skipped, vec![base.join("super/a/.git")]);
    assert_eq!(found.existing, Some(base.join("super/.git")));
}

#[test]
fn special_files_are_never_read_and_leave_the_entry_protected_as_is() {
    let (_dir, base) = tmp();
    let fifo = |path: &Path| crate::untrusted_file::tests::mkfifo(path);
    // A directory, a FIFO, `/dev/zero` where a commondir file is expected: git cannot
    // use the repository; nothing is followed, nothing blocks.
    let dot_git = base.join(".git");
    std::fs::create_dir_all(dot_git.join("commondir")).unwrap();
    let found = git_metadata(&dot_git).unwrap();
    assert!(found.invalid.unwrap().contains("commondir is a directory"));
    std::fs::remove_dir(dot_git.join("commondir")).unwrap();
    fifo(&dot_git.join("commondir"));
    let found = git_metadata(&dot_git).unwrap();
    assert!(found.paths.is_empty());
    assert!(found.invalid.unwrap().contains("commondir is a FIFO"));
    std::fs::remove_file(dot_git.join("commondir")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dot_git.join("commondir")).unwrap();
    assert!(
        git_metadata(&dot_git)
            .unwrap()
            .invalid
            .unwrap()
            .contains("character device")
    );
    std::fs::remove_file(dot_git.join("commondir")).unwrap();
    // FIFO config and included files: still listed, never read.
    fifo(&dot_git.join("config"));
    assert_eq!(git_metadata(&dot_git).unwrap(), GitMetadata::default());
    std::fs::remove_file(dot_git.join("config")).unwrap();
    std::fs::write(dot_git.join("config"), "[include]\n\tpath = ../inc\n").unwrap();
    fifo(&base.join("inc"));
    let found = git_metadata(&dot_git).unwrap();
    assert_eq!(
        found.protected_paths().collect::<Vec<_>>(),
        vec![base.join("inc").as_path()]
    );
    // A `.git` pointer that is a symlink to /dev/zero is no pointer at all.
    let other = base.join("other");
    std::fs::create_dir(&other).unwrap();
    std::os::unix::fs::symlink("/dev/zero", other.join(".git")).unwrap();
    assert_eq!(
        git_metadata(&other.join(".git")).unwrap(),
        GitMetadata::default()
    );
}

/// Within one resolution memo a `.git` entry is read once (the plan's single view);
/// without one, or in the next memo, every call reads it again.
#[test]
fn a_git_entry_is_read_once_per_plan() {
    let (_dir, base) = tmp();
    std::fs::create_dir_all(base.join("a")).unwrap();
    std::fs::create_dir_all(base.join("b")).unwrap();
    let dot_git = base.join(".git");
    let point = |to: &str| std::fs::write(&dot_git, format!("gitdir: ./{to}\n")).unwrap();
    let git_dir = || {
        git_metadata(&dot_git).unwrap().paths[0]
            .protect
            .path()
            .to_path_buf()
    };
    point("a");
    assert_eq!(git_dir(), base.join("a"));
    point("b");
    assert_eq!(git_dir(), base.join("b"));
    {
        let _memo = crate::resolution_memo::ResolutionMemo::begin();
        assert_eq!(git_dir(), base.join("b"));
        point("a");
        assert_eq!(git_dir(), base.join("b"));
    }
    assert_eq!(git_dir(), base.join("a"));
    let _memo = crate::resolution_memo::ResolutionMemo::begin();
    assert_eq!(git_dir(), base.join("a"));
}
