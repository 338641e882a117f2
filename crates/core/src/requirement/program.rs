//! Which program paths an allow rule may vouch for (spec 03 edge case 18) and which may
//! run outside the sandbox (red-team rule: a program the agent could have written never
//! bypasses the sandbox).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use airlock_execpolicy::{AbsolutePathBuf, Policy, normalize_lexically};
use airlock_permissions::{FileSystemPolicyQueries, ResolveContext};
use airlock_protocol::{FileSystemSandboxKind, FileSystemSandboxPolicy};
use airlock_shell::TRUSTED_PROGRAM_DIRS;

/// Spec 03 edge case 18: an allow rule reached through the host-executable basename
/// fallback applies only when the resolved path is registered with `host_executable` for
/// its basename, or lies directly in one of the trusted directories of edge case 10.
pub(super) fn allow_applies_to_resolved(policy: &Policy, resolved: &AbsolutePathBuf) -> bool {
    let path = resolved.as_path();
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
        return false;
    };
    if policy
        .host_executable(name)
        .is_some_and(|paths| paths.contains(resolved))
    {
        return true;
    }
    path.parent().is_some_and(|dir| {
        TRUSTED_PROGRAM_DIRS
            .iter()
            .any(|trusted| Path::new(trusted) == dir)
    })
}

/// Whether a rule-allowed segment whose program token is `program` may count toward a
/// sandbox bypass (spec README invariant 3, hardened after the red-team review):
/// - a relative path (`./git`, `bin/git`) never does: it names a file in a directory the
///   agent works in;
/// - an absolute path may only when it is outside every writable root of a restricted
///   filesystem policy, compared both as spelled and with symlinks resolved; under an
///   unrestricted or external policy everything counts as writable;
/// - a bare name is looked up through this process's `PATH` as the shell would: the
///   first hit must not come from an empty or relative `PATH` entry nor lie in a writable
///   root (a `PATH` that lists a workspace directory first cannot smuggle in a planted
///   `git`). Not found → may (the command fails either way). Under an unrestricted or
///   external policy a bare name may: there is no sandbox to leave.
///
/// Failing here only withholds the bypass: the command still runs, sandboxed.
pub(super) fn program_may_bypass(
    program: &str,
    cwd: &Path,
    fs_policy: &FileSystemSandboxPolicy,
) -> bool {
    let search_path = std::env::var_os("PATH");
    may_bypass_with_path(program, search_path.as_deref(), cwd, fs_policy)
}

/// [`program_may_bypass`] with an explicit `PATH` value.
fn may_bypass_with_path(
    program: &str,
    search_path: Option<&OsStr>,
    cwd: &Path,
    fs_policy: &FileSystemSandboxPolicy,
) -> bool {
    let restricted = fs_policy.kind == FileSystemSandboxKind::Restricted;
    if !program.contains('/') {
        return !restricted
            || match first_on_path(program, search_path) {
                None => true,
                Some(found) => {
                    found.is_absolute() && outside_writable_roots(&found, cwd, fs_policy)
                }
            };
    }
    let path = Path::new(program);
    path.is_absolute() && restricted && outside_writable_roots(path, cwd, fs_policy)
}

