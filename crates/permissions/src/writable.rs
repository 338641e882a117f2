//! "Could a confined command write here?" for callers outside enforcement: the demo and the
//! tests use it to pick a directory that is really outside every writable root of the profile
//! they run, instead of assuming that some folder (`/tmp`, `target/`) is (issue 17).

use std::path::Path;

use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;

use crate::context::ResolveContext;
use crate::paths::absolutize;
use crate::queries::FileSystemPolicyQueries;
use crate::queries::WritableRoot;
use crate::root_judge::canonical_prefix;

/// Whether a command confined by `policy` (resolved against `ctx`) may write `path` or
/// anything under it. `path` need not exist: its nearest existing ancestor is canonicalised,
/// and so are the writable roots and their read-only subpaths, so a symlinked spelling of a
/// writable root (`/tmp` reached through a link) still counts as writable.
///
/// Fails towards "writable": a non-restricted policy is writable everywhere, and a path that
/// lies inside a writable root counts even when only a subtree of it is read-only, unless the
/// path itself is under one of the root's read-only subpaths.
#[must_use]
pub fn is_writable_under(
    policy: &FileSystemSandboxPolicy,
    path: &Path,
    ctx: &ResolveContext,
) -> bool {
    if policy.kind != FileSystemSandboxKind::Restricted {
        return true;
    }
    let path = canonical_prefix(&absolutize(path, &ctx.cwd));
    policy.get_writable_roots(ctx).iter().any(|root| {
        let canonical = WritableRoot {
            root: canonical_prefix(&root.root),
            read_only_subpaths: root
                .read_only_subpaths
                .iter()
                .map(|sub| canonical_prefix(sub))
                .collect(),
        };
        canonical.is_path_writable(&path)
            || (root.is_path_writable(&path) && !is_read_only_in(&canonical, &path))
    })
}

fn is_read_only_in(root: &WritableRoot, path: &Path) -> bool {
    root.read_only_subpaths
        .iter()
        .any(|sub| path.starts_with(sub))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::builtins::built_in_profile;
    use crate::materialize::materialize_project_roots_with_workspace_roots;
    use crate::runtime::file_system_sandbox_policy;

    fn workspace_policy(ws: &Path) -> FileSystemSandboxPolicy {
        let profile = built_in_profile(":workspace").unwrap();
        file_system_sandbox_policy(&materialize_project_roots_with_workspace_roots(
            &profile,
            &[ws.to_path_buf()],
        ))
    }

    #[test]
    fn workspace_and_slash_tmp_are_writable_the_rest_is_not() {
        let ws = Path::new("/work/some-workspace");
        let ctx = ResolveContext::with_tmpdir(ws, None);
        let policy = workspace_policy(ws);
        assert!(is_writable_under(&policy, &ws.join("a/b"), &ctx));
        assert!(is_writable_under(&policy, Path::new("/tmp/x y/z"), &ctx));
        assert!(!is_writable_under(&policy, &ws.join(".git/hooks"), &ctx));
        assert!(!is_writable_under(&policy, Path::new("/etc/passwd"), &ctx));
        assert!(!is_writable_under(&policy, Path::new("/work"), &ctx));
    }

    #[test]
    fn tmpdir_counts_and_symlinked_spellings_resolve() {
        let base = tempfile::Builder::new()
            .prefix("airlock-writable-")
            .tempdir_in(env!("CARGO_MANIFEST_DIR"))
            .unwrap();
        let real = base.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let ws = Path::new("/work/some-workspace");
        let ctx = ResolveContext::with_tmpdir(ws, Some(link.clone()));
        let policy = workspace_policy(ws);
        assert!(is_writable_under(&policy, &real.join("new/file"), &ctx));
        assert!(is_writable_under(&policy, &link.join("file"), &ctx));
        // A sibling of `$TMPDIR` is not writable through it (unless the checkout itself is
        // under `/tmp`, which `:workspace` makes writable anyway).
        let sibling = base.path().join("other");
        let under_slash_tmp =
            canonical_prefix(&sibling).starts_with(canonical_prefix(Path::new("/tmp")));
        assert_eq!(is_writable_under(&policy, &sibling, &ctx), under_slash_tmp);
    }

    #[test]
    fn unrestricted_policies_are_writable_everywhere() {
        let profile = built_in_profile(":danger-full-access").unwrap();
        let policy = file_system_sandbox_policy(&profile);
        let ctx = ResolveContext::with_tmpdir(Path::new("/"), None);
        assert!(is_writable_under(&policy, Path::new("/etc"), &ctx));
    }
}