/// The first `PATH` entry holding a file named `program`, joined with it (relative when
/// the entry is empty or relative).
fn first_on_path(program: &str, search_path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(search_path?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Whether `path` (absolute) lies outside every writable root of `fs_policy`.
fn outside_writable_roots(path: &Path, cwd: &Path, fs_policy: &FileSystemSandboxPolicy) -> bool {
    let mut spellings = vec![normalize_lexically(path)];
    if let Ok(real) = std::fs::canonicalize(path) {
        spellings.push(real);
    }
    let roots: Vec<PathBuf> = fs_policy
        .get_writable_roots(&ResolveContext::new(cwd))
        .into_iter()
        .flat_map(|root| {
            let real = std::fs::canonicalize(&root.root).ok();
            std::iter::once(root.root).chain(real)
        })
        .collect();
    !spellings
        .iter()
        .any(|spelling| roots.iter().any(|root| spelling.starts_with(root)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use airlock_execpolicy::PolicyParser;
    use airlock_protocol::{FileSystemAccessMode, FileSystemSandboxEntry, FileSystemSpecialPath};

    fn policy(text: &str) -> Policy {
        let mut parser = PolicyParser::new();
        parser.parse("test.rules", text).unwrap();
        parser.build()
    }

    fn abs(path: &str) -> AbsolutePathBuf {
        AbsolutePathBuf::new(Path::new(path)).unwrap()
    }

    #[test]
    fn resolved_allow_needs_a_registered_or_trusted_path() {
        let policy = policy("host_executable(name=\"git\", paths=[\"/opt/git/bin/git\"])\n");
        assert!(allow_applies_to_resolved(&policy, &abs("/opt/git/bin/git")));
        assert!(allow_applies_to_resolved(&policy, &abs("/usr/bin/git")));
        assert!(allow_applies_to_resolved(
            &policy,
            &abs("/usr/local/bin/ls")
        ));
        assert!(!allow_applies_to_resolved(&policy, &abs("/tmp/git")));
        assert!(!allow_applies_to_resolved(
            &policy,
            &abs("/usr/bin/sub/git")
        ));
        assert!(!allow_applies_to_resolved(
            &policy,
            &abs("/work/project/git")
        ));
    }

    fn restricted_with_write(root: &Path) -> FileSystemSandboxPolicy {
        FileSystemSandboxPolicy::restricted(vec![
            FileSystemSandboxEntry::special(
                FileSystemSpecialPath::Root,
                FileSystemAccessMode::Read,
            ),
            FileSystemSandboxEntry::path(root, FileSystemAccessMode::Write),
        ])
    }

    #[test]
    fn relative_and_writable_programs_never_bypass() {
        let dir = tempfile::tempdir().unwrap();
        let fs = restricted_with_write(dir.path());
        let cwd = dir.path();
        assert!(program_may_bypass("git", cwd, &fs));
        assert!(program_may_bypass("/usr/bin/git", cwd, &fs));
        assert!(!program_may_bypass("./git", cwd, &fs));
        assert!(!program_may_bypass("bin/git", cwd, &fs));
        let planted = dir.path().join("git");
        assert!(!program_may_bypass(planted.to_str().unwrap(), cwd, &fs));
        let dotted = format!("{}/sub/../git", dir.path().display());
        assert!(!program_may_bypass(&dotted, cwd, &fs));
    }

    #[test]
    fn a_bare_name_found_first_in_a_writable_or_relative_path_entry_does_not_bypass() {
        let ws = tempfile::tempdir().unwrap();
        let bin = ws.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("tool"), "").unwrap();
        let system = tempfile::tempdir().unwrap();
        std::fs::write(system.path().join("tool"), "").unwrap();
        let fs = restricted_with_write(ws.path());
        let path = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
        let cwd = ws.path();
        // Planted in the workspace ahead of the real one.
        let planted = path(&[&bin, system.path()]);
        assert!(!may_bypass_with_path("tool", Some(&planted), cwd, &fs));
        // The real one comes first.
        let real = path(&[system.path(), &bin]);
        assert!(may_bypass_with_path("tool", Some(&real), cwd, &fs));
        // A relative entry resolves against whatever the cwd is: it never vouches (the
        // test runs in the crate directory, which holds `Cargo.toml`).
        let relative = path(&[Path::new("."), system.path()]);
        assert!(!may_bypass_with_path(
            "Cargo.toml",
            Some(&relative),
            cwd,
            &fs
        ));
        // Not found at all: the command fails either way.
        assert!(may_bypass_with_path("no-such-tool", Some(&real), cwd, &fs));
        assert!(may_bypass_with_path("tool", None, cwd, &fs));
    }

    #[test]
    fn a_symlink_into_a_writable_root_does_not_bypass() {
        let writable = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let target = writable.path().join("tool");
        std::fs::write(&target, "").unwrap();
        let link = other.path().join("tool");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let fs = restricted_with_write(writable.path());
        assert!(!program_may_bypass(
            link.to_str().unwrap(),
            other.path(),
            &fs
        ));
    }

    #[test]
    fn unrestricted_and_external_policies_count_as_writable_everywhere() {
        let cwd = Path::new("/");
        for fs in [
            FileSystemSandboxPolicy::unrestricted(),
            FileSystemSandboxPolicy::external_sandbox(),
        ] {
            assert!(program_may_bypass("git", cwd, &fs));
            assert!(!program_may_bypass("/usr/bin/git", cwd, &fs));
        }
    }
}
